package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// deleteTimeout bounds the wait for deleted components to disappear before new ones replace them.
const deleteTimeout = 2 * time.Minute

// ComponentObjects returns a provider's components in the management cluster: the objects of every kind
// the API server serves that carry the label cluster.x-k8s.io/provider=<label>, namespaced ones from the
// provider's namespace only. Inventory objects and anything labelled clusterctl.cluster.x-k8s.io/core
// (cert-manager, the inventory CRD) are not components.
func (c *Client) ComponentObjects(ctx context.Context, label, namespace string) ([]unstructured.Unstructured, error) {
	objs, err := c.labelledObjects(ctx, map[string]string{clusterv1.ProviderNameLabel: label}, namespace)
	if err != nil {
		return nil, fmt.Errorf("listing the components of %s: %w", label, err)
	}
	out := objs[:0]
	for _, obj := range objs {
		if _, core := obj.GetLabels()[clusterctlv1.ClusterctlCoreLabel]; !core {
			out = append(out, obj)
		}
	}
	return out, nil
}

// labelledObjects returns the objects of every kind the API server serves that match selector: the
// namespaced ones from namespace (every namespace when empty), and the cluster-scoped ones. It lists
// with a dynamic client and the resources discovery returns, so that no REST mapping is needed.
func (c *Client) labelledObjects(ctx context.Context, selector map[string]string, namespace string) ([]unstructured.Unstructured, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	// Listing every kind includes deprecated ones, whose warnings would only confuse.
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	resources, err := c.listableResources()
	if err != nil {
		return nil, err
	}
	resources, err = withoutProviderKinds(ctx, dc, resources, selector)
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()}
	// Kinds are listed a few at a time: the first list of a kind can be slow while the API server
	// prepares to serve it.
	lists := make([][]unstructured.Unstructured, len(resources))
	errs := make([]error, len(resources))
	sem := make(chan struct{}, listConcurrency)
	var wg sync.WaitGroup
	for i, r := range resources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var list *unstructured.UnstructuredList
			var err error
			if r.namespaced && namespace != "" {
				list, err = dc.Resource(r.gvr).Namespace(namespace).List(ctx, opts)
			} else {
				list, err = dc.Resource(r.gvr).List(ctx, opts)
			}
			if err != nil {
				if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
					errs[i] = fmt.Errorf("listing %s objects: %w", r.gvk.Kind, err)
				}
				return
			}
			for _, item := range list.Items {
				item.SetGroupVersionKind(r.gvk)
				lists[i] = append(lists[i], item)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, l := range lists {
		out = append(out, l...)
	}
	return out, nil
}

// listConcurrency is how many kinds labelledObjects lists at the same time.
const listConcurrency = 16

type resource struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
}

// withoutProviderKinds drops from resources the kinds of the providers' CRDs (those labelled
// cluster.x-k8s.io/provider), and when selector picks cert-manager's objects the kinds of every CRD, as
// upstream clusterctl does: their objects are not components (they go with their CRD), and listing them
// could need a conversion webhook of a provider that is not running, such as a Cluster served as v1beta2.
func withoutProviderKinds(ctx context.Context, dc dynamic.Interface, resources []resource, selector map[string]string) ([]resource, error) {
	crds, err := dc.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the CRDs: %w", err)
	}
	certManager := selector[clusterctlv1.ClusterctlCoreLabel] == clusterctlv1.ClusterctlCoreLabelCertManagerValue
	exclude := map[schema.GroupKind]bool{}
	for _, crd := range crds.Items {
		if _, provider := crd.GetLabels()[clusterv1.ProviderNameLabel]; !provider && !certManager {
			continue
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		exclude[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	out := resources[:0]
	for _, r := range resources {
		if !exclude[r.gvk.GroupKind()] {
			out = append(out, r)
		}
	}
	return out, nil
}

// listableResources returns the preferred version of every kind the API server serves that can be
// listed and deleted, events excepted.
func (c *Client) listableResources() ([]resource, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovering the kinds the management cluster serves: %w", err)
	}
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || r.Kind == "Event" || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			out = append(out, resource{gvk: gv.WithKind(r.Kind), gvr: gv.WithResource(r.Name), namespaced: r.Namespaced})
		}
	}
	return out, nil
}

// DeleteComponentsOptions say which components DeleteComponents deletes.
type DeleteComponentsOptions struct {
	// IncludeCRDs deletes the provider's CRDs, and with them every object of their kinds.
	IncludeCRDs bool
	// IncludeNamespace deletes the provider's Namespace, and with it everything in it.
	IncludeNamespace bool
	// Wait waits until the deleted objects are gone (CRDs and the Namespace excepted).
	Wait bool
}

// DeleteComponents deletes a provider's components (see ComponentObjects), keeping its CRDs and its
// Namespace unless asked otherwise: other objects first, then CRDs, then the Namespace. The inventory
// object is not deleted.
func (c *Client) DeleteComponents(ctx context.Context, label, namespace string, o DeleteComponentsOptions) error {
	objs, err := c.ComponentObjects(ctx, label, namespace)
	if err != nil {
		return err
	}
	if err := c.deleteObjects(ctx, objs, o); err != nil {
		return fmt.Errorf("deleting the components of %s: %w", label, err)
	}
	return nil
}

// deleteObjects deletes objs, CRDs and Namespaces only when o says so: other objects first, then CRDs,
// then Namespaces.
func (c *Client) deleteObjects(ctx context.Context, objs []unstructured.Unstructured, o DeleteComponentsOptions) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	var first, crds, namespaces []unstructured.Unstructured
	for _, obj := range objs {
		switch {
		case isCRD(&obj):
			if o.IncludeCRDs {
				crds = append(crds, obj)
			}
		case obj.GetKind() == "Namespace" && obj.GroupVersionKind().Group == "":
			if o.IncludeNamespace {
				namespaces = append(namespaces, obj)
			}
		default:
			first = append(first, obj)
		}
	}
	for _, batch := range [][]unstructured.Unstructured{first, crds, namespaces} {
		for i := range batch {
			obj := &batch[i]
			if err := cl.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s: %w", describe(obj), err)
			}
		}
	}
	if o.Wait {
		return c.waitDeleted(ctx, first)
	}
	return nil
}

// waitDeleted waits until objs are gone.
func (c *Client) waitDeleted(ctx context.Context, objs []unstructured.Unstructured) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	pending := slices.Clone(objs)
	err = c.pollUntil(ctx, deleteTimeout, func(ctx context.Context) (bool, error) {
		var still []unstructured.Unstructured
		for _, obj := range pending {
			got := &metav1.PartialObjectMetadata{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			err := cl.Get(ctx, client.ObjectKeyFromObject(&obj), got)
			switch {
			case apierrors.IsNotFound(err) || isMissingKind(err):
			case err != nil:
				return false, fmt.Errorf("reading %s: %w", describe(&obj), err)
			case got.UID != obj.GetUID():
				// Deleted and created again.
			default:
				still = append(still, obj)
			}
		}
		pending = still
		return len(pending) == 0, nil
	})
	if errors.Is(err, errTimeout) {
		names := make([]string, 0, len(pending))
		for i := range pending {
			names = append(names, describe(&pending[i]))
		}
		return fmt.Errorf("%s still exist %s after being deleted: look at their finalizers", strings.Join(names, ", "), deleteTimeout)
	}
	return err
}

// PruneComponents deletes the components of a provider (see ComponentObjects) that keep does not hold
// (compared by group, kind, namespace and name), keeping its CRDs and Namespaces as an upgrade does, and
// the objects spare (when not nil) says to spare: what a provider's previous rendering had and its new
// one has not. It returns what it deleted.
func (c *Client) PruneComponents(ctx context.Context, label, namespace string, keep []unstructured.Unstructured, spare func(*unstructured.Unstructured) bool) ([]string, error) {
	key := func(o *unstructured.Unstructured) string {
		return o.GroupVersionKind().GroupKind().String() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	wanted := make(map[string]bool, len(keep))
	for i := range keep {
		wanted[key(&keep[i])] = true
	}
	objs, err := c.ComponentObjects(ctx, label, namespace)
	if err != nil {
		return nil, err
	}
	var stale []unstructured.Unstructured
	var names []string
	for i := range objs {
		o := &objs[i]
		if wanted[key(o)] || isCRD(o) || (o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "") ||
			o.GroupVersionKind().Group == clusterctlv1.GroupVersion.Group || (spare != nil && spare(o)) {
			continue
		}
		stale = append(stale, *o)
		names = append(names, describe(o))
	}
	if len(stale) == 0 {
		return nil, nil
	}
	if err := c.deleteObjects(ctx, stale, DeleteComponentsOptions{}); err != nil {
		return nil, fmt.Errorf("deleting what %s no longer has: %w", label, err)
	}
	slices.Sort(names)
	return names, nil
}

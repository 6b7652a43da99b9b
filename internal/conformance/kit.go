package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// kit is the kit's side of the behavioural scenario: a client on the API server, the namespace the
// scenario runs in, the provider running in a goroutine, and the objects the kit created.
type kit struct {
	c      client.Client
	scheme *runtime.Scheme
	cfg    *rest.Config
	p      Provider
	opts   Options
	ns     string

	// byKit holds the UIDs of the objects the kit created; created the objects, in creation order.
	byKit   map[string]bool
	created []client.Object

	// done is closed when the provider's Start returns, with startErr set.
	done     chan struct{}
	startErr error
}

// newKit connects to the API server, makes sure it serves Cluster API's and the provider's CRDs, and
// creates the namespace of the scenario.
func newKit(ctx context.Context, p Provider, opts Options) (*kit, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	c, err := client.New(opts.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	k := &kit{c: c, scheme: scheme, cfg: opts.Config, p: p, opts: opts, byKit: map[string]bool{}}
	if err := k.ensureCRDs(ctx); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "conformance-"}}
	if err := c.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("creating the namespace of the scenario: %w", err)
	}
	k.ns = ns.Name
	opts.Logf("Running the behavioural scenario in namespace %s", k.ns)
	return k, nil
}

// ensureCRDs checks that Cluster API's CRDs are served and installs the provider's CRDs that are not.
func (k *kit) ensureCRDs(ctx context.Context) error {
	for _, kind := range []string{"Cluster", "Machine"} {
		name := contract.CalculateCRDName(clusterv1.GroupVersion.Group, kind)
		if err := k.c.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			return fmt.Errorf("the API server must serve Cluster API's CRDs: getting %s: %w", name, err)
		}
	}
	for _, want := range k.p.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := k.c.Get(ctx, client.ObjectKey{Name: want.Name}, crd)
		if apierrors.IsNotFound(err) {
			k.opts.Logf("Installing CRD %s", want.Name)
			crd = want.DeepCopy()
			crd.ResourceVersion = ""
			err = k.c.Create(ctx, crd)
		}
		if err != nil {
			return fmt.Errorf("installing CRD %s: %w", want.Name, err)
		}
		established, err := k.until(ctx, k.opts.Timeout, func(ctx context.Context) (bool, error) {
			if err := k.c.Get(ctx, client.ObjectKey{Name: want.Name}, crd); err != nil {
				return false, err
			}
			return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
				return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}), nil
		})
		if err != nil || !established {
			return fmt.Errorf("CRD %s is not established: %w", want.Name, errors.Join(err, errors.New("timed out")))
		}
	}
	return nil
}

// startProvider runs the provider's Start in a goroutine; the returned function stops it.
func (k *kit) startProvider(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	k.done = make(chan struct{})
	k.opts.Logf("Starting the provider")
	go func() {
		defer close(k.done)
		defer func() {
			if r := recover(); r != nil {
				k.startErr = fmt.Errorf("panic: %v", r)
			}
		}()
		k.startErr = k.p.Start(ctx, rest.CopyConfig(k.cfg))
	}()
	return func() {
		cancel()
		select {
		case <-k.done:
		case <-time.After(30 * time.Second):
			k.opts.Logf("The provider did not stop within 30s of its context being cancelled")
		}
	}
}

// exited returns an error when the provider's Start has returned.
func (k *kit) exited() error {
	select {
	case <-k.done:
		if k.startErr != nil {
			return fmt.Errorf("its Start returned: %w", k.startErr)
		}
		return errors.New("its Start returned")
	default:
		return nil
	}
}

// until calls cond every Options.Interval until it returns true (true), the timeout passes (false), or
// ctx ends or the provider stops (an error).
func (k *kit) until(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) (bool, error) {
	// cond gets ctx rather than the poll's context: a read must not fail because the poll is about to
	// time out (client-go's rate limiter refuses to wait past a deadline).
	err := wait.PollUntilContextTimeout(ctx, k.opts.Interval, timeout, true, func(context.Context) (bool, error) {
		if k.done != nil {
			if err := k.exited(); err != nil {
				return false, err
			}
		}
		return cond(ctx)
	})
	if err != nil && wait.Interrupted(err) && ctx.Err() == nil {
		return false, nil
	}
	return err == nil, err
}

// sleep waits, watching for the provider stopping.
func (k *kit) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	_, err := k.until(ctx, d, func(context.Context) (bool, error) { return false, nil })
	return err
}

func (k *kit) kindOf(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, k.scheme)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}

// create creates an object in the namespace and remembers it as the kit's.
func (k *kit) create(ctx context.Context, obj client.Object) error {
	obj.SetNamespace(k.ns)
	k.opts.Logf("Creating %s %s/%s", k.kindOf(obj), k.ns, obj.GetName())
	if err := k.c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating %s %s: %w", k.kindOf(obj), obj.GetName(), err)
	}
	k.byKit[string(obj.GetUID())] = true
	k.created = append(k.created, obj)
	return nil
}

// patch applies a change to an object as a merge patch (of the status when status is true).
func (k *kit) patch(ctx context.Context, obj client.Object, status bool, change func()) error {
	before := obj.DeepCopyObject().(client.Object)
	change()
	var err error
	if status {
		err = k.c.Status().Patch(ctx, obj, client.MergeFrom(before))
	} else {
		err = k.c.Patch(ctx, obj, client.MergeFrom(before))
	}
	if err != nil {
		return fmt.Errorf("patching %s %s: %w", k.kindOf(obj), obj.GetName(), err)
	}
	return nil
}

// read returns an object as it is now; nil when it does not exist.
func (k *kit) read(ctx context.Context, like *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(like.GroupVersionKind())
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(like), u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s: %w", like.GetKind(), like.GetName(), err)
	}
	return u, nil
}

// waitProvisioned waits for a provider object to say it is provisioned under a contract; it returns the
// object last read and whether it was.
func (k *kit) waitProvisioned(ctx context.Context, obj *unstructured.Unstructured, c contract.Version) (*unstructured.Unstructured, bool, error) {
	k.opts.Logf("Waiting for %s %s to be provisioned", obj.GetKind(), obj.GetName())
	var last *unstructured.Unstructured
	ok, err := k.until(ctx, k.opts.Timeout, func(ctx context.Context) (bool, error) {
		var err error
		if last, err = k.read(ctx, obj); err != nil || last == nil {
			return false, err
		}
		return contract.Provisioned(last, c)
	})
	return last, ok, err
}

// ownerRef is the owner reference Cluster API's controllers set, pointing at a Cluster or a Machine.
func ownerRef(kind string, owner client.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true),
	}
}

// own does what Cluster API's Cluster and Machine controllers do with the provider objects they reference:
// set an owner reference to the Cluster or Machine and the cluster-name label.
func (k *kit) own(ctx context.Context, obj *unstructured.Unstructured, kind string, owner client.Object, clusterName string) error {
	k.opts.Logf("Setting the %s owner reference on %s %s", kind, obj.GetKind(), obj.GetName())
	return k.patch(ctx, obj, false, func() {
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), ownerRef(kind, owner)))
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[clusterv1.ClusterNameLabel] = clusterName
		obj.SetLabels(labels)
	})
}

// objects lists every object in the namespace, but for the ones Kubernetes creates by itself (events,
// the default ServiceAccount and its token, the root CA ConfigMap).
func (k *kit) objects(ctx context.Context) ([]object, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(k.cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(k.cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovering the API server's resources: %w", err)
	}
	// The lists run in parallel: an API server that has not served a custom resource yet takes about a
	// second to start serving it.
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		out  []object
		slot = make(chan struct{}, 16)
	)
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") || res.Kind == "Event" {
				continue
			}
			wg.Go(func() {
				slot <- struct{}{}
				defer func() { <-slot }()
				gvr := gv.WithResource(res.Name)
				list, err := mc.Resource(gvr).Namespace(k.ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					k.opts.Logf("Listing %s in %s: %v", gvr, k.ns, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, item := range list.Items {
					if kubernetesOwn(res.Kind, &item) {
						continue
					}
					o := object{apiVersion: gv.String(), kind: res.Kind, name: item.Name, uid: string(item.UID),
						labels: item.Labels, byKit: k.byKit[string(item.UID)]}
					for _, ref := range item.OwnerReferences {
						o.owners = append(o.owners, owner{apiVersion: ref.APIVersion, kind: ref.Kind, name: ref.Name, uid: string(ref.UID)})
					}
					out = append(out, o)
				}
			})
		}
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b object) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// kubernetesOwn says whether Kubernetes itself creates an object in every namespace.
func kubernetesOwn(kind string, obj *metav1.PartialObjectMetadata) bool {
	switch kind {
	case "ServiceAccount":
		return obj.Name == "default"
	case "ConfigMap":
		return obj.Name == "kube-root-ca.crt"
	case "Secret":
		_, ok := obj.Annotations[corev1.ServiceAccountNameKey]
		return ok
	}
	return false
}

// cleanup deletes what the kit created, provider objects first so the provider (still running) can
// remove its finalizers; finalizers still there after Options.Timeout are removed by force.
func (k *kit) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Timeout+30*time.Second)
	defer cancel()
	var provider, core []client.Object
	for _, obj := range slices.Backward(k.created) {
		if _, ok := obj.(*unstructured.Unstructured); ok {
			provider = append(provider, obj)
		} else {
			core = append(core, obj)
		}
	}
	k.opts.Logf("Cleaning up namespace %s", k.ns)
	for _, obj := range provider {
		if err := k.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			k.opts.Logf("Deleting %s %s: %v", k.kindOf(obj), obj.GetName(), err)
		}
	}
	_, _ = k.until(ctx, k.opts.Timeout, func(ctx context.Context) (bool, error) {
		for _, obj := range provider {
			if u, err := k.read(ctx, obj.(*unstructured.Unstructured)); err != nil || u != nil {
				return false, nil
			}
		}
		return true, nil
	})
	for _, obj := range provider {
		u, err := k.read(ctx, obj.(*unstructured.Unstructured))
		if err != nil || u == nil || len(u.GetFinalizers()) == 0 {
			continue
		}
		k.opts.Logf("Removing the finalizers %v of %s %s by force", u.GetFinalizers(), u.GetKind(), u.GetName())
		if err := k.patch(ctx, u, false, func() { u.SetFinalizers(nil) }); err != nil {
			k.opts.Logf("%v", err)
		}
	}
	for _, obj := range core {
		if err := k.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			k.opts.Logf("Deleting %s %s: %v", k.kindOf(obj), obj.GetName(), err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}
	if err := k.c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		k.opts.Logf("Deleting namespace %s: %v", k.ns, err)
	}
}

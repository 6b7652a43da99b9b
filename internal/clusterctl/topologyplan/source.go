package topologyplan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// FieldManager is the field manager of the topology controller's applies, which the online plan
// dry-runs as.
const FieldManager = "capi-topology"

var (
	clusterGK      = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}
	clusterClassGK = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "ClusterClass"}
	mdGK           = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "MachineDeployment"}
)

// source finds objects in the input first and, online, in the management cluster. index holds the
// input's objects, and what was read from the cluster (nil for what it does not have).
type source struct {
	index  map[key]*unstructured.Unstructured
	client client.Client
	// stored says which objects of index were read from the management cluster.
	stored map[key]bool
}

func (s *source) orCluster() string {
	if s.client != nil {
		return " nor in the management cluster"
	}
	return ""
}

// lookup returns the object ref names (in namespace when ref has none), nil when there is none.
func (s *source) lookup(ctx context.Context, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	k := key{schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind(), ns, ref.Name}
	if u, ok := s.index[k]; ok || s.client == nil {
		return u, nil
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, u)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		u = nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s from the management cluster: %w", ref.Kind, ns, ref.Name, err)
	}
	s.remember(k, u)
	return u, nil
}

func (s *source) remember(k key, u *unstructured.Unstructured) {
	s.index[k] = u
	if u != nil {
		if s.stored == nil {
			s.stored = map[key]bool{}
		}
		s.stored[k] = true
	}
}

// applyOverStored turns each Cluster of the input that exists in the management cluster into the stored
// Cluster with the input merged over it (a JSON merge patch, as upstream's plan does): its uid, references
// and status come from the cluster, what the input says wins.
func (s *source) applyOverStored(ctx context.Context, clusters []*unstructured.Unstructured) error {
	for _, u := range clusters {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(u.GroupVersionKind())
		err := s.client.Get(ctx, client.ObjectKeyFromObject(u), stored)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading Cluster %s/%s from the management cluster: %w", u.GetNamespace(), u.GetName(), err)
		}
		original, err := json.Marshal(stored.Object)
		if err != nil {
			return err
		}
		modified, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		merged, err := jsonpatch.MergePatch(original, modified)
		if err != nil {
			return fmt.Errorf("applying the input's Cluster %s/%s over the stored one: %w", u.GetNamespace(), u.GetName(), err)
		}
		obj := map[string]any{}
		if err := json.Unmarshal(merged, &obj); err != nil {
			return err
		}
		u.Object = obj
	}
	return nil
}

// clustersUsing returns the Clusters of the management cluster, not in the input, whose ClusterClass is in
// the input or references a template of the input.
func (s *source) clustersUsing(ctx context.Context, objs []unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	classes := map[key]bool{}
	templates := map[key]bool{}
	for i := range objs {
		k := keyOf(&objs[i], "")
		switch k.gk {
		case clusterClassGK:
			classes[k] = true
		case clusterGK:
		default:
			templates[k] = true
		}
	}
	if len(templates) > 0 {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClassList"))
		if err := s.client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing the ClusterClasses of the management cluster: %w", err)
		}
		for i := range list.Items {
			cc := &clusterv1.ClusterClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, cc); err != nil {
				continue
			}
			for _, ref := range classRefs(cc) {
				gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
				ns := ref.Namespace
				if ns == "" {
					ns = cc.Namespace
				}
				if templates[key{gk, ns, ref.Name}] {
					classes[key{clusterClassGK, cc.Namespace, cc.Name}] = true
				}
			}
		}
	}
	if len(classes) == 0 {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterList"))
	if err := s.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the Clusters of the management cluster: %w", err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		u := &list.Items[i]
		k := keyOf(u, "")
		if _, inInput := s.index[k]; inInput {
			continue
		}
		c := &clusterv1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil || c.Spec.Topology == nil {
			continue
		}
		ns, name := c.GetClassKey()
		if classes[key{clusterClassGK, ns, name}] {
			s.remember(k, u)
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	return out, nil
}

// classRefs are the template references of a ClusterClass.
func classRefs(cc *clusterv1.ClusterClass) []*corev1.ObjectReference {
	refs := []*corev1.ObjectReference{cc.Spec.Infrastructure.Ref, cc.Spec.ControlPlane.Ref}
	if mi := cc.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		refs = append(refs, mi.Ref)
	}
	for _, md := range cc.Spec.Workers.MachineDeployments {
		refs = append(refs, md.Template.Bootstrap.Ref, md.Template.Infrastructure.Ref)
	}
	return slices.DeleteFunc(refs, func(r *corev1.ObjectReference) bool { return r == nil })
}

// listMachineDeployments adds the Cluster's MachineDeployments of the management cluster to the index
// (the input's win).
func (s *source) listMachineDeployments(ctx context.Context, c *clusterv1.Cluster) error {
	if s.client == nil {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineDeploymentList"))
	if err := s.client.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: c.Name}); err != nil {
		return fmt.Errorf("listing the MachineDeployments of Cluster %s/%s: %w", c.Namespace, c.Name, err)
	}
	for i := range list.Items {
		u := &list.Items[i]
		k := keyOf(u, "")
		if _, ok := s.index[k]; !ok {
			s.remember(k, u)
		}
	}
	return nil
}

// diff is the difference desired makes to current, "" when none. For an object read from the management
// cluster it is found as the topology controller finds it: a dry-run server-side apply as its field
// manager, compared with the stored object (managedFields aside).
func (s *source) diff(ctx context.Context, current, desired *unstructured.Unstructured) (string, error) {
	if s.client == nil || !s.stored[keyOf(current, "")] {
		return objectDiff(current, desired), nil
	}
	dry := desired.DeepCopy()
	if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
		return "", fmt.Errorf("dry-run applying %s %s/%s on the management cluster: %w", desired.GetKind(), desired.GetNamespace(), desired.GetName(), err)
	}
	c := current.DeepCopy()
	for _, u := range []*unstructured.Unstructured{c, dry} {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	if equality.Semantic.DeepEqual(c.Object, dry.Object) {
		return "", nil
	}
	return cmp.Diff(c.Object, dry.Object), nil
}

package tree

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
)

// clusterResourceSetBindingGVK is the binding that lists the ClusterResourceSets applied to a Cluster; it
// has the Cluster's name.
var clusterResourceSetBindingGVK = schema.GroupVersionKind{Group: "addons.cluster.x-k8s.io", Version: "v1beta1", Kind: "ClusterResourceSetBinding"}

// DiscoverOptions say which optional objects Discover reads.
type DiscoverOptions struct {
	// ClusterResourceSets reads the Cluster's ClusterResourceSetBinding.
	ClusterResourceSets bool
}

// Discover reads the objects of the Cluster namespace/name. Every object is read as unstructured, so
// that c needs no scheme for Cluster API types. A provider object that is missing, or whose kind is not
// served, is left out rather than failing: the tree shows what there is. The error of a missing Cluster
// satisfies apierrors.IsNotFound.
func Discover(ctx context.Context, c client.Reader, namespace, name string, o DiscoverOptions) (*Objects, error) {
	cluster := &clusterv1.Cluster{}
	if err := getTyped(ctx, c, clusterv1.GroupVersion.WithKind("Cluster"), client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", namespace, name, err)
	}
	objs := &Objects{Cluster: cluster}

	var err error
	if objs.Infrastructure, err = getReferenced(ctx, c, cluster.Spec.InfrastructureRef, namespace); err != nil {
		return nil, err
	}
	if objs.ControlPlane, err = getReferenced(ctx, c, cluster.Spec.ControlPlaneRef, namespace); err != nil {
		return nil, err
	}
	if objs.ControlPlane != nil {
		objs.ControlPlaneContract = controlPlaneContract(ctx, c, objs.ControlPlane)
	}

	mds, err := listTyped[clusterv1.MachineDeployment](ctx, c, "MachineDeployment", namespace)
	if err != nil {
		return nil, err
	}
	for _, md := range mds {
		if md.Spec.ClusterName == name {
			objs.MachineDeployments = append(objs.MachineDeployments, md)
		}
	}
	sets, err := listTyped[clusterv1.MachineSet](ctx, c, "MachineSet", namespace)
	if err != nil {
		return nil, err
	}
	for _, ms := range sets {
		if ms.Spec.ClusterName == name {
			objs.MachineSets = append(objs.MachineSets, ms)
		}
	}
	if err := discoverMachinePools(ctx, c, namespace, name, objs); err != nil {
		return nil, err
	}
	machines, err := listTyped[clusterv1.Machine](ctx, c, "Machine", namespace)
	if err != nil {
		return nil, err
	}
	var infraRefs, bootstrapRefs []*corev1.ObjectReference
	for i := range machines {
		m := &machines[i]
		if m.Spec.ClusterName != name {
			continue
		}
		objs.Machines = append(objs.Machines, *m)
		infraRefs = append(infraRefs, &m.Spec.InfrastructureRef)
		bootstrapRefs = append(bootstrapRefs, m.Spec.Bootstrap.ConfigRef)
	}
	infra, err := listReferenced(ctx, c, namespace, infraRefs)
	if err != nil {
		return nil, err
	}
	bootstrap, err := listReferenced(ctx, c, namespace, bootstrapRefs)
	if err != nil {
		return nil, err
	}
	objs.MachineInfrastructure = map[string]*unstructured.Unstructured{}
	objs.BootstrapConfigs = map[string]*unstructured.Unstructured{}
	for i, m := range objs.Machines {
		if u := infra[i]; u != nil {
			objs.MachineInfrastructure[m.Name] = u
		}
		if u := bootstrap[i]; u != nil {
			objs.BootstrapConfigs[m.Name] = u
		}
	}

	if o.ClusterResourceSets {
		if objs.ClusterResourceSets, err = clusterResourceSets(ctx, c, namespace, name); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// discoverMachinePools reads the Cluster's MachinePools (none when the kind is not served) and their
// bootstrap configs and InfraMachinePools.
func discoverMachinePools(ctx context.Context, c client.Reader, namespace, name string, objs *Objects) error {
	pools, err := listTyped[clusterv1.MachinePool](ctx, c, "MachinePool", namespace)
	if err != nil {
		return err
	}
	var infraRefs, bootstrapRefs []*corev1.ObjectReference
	for i := range pools {
		if pools[i].Spec.ClusterName != name {
			continue
		}
		objs.MachinePools = append(objs.MachinePools, pools[i])
		mp := &objs.MachinePools[len(objs.MachinePools)-1]
		infraRefs = append(infraRefs, &mp.Spec.Template.Spec.InfrastructureRef)
		bootstrapRefs = append(bootstrapRefs, mp.Spec.Template.Spec.Bootstrap.ConfigRef)
	}
	infra, err := listReferenced(ctx, c, namespace, infraRefs)
	if err != nil {
		return err
	}
	bootstrap, err := listReferenced(ctx, c, namespace, bootstrapRefs)
	if err != nil {
		return err
	}
	objs.MachinePoolInfrastructure = map[string]*unstructured.Unstructured{}
	objs.MachinePoolBootstrap = map[string]*unstructured.Unstructured{}
	for i, mp := range objs.MachinePools {
		if infra[i] != nil {
			objs.MachinePoolInfrastructure[mp.Name] = infra[i]
		}
		if bootstrap[i] != nil {
			objs.MachinePoolBootstrap[mp.Name] = bootstrap[i]
		}
	}
	return nil
}

// getReferenced reads the object a reference points at; nil when there is no reference, no object, or
// its kind is not served.
func getReferenced(ctx context.Context, c client.Reader, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	u, err := external.Get(ctx, c, ref, namespace)
	if isMissing(err) {
		return nil, nil
	}
	return u, err
}

// listReferenced reads the objects that refs point at, with one list per kind; the result has the
// order of refs, with nil for a nil reference or a missing object.
func listReferenced(ctx context.Context, c client.Reader, namespace string, refs []*corev1.ObjectReference) ([]*unstructured.Unstructured, error) {
	byKind := map[schema.GroupVersionKind]map[string]*unstructured.Unstructured{}
	out := make([]*unstructured.Unstructured, len(refs))
	for i, ref := range refs {
		if ref == nil || ref.Name == "" {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		objs, ok := byKind[gvk]
		if !ok {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			err := c.List(ctx, list, client.InNamespace(namespace))
			if err != nil && !isMissing(err) {
				return nil, fmt.Errorf("listing %s in namespace %s: %w", gvk.Kind, namespace, err)
			}
			objs = map[string]*unstructured.Unstructured{}
			for j := range list.Items {
				objs[list.Items[j].GetName()] = &list.Items[j]
			}
			byKind[gvk] = objs
		}
		out[i] = objs[ref.Name]
	}
	return out, nil
}

// controlPlaneContract returns the contract the control plane's CRD declares; when the CRD cannot be read,
// the contract whose counters the object reports.
func controlPlaneContract(ctx context.Context, c client.Reader, cp *unstructured.Unstructured) contract.Version {
	info, err := (&contract.Resolver{Client: c}).Resolve(ctx, cp.GroupVersionKind().GroupKind())
	if err == nil {
		return info.Contract
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(cp.Object, "status", "v1beta2"); found {
		return contract.V1Beta1
	}
	return contract.V1Beta2
}

// clusterResourceSets returns the names of the ClusterResourceSets bound to a Cluster; nil when it has no
// binding.
func clusterResourceSets(ctx context.Context, c client.Reader, namespace, name string) ([]string, error) {
	binding := &unstructured.Unstructured{}
	binding.SetGroupVersionKind(clusterResourceSetBindingGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, binding); err != nil {
		if isMissing(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClusterResourceSetBinding %s/%s: %w", namespace, name, err)
	}
	bindings, _, _ := unstructured.NestedSlice(binding.Object, "spec", "bindings")
	names := []string{}
	for _, b := range bindings {
		if m, ok := b.(map[string]any); ok {
			if n, ok := m["clusterResourceSetName"].(string); ok && n != "" {
				names = append(names, n)
			}
		}
	}
	return names, nil
}

// getTyped reads an object as unstructured and converts it to into.
func getTyped(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey, into any) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// listTyped lists the Cluster API objects of a kind in a namespace; none when the kind is not served.
func listTyped[T any](ctx context.Context, c client.Reader, kind, namespace string) ([]T, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if isMissing(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %ss in namespace %s: %w", kind, namespace, err)
	}
	out := make([]T, len(list.Items))
	for i := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &out[i]); err != nil {
			return nil, fmt.Errorf("reading %s %s/%s: %w", kind, namespace, list.Items[i].GetName(), err)
		}
	}
	return out, nil
}

// isMissing reports whether err says that an object does not exist or that its kind is not served.
func isMissing(err error) bool {
	if err == nil {
		return false
	}
	var noKind *meta.NoKindMatchError
	return apierrors.IsNotFound(err) || errors.As(err, &noKind) || meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err)
}

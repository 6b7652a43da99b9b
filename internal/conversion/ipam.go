package conversion

import (
	"context"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
)

// clusterNameLabelSetAnnotation marks a v1alpha1 IPAddressClaim whose cluster.x-k8s.io/cluster-name label
// was added by the conversion from spec.clusterName ("false": the object had no such label), so that the
// conversion back removes it. Upstream's name.
const clusterNameLabelSetAnnotation = "conversion.cluster.x-k8s.io/cluster-name-label-set"

// IPAM returns the conversions of the ipam.cluster.x-k8s.io kinds: v1alpha1 ⇄ v1beta1 (the storage version).
func IPAM() Kinds {
	return Kinds{
		{GroupKind: ipamv1.GroupVersion.WithKind("IPAddress").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&ipamv1.IPAddress{},
			crconversion.NewSpokeConverter(&ipamv1alpha1.IPAddress{}, ipAddressToV1alpha1, ipAddressFromV1alpha1))},
		{GroupKind: ipamv1.GroupVersion.WithKind("IPAddressClaim").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&ipamv1.IPAddressClaim{},
			crconversion.NewSpokeConverter(&ipamv1alpha1.IPAddressClaim{}, ipAddressClaimToV1alpha1, ipAddressClaimFromV1alpha1))},
	}
}

// The two versions of IPAddress have the same fields.

func ipAddressToV1alpha1(_ context.Context, src *ipamv1.IPAddress, dst *ipamv1alpha1.IPAddress) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ipamv1alpha1.IPAddressSpec{ClaimRef: src.Spec.ClaimRef, PoolRef: *src.Spec.PoolRef.DeepCopy(),
		Address: src.Spec.Address, Prefix: src.Spec.Prefix, Gateway: src.Spec.Gateway}
	return nil
}

func ipAddressFromV1alpha1(_ context.Context, src *ipamv1alpha1.IPAddress, dst *ipamv1.IPAddress) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ipamv1.IPAddressSpec{ClaimRef: src.Spec.ClaimRef, PoolRef: *src.Spec.PoolRef.DeepCopy(),
		Address: src.Spec.Address, Prefix: src.Spec.Prefix, Gateway: src.Spec.Gateway}
	return nil
}

// ipAddressClaimToV1alpha1 writes spec.clusterName as the cluster-name label (v1alpha1's way of naming the
// claim's Cluster) and keeps the v1beta1 object in DataAnnotation for status.v1beta2.
func ipAddressClaimToV1alpha1(_ context.Context, src *ipamv1.IPAddressClaim, dst *ipamv1alpha1.IPAddressClaim) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ipamv1alpha1.IPAddressClaimSpec{PoolRef: *src.Spec.PoolRef.DeepCopy()}
	dst.Status = ipamv1alpha1.IPAddressClaimStatus{AddressRef: src.Status.AddressRef, Conditions: src.Status.Conditions.DeepCopy()}
	setClusterNameLabel(dst, src.Spec.ClusterName)
	return MarshalData(src, dst)
}

// ipAddressClaimFromV1alpha1 reads spec.clusterName from the cluster-name label, removes the label if the
// conversion to v1alpha1 added it, and restores status.v1beta2 from DataAnnotation.
func ipAddressClaimFromV1alpha1(_ context.Context, src *ipamv1alpha1.IPAddressClaim, dst *ipamv1.IPAddressClaim) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ipamv1.IPAddressClaimSpec{PoolRef: *src.Spec.PoolRef.DeepCopy(), ClusterName: takeClusterNameLabel(dst)}
	dst.Status = ipamv1.IPAddressClaimStatus{AddressRef: src.Status.AddressRef, Conditions: src.Status.Conditions.DeepCopy()}
	restored := &ipamv1.IPAddressClaim{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil || !ok {
		return err
	}
	dst.Status.V1Beta2 = restored.Status.V1Beta2
	return nil
}

// setClusterNameLabel names an IPAddressClaim's Cluster the v1alpha1 way, with the cluster-name label, on obj,
// the claim converted to v1alpha1. A label the claim did not have is marked with
// clusterNameLabelSetAnnotation, so that takeClusterNameLabel removes it on the way back.
func setClusterNameLabel(obj metav1.Object, clusterName string) {
	if clusterName == "" {
		return
	}
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	if _, ok := labels[clusterv1.ClusterNameLabel]; !ok {
		annotations := maps.Clone(obj.GetAnnotations())
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[clusterNameLabelSetAnnotation] = "false"
		obj.SetAnnotations(annotations)
	}
	labels[clusterv1.ClusterNameLabel] = clusterName
	obj.SetLabels(labels)
}

// takeClusterNameLabel returns the Cluster a v1alpha1 IPAddressClaim names with its cluster-name label
// (spec.clusterName in the newer versions); obj is the claim converted from v1alpha1, whose label and
// marker setClusterNameLabel added are removed.
func takeClusterNameLabel(obj metav1.Object) string {
	clusterName := obj.GetLabels()[clusterv1.ClusterNameLabel]
	set, ok := obj.GetAnnotations()[clusterNameLabelSetAnnotation]
	if !ok {
		return clusterName
	}
	if set == "false" {
		obj.SetLabels(without(obj.GetLabels(), clusterv1.ClusterNameLabel))
	}
	obj.SetAnnotations(without(obj.GetAnnotations(), clusterNameLabelSetAnnotation))
	return clusterName
}

// without returns a copy of m without key, nil when empty (as the object had no such map).
func without(m map[string]string, key string) map[string]string {
	m = maps.Clone(m)
	delete(m, key)
	if len(m) == 0 {
		return nil
	}
	return m
}

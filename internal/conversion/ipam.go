package conversion

import (
	"context"
	"maps"

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
	if src.Spec.ClusterName != "" {
		if _, ok := dst.Labels[clusterv1.ClusterNameLabel]; !ok {
			if dst.Annotations == nil {
				dst.Annotations = map[string]string{}
			}
			dst.Annotations[clusterNameLabelSetAnnotation] = "false"
		}
		if dst.Labels == nil {
			dst.Labels = map[string]string{}
		}
		dst.Labels[clusterv1.ClusterNameLabel] = src.Spec.ClusterName
	}
	return MarshalData(src, dst)
}

// ipAddressClaimFromV1alpha1 reads spec.clusterName from the cluster-name label, removes the label if the
// conversion to v1alpha1 added it, and restores status.v1beta2 from DataAnnotation.
func ipAddressClaimFromV1alpha1(_ context.Context, src *ipamv1alpha1.IPAddressClaim, dst *ipamv1.IPAddressClaim) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ipamv1.IPAddressClaimSpec{PoolRef: *src.Spec.PoolRef.DeepCopy(), ClusterName: src.Labels[clusterv1.ClusterNameLabel]}
	dst.Status = ipamv1.IPAddressClaimStatus{AddressRef: src.Status.AddressRef, Conditions: src.Status.Conditions.DeepCopy()}
	if set, ok := dst.Annotations[clusterNameLabelSetAnnotation]; ok {
		if set == "false" {
			dst.Labels = maps.Clone(dst.Labels)
			delete(dst.Labels, clusterv1.ClusterNameLabel)
		}
		delete(dst.Annotations, clusterNameLabelSetAnnotation)
	}
	restored := &ipamv1.IPAddressClaim{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil || !ok {
		return err
	}
	dst.Status.V1Beta2 = restored.Status.V1Beta2
	return nil
}

package conversion

import (
	"context"

	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	ipamv1alpha1 "github.com/capstan-dev/capstan/api/ipam/v1alpha1"
	ipamv1beta1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
)

// IPAMV1beta2 returns the conversions of the ipam.cluster.x-k8s.io kinds once v1beta2 is their storage
// version: v1alpha1 ⇄ v1beta2 and v1beta1 ⇄ v1beta2. It replaces IPAM when the group serves v1beta2. Every
// version of IPAddress has the same fields, and v1beta1's IPAddressClaim has v1beta2's: the generated
// conversions are all there is but for v1alpha1's IPAddressClaim.
func IPAMV1beta2() Kinds {
	return Kinds{
		{GroupKind: ipamv1beta2.GroupVersion.WithKind("IPAddress").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&ipamv1beta2.IPAddress{},
			crconversion.NewSpokeConverter(&ipamv1alpha1.IPAddress{},
				generated(ipamv1alpha1.Convert_v1beta2_IPAddress_To_v1alpha1_IPAddress),
				generated(ipamv1alpha1.Convert_v1alpha1_IPAddress_To_v1beta2_IPAddress)),
			crconversion.NewSpokeConverter(&ipamv1beta1.IPAddress{},
				generated(ipamv1beta1.Convert_v1beta2_IPAddress_To_v1beta1_IPAddress),
				generated(ipamv1beta1.Convert_v1beta1_IPAddress_To_v1beta2_IPAddress)))},
		{GroupKind: ipamv1beta2.GroupVersion.WithKind("IPAddressClaim").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&ipamv1beta2.IPAddressClaim{},
			crconversion.NewSpokeConverter(&ipamv1alpha1.IPAddressClaim{}, ipAddressClaimV1beta2ToV1alpha1, ipAddressClaimV1alpha1ToV1beta2),
			crconversion.NewSpokeConverter(&ipamv1beta1.IPAddressClaim{},
				generated(ipamv1beta1.Convert_v1beta2_IPAddressClaim_To_v1beta1_IPAddressClaim),
				generated(ipamv1beta1.Convert_v1beta1_IPAddressClaim_To_v1beta2_IPAddressClaim)))},
	}
}

// ipAddressClaimV1beta2ToV1alpha1 writes spec.clusterName as the cluster-name label and keeps the v1beta2
// object in DataAnnotation for status.conditions, as ipAddressClaimToV1alpha1 does from v1beta1.
func ipAddressClaimV1beta2ToV1alpha1(_ context.Context, src *ipamv1beta2.IPAddressClaim, dst *ipamv1alpha1.IPAddressClaim) error {
	if err := ipamv1alpha1.Convert_v1beta2_IPAddressClaim_To_v1alpha1_IPAddressClaim(src, dst, nil); err != nil {
		return err
	}
	setClusterNameLabel(dst, src.Spec.ClusterName)
	return MarshalData(src, dst)
}

// ipAddressClaimV1alpha1ToV1beta2 reads spec.clusterName from the cluster-name label and restores
// status.conditions from DataAnnotation.
func ipAddressClaimV1alpha1ToV1beta2(_ context.Context, src *ipamv1alpha1.IPAddressClaim, dst *ipamv1beta2.IPAddressClaim) error {
	if err := ipamv1alpha1.Convert_v1alpha1_IPAddressClaim_To_v1beta2_IPAddressClaim(src, dst, nil); err != nil {
		return err
	}
	dst.Spec.ClusterName = takeClusterNameLabel(dst)
	restored := &ipamv1beta2.IPAddressClaim{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil || !ok {
		return err
	}
	dst.Status.Conditions = restored.Status.Conditions
	return nil
}

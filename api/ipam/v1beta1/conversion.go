package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
)

// The conversions to and from v1beta2 that conversion-gen cannot write (zz_generated.conversion.go has the
// rest): field mappings alone; internal/conversion converts whole objects with them. Every v1beta2 field has
// a v1beta1 place, so nothing needs the conversion-data annotation. The reference conversions serve
// v1alpha1's generated conversions too (conversion-gen finds them here when it generates both packages).

// Convert_v1beta1_IPAddressSpec_To_v1beta2_IPAddressSpec converts prefix, an int in v1beta1 and an *int32 in
// v1beta2 (the schema bounds it to 0-128).
func Convert_v1beta1_IPAddressSpec_To_v1beta2_IPAddressSpec(in *IPAddressSpec, out *ipamv1beta2.IPAddressSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_IPAddressSpec_To_v1beta2_IPAddressSpec(in, out, s); err != nil {
		return err
	}
	prefix := int32(in.Prefix) //nolint:gosec // the schema bounds prefix to 0-128
	out.Prefix = &prefix
	return nil
}

// Convert_v1beta2_IPAddressSpec_To_v1beta1_IPAddressSpec converts prefix back (v1beta2 requires it: unset
// is 0).
func Convert_v1beta2_IPAddressSpec_To_v1beta1_IPAddressSpec(in *ipamv1beta2.IPAddressSpec, out *IPAddressSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_IPAddressSpec_To_v1beta1_IPAddressSpec(in, out, s); err != nil {
		return err
	}
	out.Prefix = 0
	if in.Prefix != nil {
		out.Prefix = int(*in.Prefix)
	}
	return nil
}

// Convert_v1beta1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus moves the conditions:
// status.conditions to status.deprecated.v1beta1.conditions, status.v1beta2.conditions to status.conditions.
func Convert_v1beta1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus(in *IPAddressClaimStatus, out *ipamv1beta2.IPAddressClaimStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	out.Deprecated = nil
	if in.Conditions != nil {
		out.Deprecated = &ipamv1beta2.IPAddressClaimDeprecatedStatus{V1Beta1: &ipamv1beta2.IPAddressClaimV1Beta1DeprecatedStatus{}}
		clusterv1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_IPAddressClaimStatus_To_v1beta1_IPAddressClaimStatus moves the conditions back:
// status.deprecated.v1beta1.conditions to status.conditions, status.conditions to status.v1beta2.conditions.
func Convert_v1beta2_IPAddressClaimStatus_To_v1beta1_IPAddressClaimStatus(in *ipamv1beta2.IPAddressClaimStatus, out *IPAddressClaimStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_IPAddressClaimStatus_To_v1beta1_IPAddressClaimStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		clusterv1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	out.V1Beta2 = nil
	if in.Conditions != nil {
		out.V1Beta2 = &IPAddressClaimV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// Convert_v1_TypedLocalObjectReference_To_v1beta2_IPPoolReference converts the pool reference; v1beta2's
// apiGroup is a string.
func Convert_v1_TypedLocalObjectReference_To_v1beta2_IPPoolReference(in *corev1.TypedLocalObjectReference, out *ipamv1beta2.IPPoolReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	*out = ipamv1beta2.IPPoolReference{Kind: in.Kind, Name: in.Name}
	if in.APIGroup != nil {
		out.APIGroup = *in.APIGroup
	}
	return nil
}

// Convert_v1beta2_IPPoolReference_To_v1_TypedLocalObjectReference converts the pool reference back, always
// with an apiGroup: v1beta1 and v1alpha1 require one (a CEL rule), even empty.
func Convert_v1beta2_IPPoolReference_To_v1_TypedLocalObjectReference(in *ipamv1beta2.IPPoolReference, out *corev1.TypedLocalObjectReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	group := in.APIGroup
	*out = corev1.TypedLocalObjectReference{APIGroup: &group, Kind: in.Kind, Name: in.Name}
	return nil
}

// Convert_v1_LocalObjectReference_To_v1beta2_IPAddressClaimReference converts an IPAddress's claimRef.
func Convert_v1_LocalObjectReference_To_v1beta2_IPAddressClaimReference(in *corev1.LocalObjectReference, out *ipamv1beta2.IPAddressClaimReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Name = in.Name
	return nil
}

// Convert_v1beta2_IPAddressClaimReference_To_v1_LocalObjectReference converts an IPAddress's claimRef back.
func Convert_v1beta2_IPAddressClaimReference_To_v1_LocalObjectReference(in *ipamv1beta2.IPAddressClaimReference, out *corev1.LocalObjectReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Name = in.Name
	return nil
}

// Convert_v1_LocalObjectReference_To_v1beta2_IPAddressReference converts an IPAddressClaim's addressRef.
func Convert_v1_LocalObjectReference_To_v1beta2_IPAddressReference(in *corev1.LocalObjectReference, out *ipamv1beta2.IPAddressReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Name = in.Name
	return nil
}

// Convert_v1beta2_IPAddressReference_To_v1_LocalObjectReference converts an IPAddressClaim's addressRef back.
func Convert_v1beta2_IPAddressReference_To_v1_LocalObjectReference(in *ipamv1beta2.IPAddressReference, out *corev1.LocalObjectReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Name = in.Name
	return nil
}

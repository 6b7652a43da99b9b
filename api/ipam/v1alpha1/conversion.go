package v1alpha1

import (
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1beta2 "github.com/capstan-dev/capstan/api/ipam/v1beta2"
)

// The conversions to and from v1beta2 that conversion-gen cannot write (zz_generated.conversion.go has the
// rest): field mappings alone. internal/conversion converts whole objects with them, and adds what
// v1alpha1 has no field for: spec.clusterName as the cluster-name label, status.conditions in the
// conversion-data annotation. The reference conversions are ipam v1beta1's: conversion-gen, which generates
// every api package at once, finds them there.

// Convert_v1alpha1_IPAddressSpec_To_v1beta2_IPAddressSpec converts prefix, an int in v1alpha1 and an *int32
// in v1beta2 (the schema bounds it to 0-128).
func Convert_v1alpha1_IPAddressSpec_To_v1beta2_IPAddressSpec(in *IPAddressSpec, out *ipamv1beta2.IPAddressSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1alpha1_IPAddressSpec_To_v1beta2_IPAddressSpec(in, out, s); err != nil {
		return err
	}
	prefix := int32(in.Prefix) //nolint:gosec // the schema bounds prefix to 0-128
	out.Prefix = &prefix
	return nil
}

// Convert_v1beta2_IPAddressSpec_To_v1alpha1_IPAddressSpec converts prefix back (v1beta2 requires it: unset
// is 0).
func Convert_v1beta2_IPAddressSpec_To_v1alpha1_IPAddressSpec(in *ipamv1beta2.IPAddressSpec, out *IPAddressSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_IPAddressSpec_To_v1alpha1_IPAddressSpec(in, out, s); err != nil {
		return err
	}
	out.Prefix = 0
	if in.Prefix != nil {
		out.Prefix = int(*in.Prefix)
	}
	return nil
}

// Convert_v1beta2_IPAddressClaimSpec_To_v1alpha1_IPAddressClaimSpec leaves spec.clusterName out: v1alpha1
// names the Cluster with a label, which internal/conversion sets.
func Convert_v1beta2_IPAddressClaimSpec_To_v1alpha1_IPAddressClaimSpec(in *ipamv1beta2.IPAddressClaimSpec, out *IPAddressClaimSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta2_IPAddressClaimSpec_To_v1alpha1_IPAddressClaimSpec(in, out, s)
}

// Convert_v1alpha1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus moves status.conditions (v1beta1
// conditions) to status.deprecated.v1beta1.conditions.
func Convert_v1alpha1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus(in *IPAddressClaimStatus, out *ipamv1beta2.IPAddressClaimStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1alpha1_IPAddressClaimStatus_To_v1beta2_IPAddressClaimStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	out.Deprecated = nil
	if in.Conditions != nil {
		out.Deprecated = &ipamv1beta2.IPAddressClaimDeprecatedStatus{V1Beta1: &ipamv1beta2.IPAddressClaimV1Beta1DeprecatedStatus{}}
		clusterv1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_IPAddressClaimStatus_To_v1alpha1_IPAddressClaimStatus moves
// status.deprecated.v1beta1.conditions back to status.conditions; v1alpha1 has no place for v1beta2's
// status.conditions (internal/conversion keeps them in the conversion-data annotation).
func Convert_v1beta2_IPAddressClaimStatus_To_v1alpha1_IPAddressClaimStatus(in *ipamv1beta2.IPAddressClaimStatus, out *IPAddressClaimStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_IPAddressClaimStatus_To_v1alpha1_IPAddressClaimStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		clusterv1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	return nil
}

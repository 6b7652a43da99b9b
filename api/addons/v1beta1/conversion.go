package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	addonsv1beta2 "github.com/capstan-dev/capstan/api/addons/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The conversions to and from v1beta2 that conversion-gen cannot write (zz_generated.conversion.go has the
// rest): field mappings alone; internal/conversion converts whole objects with them. Every v1beta2 field has
// a v1beta1 place, so nothing needs the conversion-data annotation.

// Convert_v1beta1_ClusterResourceSetStatus_To_v1beta2_ClusterResourceSetStatus moves the conditions:
// status.conditions to status.deprecated.v1beta1.conditions, status.v1beta2.conditions to status.conditions.
func Convert_v1beta1_ClusterResourceSetStatus_To_v1beta2_ClusterResourceSetStatus(in *ClusterResourceSetStatus, out *addonsv1beta2.ClusterResourceSetStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterResourceSetStatus_To_v1beta2_ClusterResourceSetStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	out.Deprecated = nil
	if in.Conditions != nil {
		out.Deprecated = &addonsv1beta2.ClusterResourceSetDeprecatedStatus{V1Beta1: &addonsv1beta2.ClusterResourceSetV1Beta1DeprecatedStatus{}}
		clusterv1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_ClusterResourceSetStatus_To_v1beta1_ClusterResourceSetStatus moves the conditions back:
// status.deprecated.v1beta1.conditions to status.conditions, status.conditions to status.v1beta2.conditions.
func Convert_v1beta2_ClusterResourceSetStatus_To_v1beta1_ClusterResourceSetStatus(in *addonsv1beta2.ClusterResourceSetStatus, out *ClusterResourceSetStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterResourceSetStatus_To_v1beta1_ClusterResourceSetStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		clusterv1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	out.V1Beta2 = nil
	if in.Conditions != nil {
		out.V1Beta2 = &ClusterResourceSetV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// Convert_Pointer_v1beta1_ResourceSetBinding_To_v1beta2_ResourceSetBinding converts an element of
// spec.bindings, a list of pointers in v1beta1 and of values in v1beta2. A nil element, which no stored
// object has (the API server refuses null as an item of a list of objects), is an empty binding.
func Convert_Pointer_v1beta1_ResourceSetBinding_To_v1beta2_ResourceSetBinding(in **ResourceSetBinding, out *addonsv1beta2.ResourceSetBinding, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if *in == nil {
		*out = addonsv1beta2.ResourceSetBinding{}
		return nil
	}
	return Convert_v1beta1_ResourceSetBinding_To_v1beta2_ResourceSetBinding(*in, out, s)
}

// Convert_v1beta2_ResourceSetBinding_To_Pointer_v1beta1_ResourceSetBinding converts an element of
// spec.bindings back: never nil, so that the list keeps its length and every binding.
func Convert_v1beta2_ResourceSetBinding_To_Pointer_v1beta1_ResourceSetBinding(in *addonsv1beta2.ResourceSetBinding, out **ResourceSetBinding, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	*out = &ResourceSetBinding{}
	return Convert_v1beta2_ResourceSetBinding_To_v1beta1_ResourceSetBinding(in, *out, s)
}

// Convert_v1beta1_ResourceBinding_To_v1beta2_ResourceBinding converts lastAppliedTime, a pointer in v1beta1
// and a value (unset when zero) in v1beta2.
func Convert_v1beta1_ResourceBinding_To_v1beta2_ResourceBinding(in *ResourceBinding, out *addonsv1beta2.ResourceBinding, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ResourceBinding_To_v1beta2_ResourceBinding(in, out, s); err != nil {
		return err
	}
	out.LastAppliedTime = metav1.Time{}
	if in.LastAppliedTime != nil {
		out.LastAppliedTime = *in.LastAppliedTime
	}
	return nil
}

// Convert_v1beta2_ResourceBinding_To_v1beta1_ResourceBinding converts lastAppliedTime back: a zero time,
// which JSON cannot carry in either version, is unset.
func Convert_v1beta2_ResourceBinding_To_v1beta1_ResourceBinding(in *addonsv1beta2.ResourceBinding, out *ResourceBinding, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ResourceBinding_To_v1beta1_ResourceBinding(in, out, s); err != nil {
		return err
	}
	out.LastAppliedTime = nil
	if !in.LastAppliedTime.IsZero() {
		t := in.LastAppliedTime
		out.LastAppliedTime = &t
	}
	return nil
}

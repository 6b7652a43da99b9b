package v1alpha1

import (
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1beta2 "github.com/capstan-dev/capstan/api/runtime/v1beta2"
)

// The conversions to and from v1beta2 that conversion-gen cannot write (zz_generated.conversion.go has the
// rest): field mappings alone; internal/conversion converts whole objects with them. v1beta2 makes values of
// v1alpha1's optional pointers, unset when empty; every v1beta2 field has a v1alpha1 place, so nothing needs
// the conversion-data annotation.

// Convert_v1alpha1_ExtensionConfigStatus_To_v1beta2_ExtensionConfigStatus moves the conditions:
// status.conditions to status.deprecated.v1beta1.conditions, status.v1beta2.conditions to status.conditions.
func Convert_v1alpha1_ExtensionConfigStatus_To_v1beta2_ExtensionConfigStatus(in *ExtensionConfigStatus, out *runtimev1beta2.ExtensionConfigStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1alpha1_ExtensionConfigStatus_To_v1beta2_ExtensionConfigStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	out.Deprecated = nil
	if in.Conditions != nil {
		out.Deprecated = &runtimev1beta2.ExtensionConfigDeprecatedStatus{V1Beta1: &runtimev1beta2.ExtensionConfigV1Beta1DeprecatedStatus{}}
		clusterv1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_ExtensionConfigStatus_To_v1alpha1_ExtensionConfigStatus moves the conditions back:
// status.deprecated.v1beta1.conditions to status.conditions, status.conditions to status.v1beta2.conditions.
func Convert_v1beta2_ExtensionConfigStatus_To_v1alpha1_ExtensionConfigStatus(in *runtimev1beta2.ExtensionConfigStatus, out *ExtensionConfigStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ExtensionConfigStatus_To_v1alpha1_ExtensionConfigStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		clusterv1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	out.V1Beta2 = nil
	if in.Conditions != nil {
		out.V1Beta2 = &ExtensionConfigV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// Convert_v1alpha1_ClientConfig_To_v1beta2_ClientConfig converts service, a pointer in v1alpha1.
func Convert_v1alpha1_ClientConfig_To_v1beta2_ClientConfig(in *ClientConfig, out *runtimev1beta2.ClientConfig, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1alpha1_ClientConfig_To_v1beta2_ClientConfig(in, out, s); err != nil {
		return err
	}
	out.Service = runtimev1beta2.ServiceReference{}
	if in.Service != nil {
		return Convert_v1alpha1_ServiceReference_To_v1beta2_ServiceReference(in.Service, &out.Service, s)
	}
	return nil
}

// Convert_v1beta2_ClientConfig_To_v1alpha1_ClientConfig converts url and service back, unset when empty (the
// v1alpha1 schema requires a non-empty url and a service with a name).
func Convert_v1beta2_ClientConfig_To_v1alpha1_ClientConfig(in *runtimev1beta2.ClientConfig, out *ClientConfig, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClientConfig_To_v1alpha1_ClientConfig(in, out, s); err != nil {
		return err
	}
	out.URL = optionalString(in.URL)
	out.Service = nil
	if in.Service != (runtimev1beta2.ServiceReference{}) {
		out.Service = &ServiceReference{}
		return Convert_v1beta2_ServiceReference_To_v1alpha1_ServiceReference(&in.Service, out.Service, s)
	}
	return nil
}

// Convert_v1beta2_ServiceReference_To_v1alpha1_ServiceReference converts path back, unset when empty (the
// v1alpha1 schema requires a non-empty path).
func Convert_v1beta2_ServiceReference_To_v1alpha1_ServiceReference(in *runtimev1beta2.ServiceReference, out *ServiceReference, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ServiceReference_To_v1alpha1_ServiceReference(in, out, s); err != nil {
		return err
	}
	out.Path = optionalString(in.Path)
	return nil
}

// Convert_v1alpha1_ExtensionHandler_To_v1beta2_ExtensionHandler converts failurePolicy, a pointer in
// v1alpha1.
func Convert_v1alpha1_ExtensionHandler_To_v1beta2_ExtensionHandler(in *ExtensionHandler, out *runtimev1beta2.ExtensionHandler, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1alpha1_ExtensionHandler_To_v1beta2_ExtensionHandler(in, out, s); err != nil {
		return err
	}
	out.FailurePolicy = ""
	if in.FailurePolicy != nil {
		out.FailurePolicy = runtimev1beta2.FailurePolicy(*in.FailurePolicy)
	}
	return nil
}

// Convert_v1beta2_ExtensionHandler_To_v1alpha1_ExtensionHandler converts timeoutSeconds and failurePolicy
// back, unset when zero: v1beta2 has no timeout of 0 (its minimum is 1), and an empty failurePolicy is not
// one of v1alpha1's values.
func Convert_v1beta2_ExtensionHandler_To_v1alpha1_ExtensionHandler(in *runtimev1beta2.ExtensionHandler, out *ExtensionHandler, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ExtensionHandler_To_v1alpha1_ExtensionHandler(in, out, s); err != nil {
		return err
	}
	out.TimeoutSeconds = nil
	if in.TimeoutSeconds != 0 {
		timeout := in.TimeoutSeconds
		out.TimeoutSeconds = &timeout
	}
	out.FailurePolicy = nil
	if in.FailurePolicy != "" {
		policy := FailurePolicy(in.FailurePolicy)
		out.FailurePolicy = &policy
	}
	return nil
}

// optionalString is s as v1alpha1's optional strings hold it: nil when empty.
func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

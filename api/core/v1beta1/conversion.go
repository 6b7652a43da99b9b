package v1beta1

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// The conversions between v1beta1 and v1beta2 (the hub) that conversion-gen cannot write: the fields v1beta2
// renamed, moved, turned from durations into seconds or from pointers into values. They map fields alone;
// what one version cannot express at all (references' versions, fields added in v1beta2) is the concern of
// the kinds' conversions in internal/conversion, which keep it in the conversion-data annotation.

// seconds converts a v1beta1 duration into v1beta2's whole seconds (a fraction of a second is dropped, a
// duration beyond int32 is capped), as upstream does.
func seconds(d *metav1.Duration) *int32 {
	if d == nil {
		return nil
	}
	s := math.Trunc(d.Seconds())
	if s > math.MaxInt32 {
		return new(int32(math.MaxInt32))
	}
	return new(int32(s))
}

// duration converts v1beta2's seconds into a v1beta1 duration.
func duration(s *int32) *metav1.Duration {
	if s == nil {
		return nil
	}
	return &metav1.Duration{Duration: time.Duration(*s) * time.Second}
}

// stringOrNil is s, or nil for "": v1beta1's optional strings are pointers, v1beta2's values.
func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return new(s)
}

func stringValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// timeOrNil is t, or nil for the zero time: v1beta1's optional times are pointers, v1beta2's values.
func timeOrNil(t metav1.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return new(t)
}

func timeValue(t *metav1.Time) metav1.Time {
	if t == nil {
		return metav1.Time{}
	}
	return *t
}

// Health checks: v1beta1's MachineHealthCheckClass is v1beta2's checks and remediation, whose types differ
// by location but have the same fields as the MachineHealthCheck's (so Go converts between them).

func healthCheckFromV1beta1(in *MachineHealthCheckClass) (clusterv1.MachineHealthCheckChecks, clusterv1.MachineHealthCheckRemediationTriggerIf, clusterv1.MachineHealthCheckRemediationTemplateReference) {
	var checks clusterv1.MachineHealthCheckChecks
	var triggerIf clusterv1.MachineHealthCheckRemediationTriggerIf
	var template clusterv1.MachineHealthCheckRemediationTemplateReference
	if in == nil {
		return checks, triggerIf, template
	}
	checks.UnhealthyNodeConditions = unhealthyNodeConditionsFromV1beta1(in.UnhealthyConditions)
	if in.UnhealthyMachineConditions != nil {
		checks.UnhealthyMachineConditions = make([]clusterv1.UnhealthyMachineCondition, len(in.UnhealthyMachineConditions))
		for i := range in.UnhealthyMachineConditions {
			_ = Convert_v1beta1_UnhealthyMachineCondition_To_v1beta2_UnhealthyMachineCondition(&in.UnhealthyMachineConditions[i], &checks.UnhealthyMachineConditions[i], nil)
		}
	}
	checks.NodeStartupTimeoutSeconds = seconds(in.NodeStartupTimeout)
	triggerIf.UnhealthyLessThanOrEqualTo = in.MaxUnhealthy
	triggerIf.UnhealthyInRange = stringValue(in.UnhealthyRange)
	if in.RemediationTemplate != nil {
		template = clusterv1.MachineHealthCheckRemediationTemplateReference{APIVersion: in.RemediationTemplate.APIVersion,
			Kind: in.RemediationTemplate.Kind, Name: in.RemediationTemplate.Name}
	}
	return checks, triggerIf, template
}

// healthCheckToV1beta1 returns nil when v1beta1 has nothing to show.
func healthCheckToV1beta1(checks clusterv1.MachineHealthCheckChecks, triggerIf clusterv1.MachineHealthCheckRemediationTriggerIf, template clusterv1.MachineHealthCheckRemediationTemplateReference) *MachineHealthCheckClass {
	out := &MachineHealthCheckClass{
		UnhealthyConditions: unhealthyNodeConditionsToV1beta1(checks.UnhealthyNodeConditions),
		MaxUnhealthy:        triggerIf.UnhealthyLessThanOrEqualTo,
		UnhealthyRange:      stringOrNil(triggerIf.UnhealthyInRange),
		NodeStartupTimeout:  duration(checks.NodeStartupTimeoutSeconds),
	}
	if checks.UnhealthyMachineConditions != nil {
		out.UnhealthyMachineConditions = make([]UnhealthyMachineCondition, len(checks.UnhealthyMachineConditions))
		for i := range checks.UnhealthyMachineConditions {
			_ = Convert_v1beta2_UnhealthyMachineCondition_To_v1beta1_UnhealthyMachineCondition(&checks.UnhealthyMachineConditions[i], &out.UnhealthyMachineConditions[i], nil)
		}
	}
	if template != (clusterv1.MachineHealthCheckRemediationTemplateReference{}) {
		out.RemediationTemplate = &corev1.ObjectReference{APIVersion: template.APIVersion, Kind: template.Kind, Name: template.Name}
	}
	if reflect.DeepEqual(out, &MachineHealthCheckClass{}) {
		return nil
	}
	return out
}

func unhealthyNodeConditionsFromV1beta1(in []UnhealthyCondition) []clusterv1.UnhealthyNodeCondition {
	if in == nil {
		return nil
	}
	out := make([]clusterv1.UnhealthyNodeCondition, len(in))
	for i, c := range in {
		out[i] = clusterv1.UnhealthyNodeCondition{Type: c.Type, Status: c.Status, TimeoutSeconds: seconds(&c.Timeout)}
	}
	return out
}

func unhealthyNodeConditionsToV1beta1(in []clusterv1.UnhealthyNodeCondition) []UnhealthyCondition {
	if in == nil {
		return nil
	}
	out := make([]UnhealthyCondition, len(in))
	for i, c := range in {
		out[i] = UnhealthyCondition{Type: c.Type, Status: c.Status}
		if d := duration(c.TimeoutSeconds); d != nil {
			out[i].Timeout = *d
		}
	}
	return out
}

// Templates of a ClusterClass: v1beta1's LocalObjectTemplate is a reference in an object; v1beta2's
// ClusterClassTemplateReference keeps its apiVersion, kind and name (the namespace is the ClusterClass's).

func templateRefFromV1beta1(in *LocalObjectTemplate) clusterv1.ClusterClassTemplateReference {
	if in == nil || in.Ref == nil {
		return clusterv1.ClusterClassTemplateReference{}
	}
	return clusterv1.ClusterClassTemplateReference{APIVersion: in.Ref.APIVersion, Kind: in.Ref.Kind, Name: in.Ref.Name}
}

func templateRefToV1beta1(in clusterv1.ClusterClassTemplateReference) LocalObjectTemplate {
	if in == (clusterv1.ClusterClassTemplateReference{}) {
		return LocalObjectTemplate{}
	}
	return LocalObjectTemplate{Ref: &corev1.ObjectReference{APIVersion: in.APIVersion, Kind: in.Kind, Name: in.Name}}
}

// Convert_v1beta1_LocalObjectTemplate_To_v1beta2_InfrastructureClass converts a ClusterClass's
// infrastructure template.
func Convert_v1beta1_LocalObjectTemplate_To_v1beta2_InfrastructureClass(in *LocalObjectTemplate, out *clusterv1.InfrastructureClass, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.TemplateRef = templateRefFromV1beta1(in)
	return nil
}

// Convert_v1beta2_InfrastructureClass_To_v1beta1_LocalObjectTemplate converts a ClusterClass's
// infrastructure template (its naming is ClusterClassSpec's).
func Convert_v1beta2_InfrastructureClass_To_v1beta1_LocalObjectTemplate(in *clusterv1.InfrastructureClass, out *LocalObjectTemplate, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	*out = templateRefToV1beta1(in.TemplateRef)
	return nil
}

// Convert_v1beta1_ClusterClassSpec_To_v1beta2_ClusterClassSpec moves infrastructureNamingStrategy to
// infrastructure.naming.
func Convert_v1beta1_ClusterClassSpec_To_v1beta2_ClusterClassSpec(in *ClusterClassSpec, out *clusterv1.ClusterClassSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterClassSpec_To_v1beta2_ClusterClassSpec(in, out, s); err != nil {
		return err
	}
	if in.InfrastructureNamingStrategy != nil {
		out.Infrastructure.Naming.Template = stringValue(in.InfrastructureNamingStrategy.Template)
	}
	return nil
}

// Convert_v1beta2_ClusterClassSpec_To_v1beta1_ClusterClassSpec moves infrastructure.naming to
// infrastructureNamingStrategy.
func Convert_v1beta2_ClusterClassSpec_To_v1beta1_ClusterClassSpec(in *clusterv1.ClusterClassSpec, out *ClusterClassSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterClassSpec_To_v1beta1_ClusterClassSpec(in, out, s); err != nil {
		return err
	}
	if in.Infrastructure.Naming.Template != "" {
		out.InfrastructureNamingStrategy = &InfrastructureNamingStrategy{Template: new(in.Infrastructure.Naming.Template)}
	}
	return nil
}

// Convert_v1beta1_ControlPlaneClass_To_v1beta2_ControlPlaneClass converts the control plane of a
// ClusterClass: its template, machine infrastructure, health check, naming and timeouts.
func Convert_v1beta1_ControlPlaneClass_To_v1beta2_ControlPlaneClass(in *ControlPlaneClass, out *clusterv1.ControlPlaneClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ControlPlaneClass_To_v1beta2_ControlPlaneClass(in, out, s); err != nil {
		return err
	}
	out.TemplateRef = templateRefFromV1beta1(&in.LocalObjectTemplate)
	out.MachineInfrastructure.TemplateRef = templateRefFromV1beta1(in.MachineInfrastructure)
	checks, triggerIf, template := healthCheckFromV1beta1(in.MachineHealthCheck)
	out.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{
		Checks: clusterv1.ControlPlaneClassHealthCheckChecks(checks),
		Remediation: clusterv1.ControlPlaneClassHealthCheckRemediation{
			TriggerIf: clusterv1.ControlPlaneClassHealthCheckRemediationTriggerIf(triggerIf), TemplateRef: template},
	}
	if in.NamingStrategy != nil {
		out.Naming.Template = stringValue(in.NamingStrategy.Template)
	}
	out.Deletion = clusterv1.ControlPlaneClassMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	return nil
}

// Convert_v1beta2_ControlPlaneClass_To_v1beta1_ControlPlaneClass is the reverse of
// Convert_v1beta1_ControlPlaneClass_To_v1beta2_ControlPlaneClass; taints have no v1beta1 field.
func Convert_v1beta2_ControlPlaneClass_To_v1beta1_ControlPlaneClass(in *clusterv1.ControlPlaneClass, out *ControlPlaneClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ControlPlaneClass_To_v1beta1_ControlPlaneClass(in, out, s); err != nil {
		return err
	}
	out.LocalObjectTemplate = templateRefToV1beta1(in.TemplateRef)
	if in.MachineInfrastructure.TemplateRef != (clusterv1.ClusterClassTemplateReference{}) {
		out.MachineInfrastructure = new(templateRefToV1beta1(in.MachineInfrastructure.TemplateRef))
	}
	out.MachineHealthCheck = healthCheckToV1beta1(clusterv1.MachineHealthCheckChecks(in.HealthCheck.Checks),
		clusterv1.MachineHealthCheckRemediationTriggerIf(in.HealthCheck.Remediation.TriggerIf), in.HealthCheck.Remediation.TemplateRef)
	if in.Naming.Template != "" {
		out.NamingStrategy = &ControlPlaneClassNamingStrategy{Template: new(in.Naming.Template)}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	return nil
}

// Convert_v1beta1_MachineDeploymentClass_To_v1beta2_MachineDeploymentClass converts a ClusterClass's
// MachineDeployment class: template → metadata/bootstrap/infrastructure, strategy → rollout, deletion order
// and remediation's maxInFlight, timeouts → deletion.
func Convert_v1beta1_MachineDeploymentClass_To_v1beta2_MachineDeploymentClass(in *MachineDeploymentClass, out *clusterv1.MachineDeploymentClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineDeploymentClass_To_v1beta2_MachineDeploymentClass(in, out, s); err != nil {
		return err
	}
	if err := Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta(&in.Template.Metadata, &out.Metadata, s); err != nil {
		return err
	}
	out.Bootstrap.TemplateRef = templateRefFromV1beta1(&in.Template.Bootstrap)
	out.Infrastructure.TemplateRef = templateRefFromV1beta1(&in.Template.Infrastructure)
	checks, triggerIf, template := healthCheckFromV1beta1(in.MachineHealthCheck)
	out.HealthCheck = clusterv1.MachineDeploymentClassHealthCheck{
		Checks: clusterv1.MachineDeploymentClassHealthCheckChecks(checks),
		Remediation: clusterv1.MachineDeploymentClassHealthCheckRemediation{
			TriggerIf: clusterv1.MachineDeploymentClassHealthCheckRemediationTriggerIf(triggerIf), TemplateRef: template},
	}
	if in.NamingStrategy != nil {
		out.Naming.Template = stringValue(in.NamingStrategy.Template)
	}
	out.Deletion = clusterv1.MachineDeploymentClassMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	strategy := strategyFromV1beta1(in.Strategy)
	out.Rollout.Strategy = clusterv1.MachineDeploymentClassRolloutStrategy{Type: strategy.Type,
		RollingUpdate: clusterv1.MachineDeploymentClassRolloutStrategyRollingUpdate(strategy.RollingUpdate)}
	out.Deletion.Order = deletionOrderFromV1beta1(in.Strategy)
	out.HealthCheck.Remediation.MaxInFlight = maxInFlightFromV1beta1(in.Strategy)
	return nil
}

// Convert_v1beta2_MachineDeploymentClass_To_v1beta1_MachineDeploymentClass is the reverse of
// Convert_v1beta1_MachineDeploymentClass_To_v1beta2_MachineDeploymentClass; taints have no v1beta1 field.
func Convert_v1beta2_MachineDeploymentClass_To_v1beta1_MachineDeploymentClass(in *clusterv1.MachineDeploymentClass, out *MachineDeploymentClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineDeploymentClass_To_v1beta1_MachineDeploymentClass(in, out, s); err != nil {
		return err
	}
	out.FailureDomain = stringOrNil(in.FailureDomain)
	if err := Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta(&in.Metadata, &out.Template.Metadata, s); err != nil {
		return err
	}
	out.Template.Bootstrap = templateRefToV1beta1(in.Bootstrap.TemplateRef)
	out.Template.Infrastructure = templateRefToV1beta1(in.Infrastructure.TemplateRef)
	out.MachineHealthCheck = healthCheckToV1beta1(clusterv1.MachineHealthCheckChecks(in.HealthCheck.Checks),
		clusterv1.MachineHealthCheckRemediationTriggerIf(in.HealthCheck.Remediation.TriggerIf), in.HealthCheck.Remediation.TemplateRef)
	if in.Naming.Template != "" {
		out.NamingStrategy = &MachineDeploymentClassNamingStrategy{Template: new(in.Naming.Template)}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	out.Strategy = strategyToV1beta1(clusterv1.MachineDeploymentRolloutStrategy{Type: in.Rollout.Strategy.Type,
		RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate(in.Rollout.Strategy.RollingUpdate)},
		in.Deletion.Order, in.HealthCheck.Remediation.MaxInFlight)
	return nil
}

// Convert_v1beta1_MachinePoolClass_To_v1beta2_MachinePoolClass converts a ClusterClass's MachinePool class.
func Convert_v1beta1_MachinePoolClass_To_v1beta2_MachinePoolClass(in *MachinePoolClass, out *clusterv1.MachinePoolClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachinePoolClass_To_v1beta2_MachinePoolClass(in, out, s); err != nil {
		return err
	}
	if err := Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta(&in.Template.Metadata, &out.Metadata, s); err != nil {
		return err
	}
	out.Bootstrap.TemplateRef = templateRefFromV1beta1(&in.Template.Bootstrap)
	out.Infrastructure.TemplateRef = templateRefFromV1beta1(&in.Template.Infrastructure)
	if in.NamingStrategy != nil {
		out.Naming.Template = stringValue(in.NamingStrategy.Template)
	}
	out.Deletion = clusterv1.MachinePoolClassMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	return nil
}

// Convert_v1beta2_MachinePoolClass_To_v1beta1_MachinePoolClass is the reverse of
// Convert_v1beta1_MachinePoolClass_To_v1beta2_MachinePoolClass; taints have no v1beta1 field.
func Convert_v1beta2_MachinePoolClass_To_v1beta1_MachinePoolClass(in *clusterv1.MachinePoolClass, out *MachinePoolClass, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachinePoolClass_To_v1beta1_MachinePoolClass(in, out, s); err != nil {
		return err
	}
	if err := Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta(&in.Metadata, &out.Template.Metadata, s); err != nil {
		return err
	}
	out.Template.Bootstrap = templateRefToV1beta1(in.Bootstrap.TemplateRef)
	out.Template.Infrastructure = templateRefToV1beta1(in.Infrastructure.TemplateRef)
	if in.Naming.Template != "" {
		out.NamingStrategy = &MachinePoolClassNamingStrategy{Template: new(in.Naming.Template)}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	return nil
}

// Convert_v1beta1_ClusterClassVariable_To_v1beta2_ClusterClassVariable moves metadata to
// deprecatedV1Beta1Metadata.
func Convert_v1beta1_ClusterClassVariable_To_v1beta2_ClusterClassVariable(in *ClusterClassVariable, out *clusterv1.ClusterClassVariable, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterClassVariable_To_v1beta2_ClusterClassVariable(in, out, s); err != nil {
		return err
	}
	return autoConvert_v1beta1_ClusterClassVariableMetadata_To_v1beta2_ClusterClassVariableMetadata(&in.Metadata, &out.DeprecatedV1Beta1Metadata, s)
}

// Convert_v1beta2_ClusterClassVariable_To_v1beta1_ClusterClassVariable moves deprecatedV1Beta1Metadata to
// metadata.
func Convert_v1beta2_ClusterClassVariable_To_v1beta1_ClusterClassVariable(in *clusterv1.ClusterClassVariable, out *ClusterClassVariable, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterClassVariable_To_v1beta1_ClusterClassVariable(in, out, s); err != nil {
		return err
	}
	return autoConvert_v1beta2_ClusterClassVariableMetadata_To_v1beta1_ClusterClassVariableMetadata(&in.DeprecatedV1Beta1Metadata, &out.Metadata, s)
}

// Convert_v1beta1_ClusterClassStatusVariableDefinition_To_v1beta2_ClusterClassStatusVariableDefinition moves
// metadata to deprecatedV1Beta1Metadata.
func Convert_v1beta1_ClusterClassStatusVariableDefinition_To_v1beta2_ClusterClassStatusVariableDefinition(in *ClusterClassStatusVariableDefinition, out *clusterv1.ClusterClassStatusVariableDefinition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterClassStatusVariableDefinition_To_v1beta2_ClusterClassStatusVariableDefinition(in, out, s); err != nil {
		return err
	}
	return autoConvert_v1beta1_ClusterClassVariableMetadata_To_v1beta2_ClusterClassVariableMetadata(&in.Metadata, &out.DeprecatedV1Beta1Metadata, s)
}

// Convert_v1beta2_ClusterClassStatusVariableDefinition_To_v1beta1_ClusterClassStatusVariableDefinition moves
// deprecatedV1Beta1Metadata to metadata.
func Convert_v1beta2_ClusterClassStatusVariableDefinition_To_v1beta1_ClusterClassStatusVariableDefinition(in *clusterv1.ClusterClassStatusVariableDefinition, out *ClusterClassStatusVariableDefinition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterClassStatusVariableDefinition_To_v1beta1_ClusterClassStatusVariableDefinition(in, out, s); err != nil {
		return err
	}
	return autoConvert_v1beta2_ClusterClassVariableMetadata_To_v1beta1_ClusterClassVariableMetadata(&in.DeprecatedV1Beta1Metadata, &out.Metadata, s)
}

// Convert_v1beta1_ExternalPatchDefinition_To_v1beta2_ExternalPatchDefinition renames generateExtension and
// validateExtension.
func Convert_v1beta1_ExternalPatchDefinition_To_v1beta2_ExternalPatchDefinition(in *ExternalPatchDefinition, out *clusterv1.ExternalPatchDefinition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ExternalPatchDefinition_To_v1beta2_ExternalPatchDefinition(in, out, s); err != nil {
		return err
	}
	out.GeneratePatchesExtension = stringValue(in.GenerateExtension)
	out.ValidateTopologyExtension = stringValue(in.ValidateExtension)
	return nil
}

// Convert_v1beta2_ExternalPatchDefinition_To_v1beta1_ExternalPatchDefinition renames
// generatePatchesExtension and validateTopologyExtension.
func Convert_v1beta2_ExternalPatchDefinition_To_v1beta1_ExternalPatchDefinition(in *clusterv1.ExternalPatchDefinition, out *ExternalPatchDefinition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ExternalPatchDefinition_To_v1beta1_ExternalPatchDefinition(in, out, s); err != nil {
		return err
	}
	out.GenerateExtension = stringOrNil(in.GeneratePatchesExtension)
	out.ValidateExtension = stringOrNil(in.ValidateTopologyExtension)
	return nil
}

// Convert_v1beta1_JSONSchemaProps_To_v1beta2_JSONSchemaProps converts x-metadata, a pointer in v1beta1.
func Convert_v1beta1_JSONSchemaProps_To_v1beta2_JSONSchemaProps(in *JSONSchemaProps, out *clusterv1.JSONSchemaProps, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_JSONSchemaProps_To_v1beta2_JSONSchemaProps(in, out, s); err != nil {
		return err
	}
	if in.XMetadata != nil {
		return Convert_v1beta1_VariableSchemaMetadata_To_v1beta2_VariableSchemaMetadata(in.XMetadata, &out.XMetadata, s)
	}
	return nil
}

// Convert_v1beta2_JSONSchemaProps_To_v1beta1_JSONSchemaProps converts x-metadata, a pointer in v1beta1.
func Convert_v1beta2_JSONSchemaProps_To_v1beta1_JSONSchemaProps(in *clusterv1.JSONSchemaProps, out *JSONSchemaProps, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_JSONSchemaProps_To_v1beta1_JSONSchemaProps(in, out, s); err != nil {
		return err
	}
	if !reflect.DeepEqual(in.XMetadata, clusterv1.VariableSchemaMetadata{}) {
		out.XMetadata = &VariableSchemaMetadata{}
		return Convert_v1beta2_VariableSchemaMetadata_To_v1beta1_VariableSchemaMetadata(&in.XMetadata, out.XMetadata, s)
	}
	return nil
}

// Convert_v1beta1_ClusterClassStatus_To_v1beta2_ClusterClassStatus moves the conditions.
func Convert_v1beta1_ClusterClassStatus_To_v1beta2_ClusterClassStatus(in *ClusterClassStatus, out *clusterv1.ClusterClassStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterClassStatus_To_v1beta2_ClusterClassStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	if in.Conditions != nil {
		out.Deprecated = &clusterv1.ClusterClassDeprecatedStatus{V1Beta1: &clusterv1.ClusterClassV1Beta1DeprecatedStatus{}}
		Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_ClusterClassStatus_To_v1beta1_ClusterClassStatus moves the conditions.
func Convert_v1beta2_ClusterClassStatus_To_v1beta1_ClusterClassStatus(in *clusterv1.ClusterClassStatus, out *ClusterClassStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterClassStatus_To_v1beta1_ClusterClassStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil && in.Deprecated.V1Beta1.Conditions != nil {
		Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	if in.Conditions != nil {
		out.V1Beta2 = &ClusterClassV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// Clusters.

// Convert_v1beta1_ClusterSpec_To_v1beta2_ClusterSpec converts the cluster network and the topology, pointers
// in v1beta1 (the references are converted by the Cluster's conversion, which knows their versions).
func Convert_v1beta1_ClusterSpec_To_v1beta2_ClusterSpec(in *ClusterSpec, out *clusterv1.ClusterSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterSpec_To_v1beta2_ClusterSpec(in, out, s); err != nil {
		return err
	}
	if in.ClusterNetwork != nil {
		if err := Convert_v1beta1_ClusterNetwork_To_v1beta2_ClusterNetwork(in.ClusterNetwork, &out.ClusterNetwork, s); err != nil {
			return err
		}
	}
	if in.Topology != nil {
		return Convert_v1beta1_Topology_To_v1beta2_Topology(in.Topology, &out.Topology, s)
	}
	return nil
}

// Convert_v1beta2_ClusterSpec_To_v1beta1_ClusterSpec is the reverse of
// Convert_v1beta1_ClusterSpec_To_v1beta2_ClusterSpec.
func Convert_v1beta2_ClusterSpec_To_v1beta1_ClusterSpec(in *clusterv1.ClusterSpec, out *ClusterSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterSpec_To_v1beta1_ClusterSpec(in, out, s); err != nil {
		return err
	}
	if !reflect.DeepEqual(in.ClusterNetwork, clusterv1.ClusterNetwork{}) {
		out.ClusterNetwork = &ClusterNetwork{}
		if err := Convert_v1beta2_ClusterNetwork_To_v1beta1_ClusterNetwork(&in.ClusterNetwork, out.ClusterNetwork, s); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(in.Topology, clusterv1.Topology{}) {
		out.Topology = &Topology{}
		return Convert_v1beta2_Topology_To_v1beta1_Topology(&in.Topology, out.Topology, s)
	}
	return nil
}

// Convert_v1beta1_ClusterNetwork_To_v1beta2_ClusterNetwork converts the network ranges, pointers in v1beta1.
func Convert_v1beta1_ClusterNetwork_To_v1beta2_ClusterNetwork(in *ClusterNetwork, out *clusterv1.ClusterNetwork, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterNetwork_To_v1beta2_ClusterNetwork(in, out, s); err != nil {
		return err
	}
	if in.Services != nil {
		out.Services.CIDRBlocks = in.Services.CIDRBlocks
	}
	if in.Pods != nil {
		out.Pods.CIDRBlocks = in.Pods.CIDRBlocks
	}
	return nil
}

// Convert_v1beta2_ClusterNetwork_To_v1beta1_ClusterNetwork converts the network ranges and leaves an unset
// API server port unset.
func Convert_v1beta2_ClusterNetwork_To_v1beta1_ClusterNetwork(in *clusterv1.ClusterNetwork, out *ClusterNetwork, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterNetwork_To_v1beta1_ClusterNetwork(in, out, s); err != nil {
		return err
	}
	if in.APIServerPort == 0 {
		out.APIServerPort = nil
	}
	if in.Services.CIDRBlocks != nil {
		out.Services = &NetworkRanges{CIDRBlocks: in.Services.CIDRBlocks}
	}
	if in.Pods.CIDRBlocks != nil {
		out.Pods = &NetworkRanges{CIDRBlocks: in.Pods.CIDRBlocks}
	}
	return nil
}

// Convert_v1beta1_Topology_To_v1beta2_Topology moves class and classNamespace to classRef; rolloutAfter,
// which no version of Cluster API implemented, has no v1beta2 field.
func Convert_v1beta1_Topology_To_v1beta2_Topology(in *Topology, out *clusterv1.Topology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_Topology_To_v1beta2_Topology(in, out, s); err != nil {
		return err
	}
	out.ClassRef = clusterv1.ClusterClassRef{Name: in.Class, Namespace: in.ClassNamespace}
	if in.Workers != nil {
		return autoConvert_v1beta1_WorkersTopology_To_v1beta2_WorkersTopology(in.Workers, &out.Workers, s)
	}
	return nil
}

// Convert_v1beta2_Topology_To_v1beta1_Topology is the reverse of Convert_v1beta1_Topology_To_v1beta2_Topology.
func Convert_v1beta2_Topology_To_v1beta1_Topology(in *clusterv1.Topology, out *Topology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_Topology_To_v1beta1_Topology(in, out, s); err != nil {
		return err
	}
	out.Class = in.ClassRef.Name
	out.ClassNamespace = in.ClassRef.Namespace
	if !reflect.DeepEqual(in.Workers, clusterv1.WorkersTopology{}) {
		out.Workers = &WorkersTopology{}
		return autoConvert_v1beta2_WorkersTopology_To_v1beta1_WorkersTopology(&in.Workers, out.Workers, s)
	}
	return nil
}

// Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable drops definitionFrom: v1beta2 has none, and
// upstream's v1beta1 no longer accepted it being set.
func Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable(in *ClusterVariable, out *clusterv1.ClusterVariable, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable(in, out, s)
}

// Convert_v1beta1_ControlPlaneTopology_To_v1beta2_ControlPlaneTopology converts the health check, the
// timeouts and the variables.
func Convert_v1beta1_ControlPlaneTopology_To_v1beta2_ControlPlaneTopology(in *ControlPlaneTopology, out *clusterv1.ControlPlaneTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ControlPlaneTopology_To_v1beta2_ControlPlaneTopology(in, out, s); err != nil {
		return err
	}
	if in.Variables != nil {
		if err := autoConvert_v1beta1_ControlPlaneVariables_To_v1beta2_ControlPlaneVariables(in.Variables, &out.Variables, s); err != nil {
			return err
		}
	}
	out.Deletion = clusterv1.ControlPlaneTopologyMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	if in.MachineHealthCheck != nil {
		checks, triggerIf, template := healthCheckFromV1beta1(&in.MachineHealthCheck.MachineHealthCheckClass)
		out.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{
			Enabled: in.MachineHealthCheck.Enable,
			Checks:  clusterv1.ControlPlaneTopologyHealthCheckChecks(checks),
			Remediation: clusterv1.ControlPlaneTopologyHealthCheckRemediation{
				TriggerIf: clusterv1.ControlPlaneTopologyHealthCheckRemediationTriggerIf(triggerIf), TemplateRef: template},
		}
	}
	return nil
}

// Convert_v1beta2_ControlPlaneTopology_To_v1beta1_ControlPlaneTopology is the reverse of
// Convert_v1beta1_ControlPlaneTopology_To_v1beta2_ControlPlaneTopology; taints have no v1beta1
// field.
func Convert_v1beta2_ControlPlaneTopology_To_v1beta1_ControlPlaneTopology(in *clusterv1.ControlPlaneTopology, out *ControlPlaneTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ControlPlaneTopology_To_v1beta1_ControlPlaneTopology(in, out, s); err != nil {
		return err
	}
	if !reflect.DeepEqual(in.Variables, clusterv1.ControlPlaneVariables{}) {
		out.Variables = &ControlPlaneVariables{}
		if err := autoConvert_v1beta2_ControlPlaneVariables_To_v1beta1_ControlPlaneVariables(&in.Variables, out.Variables, s); err != nil {
			return err
		}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	out.MachineHealthCheck = healthCheckTopologyToV1beta1(in.HealthCheck.Enabled, clusterv1.MachineHealthCheckChecks(in.HealthCheck.Checks),
		clusterv1.MachineHealthCheckRemediationTriggerIf(in.HealthCheck.Remediation.TriggerIf), in.HealthCheck.Remediation.TemplateRef)
	return nil
}

func healthCheckTopologyToV1beta1(enabled *bool, checks clusterv1.MachineHealthCheckChecks, triggerIf clusterv1.MachineHealthCheckRemediationTriggerIf, template clusterv1.MachineHealthCheckRemediationTemplateReference) *MachineHealthCheckTopology {
	class := healthCheckToV1beta1(checks, triggerIf, template)
	if enabled == nil && class == nil {
		return nil
	}
	out := &MachineHealthCheckTopology{Enable: enabled}
	if class != nil {
		out.MachineHealthCheckClass = *class
	}
	return out
}

// Convert_v1beta1_MachineDeploymentTopology_To_v1beta2_MachineDeploymentTopology converts the health check,
// the strategy, the timeouts and the variables.
func Convert_v1beta1_MachineDeploymentTopology_To_v1beta2_MachineDeploymentTopology(in *MachineDeploymentTopology, out *clusterv1.MachineDeploymentTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineDeploymentTopology_To_v1beta2_MachineDeploymentTopology(in, out, s); err != nil {
		return err
	}
	if in.Variables != nil {
		if err := autoConvert_v1beta1_MachineDeploymentVariables_To_v1beta2_MachineDeploymentVariables(in.Variables, &out.Variables, s); err != nil {
			return err
		}
	}
	out.Deletion = clusterv1.MachineDeploymentTopologyMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout),
		Order: deletionOrderFromV1beta1(in.Strategy)}
	if in.MachineHealthCheck != nil {
		checks, triggerIf, template := healthCheckFromV1beta1(&in.MachineHealthCheck.MachineHealthCheckClass)
		out.HealthCheck = clusterv1.MachineDeploymentTopologyHealthCheck{
			Enabled: in.MachineHealthCheck.Enable,
			Checks:  clusterv1.MachineDeploymentTopologyHealthCheckChecks(checks),
			Remediation: clusterv1.MachineDeploymentTopologyHealthCheckRemediation{
				TriggerIf: clusterv1.MachineDeploymentTopologyHealthCheckRemediationTriggerIf(triggerIf), TemplateRef: template},
		}
	}
	out.HealthCheck.Remediation.MaxInFlight = maxInFlightFromV1beta1(in.Strategy)
	strategy := strategyFromV1beta1(in.Strategy)
	out.Rollout.Strategy = clusterv1.MachineDeploymentTopologyRolloutStrategy{Type: strategy.Type,
		RollingUpdate: clusterv1.MachineDeploymentTopologyRolloutStrategyRollingUpdate(strategy.RollingUpdate)}
	return nil
}

// Convert_v1beta2_MachineDeploymentTopology_To_v1beta1_MachineDeploymentTopology is the reverse of
// Convert_v1beta1_MachineDeploymentTopology_To_v1beta2_MachineDeploymentTopology; taints have no v1beta1
// field.
func Convert_v1beta2_MachineDeploymentTopology_To_v1beta1_MachineDeploymentTopology(in *clusterv1.MachineDeploymentTopology, out *MachineDeploymentTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineDeploymentTopology_To_v1beta1_MachineDeploymentTopology(in, out, s); err != nil {
		return err
	}
	out.FailureDomain = stringOrNil(in.FailureDomain)
	if !reflect.DeepEqual(in.Variables, clusterv1.MachineDeploymentVariables{}) {
		out.Variables = &MachineDeploymentVariables{}
		if err := autoConvert_v1beta2_MachineDeploymentVariables_To_v1beta1_MachineDeploymentVariables(&in.Variables, out.Variables, s); err != nil {
			return err
		}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	out.MachineHealthCheck = healthCheckTopologyToV1beta1(in.HealthCheck.Enabled, clusterv1.MachineHealthCheckChecks(in.HealthCheck.Checks),
		clusterv1.MachineHealthCheckRemediationTriggerIf(in.HealthCheck.Remediation.TriggerIf), in.HealthCheck.Remediation.TemplateRef)
	out.Strategy = strategyToV1beta1(clusterv1.MachineDeploymentRolloutStrategy{Type: in.Rollout.Strategy.Type,
		RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate(in.Rollout.Strategy.RollingUpdate)},
		in.Deletion.Order, in.HealthCheck.Remediation.MaxInFlight)
	return nil
}

// Convert_v1beta2_MachineDeploymentTopologyRolloutSpec_To_v1beta1_MachineDeploymentTopologyRolloutSpec converts
// rollout.after; v1beta1 has the strategy apart (see the MachineDeploymentTopology's conversion).
func Convert_v1beta2_MachineDeploymentTopologyRolloutSpec_To_v1beta1_MachineDeploymentTopologyRolloutSpec(in *clusterv1.MachineDeploymentTopologyRolloutSpec, out *MachineDeploymentTopologyRolloutSpec, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.After = in.After
	return nil
}

// Convert_v1beta1_MachinePoolTopology_To_v1beta2_MachinePoolTopology converts the timeouts and the variables.
func Convert_v1beta1_MachinePoolTopology_To_v1beta2_MachinePoolTopology(in *MachinePoolTopology, out *clusterv1.MachinePoolTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachinePoolTopology_To_v1beta2_MachinePoolTopology(in, out, s); err != nil {
		return err
	}
	if in.Variables != nil {
		if err := autoConvert_v1beta1_MachinePoolVariables_To_v1beta2_MachinePoolVariables(in.Variables, &out.Variables, s); err != nil {
			return err
		}
	}
	out.Deletion = clusterv1.MachinePoolTopologyMachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	return nil
}

// Convert_v1beta2_MachinePoolTopology_To_v1beta1_MachinePoolTopology is the reverse of
// Convert_v1beta1_MachinePoolTopology_To_v1beta2_MachinePoolTopology; taints have no v1beta1 field.
func Convert_v1beta2_MachinePoolTopology_To_v1beta1_MachinePoolTopology(in *clusterv1.MachinePoolTopology, out *MachinePoolTopology, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachinePoolTopology_To_v1beta1_MachinePoolTopology(in, out, s); err != nil {
		return err
	}
	if !reflect.DeepEqual(in.Variables, clusterv1.MachinePoolVariables{}) {
		out.Variables = &MachinePoolVariables{}
		if err := autoConvert_v1beta2_MachinePoolVariables_To_v1beta1_MachinePoolVariables(&in.Variables, out.Variables, s); err != nil {
			return err
		}
	}
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	return nil
}

// Convert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus moves the conditions, the failure reason and
// message, the v1beta2 counters, and turns the failure domains' map into a list sorted by name (the
// readiness booleans become status.initialization in the Cluster's conversion, which can tell an unset
// v1beta2 value from false).
func Convert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus(in *ClusterStatus, out *clusterv1.ClusterStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
		if cp := in.V1Beta2.ControlPlane; cp != nil {
			out.ControlPlane = &clusterv1.ClusterControlPlaneStatus{}
			if err := Convert_v1beta1_ClusterControlPlaneStatus_To_v1beta2_ClusterControlPlaneStatus(cp, out.ControlPlane, s); err != nil {
				return err
			}
		}
		if w := in.V1Beta2.Workers; w != nil {
			out.Workers = &clusterv1.WorkersStatus{}
			if err := Convert_v1beta1_WorkersStatus_To_v1beta2_WorkersStatus(w, out.Workers, s); err != nil {
				return err
			}
		}
	}
	if in.FailureDomains != nil {
		out.FailureDomains = make([]clusterv1.FailureDomain, 0, len(in.FailureDomains))
		for _, name := range slices.Sorted(maps.Keys(in.FailureDomains)) {
			fd := in.FailureDomains[name]
			out.FailureDomains = append(out.FailureDomains, clusterv1.FailureDomain{Name: name, ControlPlane: new(fd.ControlPlane), Attributes: fd.Attributes})
		}
	}
	if in.Conditions != nil || in.FailureReason != nil || in.FailureMessage != nil {
		out.Deprecated = &clusterv1.ClusterDeprecatedStatus{V1Beta1: &clusterv1.ClusterV1Beta1DeprecatedStatus{
			FailureReason: (*clusterv1.ClusterStatusError)(in.FailureReason), FailureMessage: in.FailureMessage}}
		if in.Conditions != nil {
			Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
		}
	}
	return nil
}

// Convert_v1beta2_ClusterStatus_To_v1beta1_ClusterStatus is the reverse of
// Convert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus, with status.initialization as the readiness
// booleans.
func Convert_v1beta2_ClusterStatus_To_v1beta1_ClusterStatus(in *clusterv1.ClusterStatus, out *ClusterStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_ClusterStatus_To_v1beta1_ClusterStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		if in.Deprecated.V1Beta1.Conditions != nil {
			Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
		}
		out.FailureReason = (*ClusterStatusError)(in.Deprecated.V1Beta1.FailureReason)
		out.FailureMessage = in.Deprecated.V1Beta1.FailureMessage
	}
	out.ControlPlaneReady = boolValue(in.Initialization.ControlPlaneInitialized)
	out.InfrastructureReady = boolValue(in.Initialization.InfrastructureProvisioned)
	if in.FailureDomains != nil {
		out.FailureDomains = FailureDomains{}
		for _, fd := range in.FailureDomains {
			out.FailureDomains[fd.Name] = FailureDomainSpec{ControlPlane: boolValue(fd.ControlPlane), Attributes: fd.Attributes}
		}
	}
	if in.Conditions != nil || in.ControlPlane != nil || in.Workers != nil {
		out.V1Beta2 = &ClusterV1Beta2Status{Conditions: in.Conditions}
		if cp := in.ControlPlane; cp != nil {
			out.V1Beta2.ControlPlane = &ClusterControlPlaneStatus{}
			if err := Convert_v1beta2_ClusterControlPlaneStatus_To_v1beta1_ClusterControlPlaneStatus(cp, out.V1Beta2.ControlPlane, s); err != nil {
				return err
			}
		}
		if w := in.Workers; w != nil {
			out.V1Beta2.Workers = &WorkersStatus{}
			if err := Convert_v1beta2_WorkersStatus_To_v1beta1_WorkersStatus(w, out.V1Beta2.Workers, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func boolValue(b *bool) bool {
	return b != nil && *b
}

// Machines.

// Convert_v1beta1_Bootstrap_To_v1beta2_Bootstrap leaves configRef to the kinds' conversions, which know the
// versions of references.
func Convert_v1beta1_Bootstrap_To_v1beta2_Bootstrap(in *Bootstrap, out *clusterv1.Bootstrap, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta1_Bootstrap_To_v1beta2_Bootstrap(in, out, s)
}

// Convert_v1beta2_Bootstrap_To_v1beta1_Bootstrap leaves configRef to the kinds' conversions.
func Convert_v1beta2_Bootstrap_To_v1beta1_Bootstrap(in *clusterv1.Bootstrap, out *Bootstrap, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta2_Bootstrap_To_v1beta1_Bootstrap(in, out, s)
}

// Convert_v1beta1_MachineSpec_To_v1beta2_MachineSpec moves the timeouts to deletion, in seconds
// (infrastructureRef is the kinds' conversions' concern).
func Convert_v1beta1_MachineSpec_To_v1beta2_MachineSpec(in *MachineSpec, out *clusterv1.MachineSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineSpec_To_v1beta2_MachineSpec(in, out, s); err != nil {
		return err
	}
	out.Deletion = clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: seconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: seconds(in.NodeVolumeDetachTimeout), NodeDeletionTimeoutSeconds: seconds(in.NodeDeletionTimeout)}
	return nil
}

// Convert_v1beta2_MachineSpec_To_v1beta1_MachineSpec moves deletion's timeouts back; minReadySeconds and
// taints have no v1beta1 field in a Machine (a MachineSet's and a MachineDeployment's minReadySeconds are
// in their spec).
func Convert_v1beta2_MachineSpec_To_v1beta1_MachineSpec(in *clusterv1.MachineSpec, out *MachineSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineSpec_To_v1beta1_MachineSpec(in, out, s); err != nil {
		return err
	}
	// v1beta1's optional strings are pointers: unset rather than "".
	out.Version, out.ProviderID, out.FailureDomain = stringOrNil(in.Version), stringOrNil(in.ProviderID), stringOrNil(in.FailureDomain)
	out.NodeDrainTimeout = duration(in.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = duration(in.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = duration(in.Deletion.NodeDeletionTimeoutSeconds)
	return nil
}

// Convert_v1beta1_MachineStatus_To_v1beta2_MachineStatus moves the conditions, failure reason and message;
// nodeRef keeps the Node's name (v1beta2's nodeRef is a name); the phase is Updating while the Updating
// condition is True.
func Convert_v1beta1_MachineStatus_To_v1beta2_MachineStatus(in *MachineStatus, out *clusterv1.MachineStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineStatus_To_v1beta2_MachineStatus(in, out, s); err != nil {
		return err
	}
	if in.NodeRef != nil {
		out.NodeRef.Name = in.NodeRef.Name
	}
	out.LastUpdated = timeValue(in.LastUpdated)
	out.CertificatesExpiryDate = timeValue(in.CertificatesExpiryDate)
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	// v1beta1 has no Updating phase: a running Machine whose Updating condition is True is Updating.
	if in.Phase == string(MachinePhaseRunning) && meta.IsStatusConditionTrue(out.Conditions, MachineUpdatingV1Beta2Condition) {
		out.Phase = string(clusterv1.MachinePhaseUpdating)
	}
	if in.Conditions != nil || in.FailureReason != nil || in.FailureMessage != nil {
		out.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{
			FailureReason: (*clusterv1.MachineStatusError)(in.FailureReason), FailureMessage: in.FailureMessage}}
		if in.Conditions != nil {
			Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
		}
	}
	return nil
}

// Convert_v1beta2_MachineStatus_To_v1beta1_MachineStatus is the reverse of
// Convert_v1beta1_MachineStatus_To_v1beta2_MachineStatus, with status.initialization as the readiness
// booleans and v1beta2's Updating phase as Running (v1beta1 has no such phase).
func Convert_v1beta2_MachineStatus_To_v1beta1_MachineStatus(in *clusterv1.MachineStatus, out *MachineStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineStatus_To_v1beta1_MachineStatus(in, out, s); err != nil {
		return err
	}
	if out.Phase == string(clusterv1.MachinePhaseUpdating) {
		out.Phase = string(MachinePhaseRunning)
	}
	if in.NodeRef.Name != "" {
		out.NodeRef = &corev1.ObjectReference{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Node", Name: in.NodeRef.Name}
	}
	out.LastUpdated = timeOrNil(in.LastUpdated)
	out.CertificatesExpiryDate = timeOrNil(in.CertificatesExpiryDate)
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		if in.Deprecated.V1Beta1.Conditions != nil {
			Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
		}
		out.FailureReason = (*MachineStatusError)(in.Deprecated.V1Beta1.FailureReason)
		out.FailureMessage = in.Deprecated.V1Beta1.FailureMessage
	}
	out.BootstrapReady = boolValue(in.Initialization.BootstrapDataSecretCreated)
	out.InfrastructureReady = boolValue(in.Initialization.InfrastructureProvisioned)
	if in.Conditions != nil {
		out.V1Beta2 = &MachineV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// Convert_v1beta1_MachineDeletionStatus_To_v1beta2_MachineDeletionStatus converts the times, pointers in
// v1beta1.
func Convert_v1beta1_MachineDeletionStatus_To_v1beta2_MachineDeletionStatus(in *MachineDeletionStatus, out *clusterv1.MachineDeletionStatus, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.NodeDrainStartTime = timeValue(in.NodeDrainStartTime)
	out.WaitForNodeVolumeDetachStartTime = timeValue(in.WaitForNodeVolumeDetachStartTime)
	out.WaitForPreDrainHookStartTime = timeValue(in.WaitForPreDrainHookStartTime)
	out.WaitForPreTerminateHookStartTime = timeValue(in.WaitForPreTerminateHookStartTime)
	return nil
}

// Convert_v1beta2_MachineDeletionStatus_To_v1beta1_MachineDeletionStatus converts the times (pointers in v1beta1).
func Convert_v1beta2_MachineDeletionStatus_To_v1beta1_MachineDeletionStatus(in *clusterv1.MachineDeletionStatus, out *MachineDeletionStatus, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.NodeDrainStartTime = timeOrNil(in.NodeDrainStartTime)
	out.WaitForNodeVolumeDetachStartTime = timeOrNil(in.WaitForNodeVolumeDetachStartTime)
	out.WaitForPreDrainHookStartTime = timeOrNil(in.WaitForPreDrainHookStartTime)
	out.WaitForPreTerminateHookStartTime = timeOrNil(in.WaitForPreTerminateHookStartTime)
	return nil
}

// Convert_v1beta1_MachineSetSpec_To_v1beta2_MachineSetSpec moves deletePolicy to deletion.order and
// machineNamingStrategy to machineNaming (minReadySeconds goes to the template's spec in the MachineSet's
// conversion).
func Convert_v1beta1_MachineSetSpec_To_v1beta2_MachineSetSpec(in *MachineSetSpec, out *clusterv1.MachineSetSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineSetSpec_To_v1beta2_MachineSetSpec(in, out, s); err != nil {
		return err
	}
	out.Deletion.Order = clusterv1.MachineSetDeletionOrder(in.DeletePolicy)
	if in.MachineNamingStrategy != nil {
		out.MachineNaming.Template = in.MachineNamingStrategy.Template
	}
	return nil
}

// Convert_v1beta2_MachineSetSpec_To_v1beta1_MachineSetSpec is the reverse of
// Convert_v1beta1_MachineSetSpec_To_v1beta2_MachineSetSpec.
func Convert_v1beta2_MachineSetSpec_To_v1beta1_MachineSetSpec(in *clusterv1.MachineSetSpec, out *MachineSetSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineSetSpec_To_v1beta1_MachineSetSpec(in, out, s); err != nil {
		return err
	}
	out.DeletePolicy = string(in.Deletion.Order)
	if in.MachineNaming.Template != "" {
		out.MachineNamingStrategy = &MachineNamingStrategy{Template: in.MachineNaming.Template}
	}
	return nil
}

// Convert_v1beta1_MachineSetStatus_To_v1beta2_MachineSetStatus moves the conditions, the failure reason and
// message and the replica counters whose meaning changed: v1beta1's go to status.deprecated.v1beta1,
// status.v1beta2's become status's.
func Convert_v1beta1_MachineSetStatus_To_v1beta2_MachineSetStatus(in *MachineSetStatus, out *clusterv1.MachineSetStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineSetStatus_To_v1beta2_MachineSetStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, nil, nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
		out.ReadyReplicas = in.V1Beta2.ReadyReplicas
		out.AvailableReplicas = in.V1Beta2.AvailableReplicas
		out.UpToDateReplicas = in.V1Beta2.UpToDateReplicas
	}
	out.Deprecated = &clusterv1.MachineSetDeprecatedStatus{V1Beta1: &clusterv1.MachineSetV1Beta1DeprecatedStatus{
		FailureReason: (*clusterv1.MachineSetStatusError)(in.FailureReason), FailureMessage: in.FailureMessage,
		FullyLabeledReplicas: in.FullyLabeledReplicas, ReadyReplicas: in.ReadyReplicas, AvailableReplicas: in.AvailableReplicas}}
	if in.Conditions != nil {
		Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_MachineSetStatus_To_v1beta1_MachineSetStatus is the reverse of
// Convert_v1beta1_MachineSetStatus_To_v1beta2_MachineSetStatus.
func Convert_v1beta2_MachineSetStatus_To_v1beta1_MachineSetStatus(in *clusterv1.MachineSetStatus, out *MachineSetStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineSetStatus_To_v1beta1_MachineSetStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, 0, 0
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		d := in.Deprecated.V1Beta1
		if d.Conditions != nil {
			Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&d.Conditions, &out.Conditions)
		}
		out.FailureReason = (*MachineSetStatusError)(d.FailureReason)
		out.FailureMessage = d.FailureMessage
		out.FullyLabeledReplicas, out.ReadyReplicas, out.AvailableReplicas = d.FullyLabeledReplicas, d.ReadyReplicas, d.AvailableReplicas
	}
	if in.Conditions != nil || in.ReadyReplicas != nil || in.AvailableReplicas != nil || in.UpToDateReplicas != nil {
		out.V1Beta2 = &MachineSetV1Beta2Status{Conditions: in.Conditions, ReadyReplicas: in.ReadyReplicas,
			AvailableReplicas: in.AvailableReplicas, UpToDateReplicas: in.UpToDateReplicas}
	}
	return nil
}

// MachineDeployments: v1beta1's strategy is v1beta2's rollout.strategy, deletion.order and
// remediation.maxInFlight.

func strategyFromV1beta1(in *MachineDeploymentStrategy) clusterv1.MachineDeploymentRolloutStrategy {
	var out clusterv1.MachineDeploymentRolloutStrategy
	if in == nil {
		return out
	}
	out.Type = clusterv1.MachineDeploymentRolloutStrategyType(in.Type)
	if in.RollingUpdate != nil {
		out.RollingUpdate = clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{MaxUnavailable: in.RollingUpdate.MaxUnavailable,
			MaxSurge: in.RollingUpdate.MaxSurge}
	}
	return out
}

func deletionOrderFromV1beta1(in *MachineDeploymentStrategy) clusterv1.MachineSetDeletionOrder {
	if in == nil || in.RollingUpdate == nil || in.RollingUpdate.DeletePolicy == nil {
		return ""
	}
	return clusterv1.MachineSetDeletionOrder(*in.RollingUpdate.DeletePolicy)
}

func maxInFlightFromV1beta1(in *MachineDeploymentStrategy) *intstr.IntOrString {
	if in == nil || in.Remediation == nil {
		return nil
	}
	return in.Remediation.MaxInFlight
}

// strategyToV1beta1 returns nil when there is nothing to show.
func strategyToV1beta1(strategy clusterv1.MachineDeploymentRolloutStrategy, order clusterv1.MachineSetDeletionOrder, maxInFlight *intstr.IntOrString) *MachineDeploymentStrategy {
	out := &MachineDeploymentStrategy{Type: MachineDeploymentStrategyType(strategy.Type)}
	if strategy.RollingUpdate != (clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{}) || order != "" {
		out.RollingUpdate = &MachineRollingUpdateDeployment{MaxUnavailable: strategy.RollingUpdate.MaxUnavailable,
			MaxSurge: strategy.RollingUpdate.MaxSurge, DeletePolicy: stringOrNil(string(order))}
	}
	if maxInFlight != nil {
		out.Remediation = &RemediationStrategy{MaxInFlight: maxInFlight}
	}
	if reflect.DeepEqual(out, &MachineDeploymentStrategy{}) {
		return nil
	}
	return out
}

// Convert_v1beta1_MachineDeploymentSpec_To_v1beta2_MachineDeploymentSpec moves strategy, rolloutAfter and
// machineNamingStrategy (minReadySeconds goes to the template's spec in the MachineDeployment's
// conversion). v1beta2 has no revisionHistoryLimit nor progressDeadlineSeconds, which no version of
// Cluster API implemented: upstream drops them, and so does capstan.
func Convert_v1beta1_MachineDeploymentSpec_To_v1beta2_MachineDeploymentSpec(in *MachineDeploymentSpec, out *clusterv1.MachineDeploymentSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineDeploymentSpec_To_v1beta2_MachineDeploymentSpec(in, out, s); err != nil {
		return err
	}
	out.Rollout.Strategy = strategyFromV1beta1(in.Strategy)
	out.Rollout.After = timeValue(in.RolloutAfter)
	out.Deletion.Order = deletionOrderFromV1beta1(in.Strategy)
	out.Remediation.MaxInFlight = maxInFlightFromV1beta1(in.Strategy)
	if in.MachineNamingStrategy != nil {
		out.MachineNaming.Template = in.MachineNamingStrategy.Template
	}
	return nil
}

// Convert_v1beta2_MachineDeploymentSpec_To_v1beta1_MachineDeploymentSpec is the reverse of
// Convert_v1beta1_MachineDeploymentSpec_To_v1beta2_MachineDeploymentSpec.
func Convert_v1beta2_MachineDeploymentSpec_To_v1beta1_MachineDeploymentSpec(in *clusterv1.MachineDeploymentSpec, out *MachineDeploymentSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineDeploymentSpec_To_v1beta1_MachineDeploymentSpec(in, out, s); err != nil {
		return err
	}
	out.Strategy = strategyToV1beta1(in.Rollout.Strategy, in.Deletion.Order, in.Remediation.MaxInFlight)
	out.RolloutAfter = timeOrNil(in.Rollout.After)
	if in.MachineNaming.Template != "" {
		out.MachineNamingStrategy = &MachineNamingStrategy{Template: in.MachineNaming.Template}
	}
	return nil
}

// Convert_v1beta1_MachineDeploymentStatus_To_v1beta2_MachineDeploymentStatus moves the conditions and the
// replica counters whose meaning changed.
func Convert_v1beta1_MachineDeploymentStatus_To_v1beta2_MachineDeploymentStatus(in *MachineDeploymentStatus, out *clusterv1.MachineDeploymentStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineDeploymentStatus_To_v1beta2_MachineDeploymentStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, nil, nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
		out.ReadyReplicas = in.V1Beta2.ReadyReplicas
		out.AvailableReplicas = in.V1Beta2.AvailableReplicas
		out.UpToDateReplicas = in.V1Beta2.UpToDateReplicas
	}
	out.Deprecated = &clusterv1.MachineDeploymentDeprecatedStatus{V1Beta1: &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{
		UpdatedReplicas: in.UpdatedReplicas, ReadyReplicas: in.ReadyReplicas, AvailableReplicas: in.AvailableReplicas,
		UnavailableReplicas: in.UnavailableReplicas}}
	if in.Conditions != nil {
		Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_MachineDeploymentStatus_To_v1beta1_MachineDeploymentStatus is the reverse of
// Convert_v1beta1_MachineDeploymentStatus_To_v1beta2_MachineDeploymentStatus.
func Convert_v1beta2_MachineDeploymentStatus_To_v1beta1_MachineDeploymentStatus(in *clusterv1.MachineDeploymentStatus, out *MachineDeploymentStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineDeploymentStatus_To_v1beta1_MachineDeploymentStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, 0, 0
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		d := in.Deprecated.V1Beta1
		if d.Conditions != nil {
			Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&d.Conditions, &out.Conditions)
		}
		out.UpdatedReplicas, out.ReadyReplicas, out.AvailableReplicas, out.UnavailableReplicas = d.UpdatedReplicas, d.ReadyReplicas, d.AvailableReplicas, d.UnavailableReplicas
	}
	if in.Conditions != nil || in.ReadyReplicas != nil || in.AvailableReplicas != nil || in.UpToDateReplicas != nil {
		out.V1Beta2 = &MachineDeploymentV1Beta2Status{Conditions: in.Conditions, ReadyReplicas: in.ReadyReplicas,
			AvailableReplicas: in.AvailableReplicas, UpToDateReplicas: in.UpToDateReplicas}
	}
	return nil
}

// MachineHealthChecks.

// Convert_v1beta1_MachineHealthCheckSpec_To_v1beta2_MachineHealthCheckSpec moves the checks and the
// remediation.
func Convert_v1beta1_MachineHealthCheckSpec_To_v1beta2_MachineHealthCheckSpec(in *MachineHealthCheckSpec, out *clusterv1.MachineHealthCheckSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineHealthCheckSpec_To_v1beta2_MachineHealthCheckSpec(in, out, s); err != nil {
		return err
	}
	out.Checks, out.Remediation.TriggerIf, out.Remediation.TemplateRef = healthCheckFromV1beta1(&MachineHealthCheckClass{
		UnhealthyConditions: in.UnhealthyConditions, UnhealthyMachineConditions: in.UnhealthyMachineConditions, MaxUnhealthy: in.MaxUnhealthy,
		UnhealthyRange: in.UnhealthyRange, NodeStartupTimeout: in.NodeStartupTimeout, RemediationTemplate: in.RemediationTemplate})
	return nil
}

// Convert_v1beta1_UnhealthyMachineCondition_To_v1beta2_UnhealthyMachineCondition converts the timeout to whole
// seconds.
func Convert_v1beta1_UnhealthyMachineCondition_To_v1beta2_UnhealthyMachineCondition(in *UnhealthyMachineCondition, out *clusterv1.UnhealthyMachineCondition, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	*out = clusterv1.UnhealthyMachineCondition{Type: in.Type, Status: in.Status, TimeoutSeconds: seconds(&in.Timeout)}
	return nil
}

// Convert_v1beta2_UnhealthyMachineCondition_To_v1beta1_UnhealthyMachineCondition is the reverse of
// Convert_v1beta1_UnhealthyMachineCondition_To_v1beta2_UnhealthyMachineCondition.
func Convert_v1beta2_UnhealthyMachineCondition_To_v1beta1_UnhealthyMachineCondition(in *clusterv1.UnhealthyMachineCondition, out *UnhealthyMachineCondition, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	*out = UnhealthyMachineCondition{Type: in.Type, Status: in.Status}
	if d := duration(in.TimeoutSeconds); d != nil {
		out.Timeout = *d
	}
	return nil
}

// Convert_v1beta2_MachineHealthCheckSpec_To_v1beta1_MachineHealthCheckSpec is the reverse of
// Convert_v1beta1_MachineHealthCheckSpec_To_v1beta2_MachineHealthCheckSpec.
func Convert_v1beta2_MachineHealthCheckSpec_To_v1beta1_MachineHealthCheckSpec(in *clusterv1.MachineHealthCheckSpec, out *MachineHealthCheckSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineHealthCheckSpec_To_v1beta1_MachineHealthCheckSpec(in, out, s); err != nil {
		return err
	}
	if c := healthCheckToV1beta1(in.Checks, in.Remediation.TriggerIf, in.Remediation.TemplateRef); c != nil {
		out.UnhealthyConditions, out.UnhealthyMachineConditions, out.MaxUnhealthy = c.UnhealthyConditions, c.UnhealthyMachineConditions, c.MaxUnhealthy
		out.UnhealthyRange, out.NodeStartupTimeout, out.RemediationTemplate = c.UnhealthyRange, c.NodeStartupTimeout, c.RemediationTemplate
	}
	return nil
}

// Convert_v1beta1_MachineHealthCheckStatus_To_v1beta2_MachineHealthCheckStatus moves the conditions.
func Convert_v1beta1_MachineHealthCheckStatus_To_v1beta2_MachineHealthCheckStatus(in *MachineHealthCheckStatus, out *clusterv1.MachineHealthCheckStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachineHealthCheckStatus_To_v1beta2_MachineHealthCheckStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	if in.Conditions != nil {
		out.Deprecated = &clusterv1.MachineHealthCheckDeprecatedStatus{V1Beta1: &clusterv1.MachineHealthCheckV1Beta1DeprecatedStatus{}}
		Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_MachineHealthCheckStatus_To_v1beta1_MachineHealthCheckStatus moves the conditions.
func Convert_v1beta2_MachineHealthCheckStatus_To_v1beta1_MachineHealthCheckStatus(in *clusterv1.MachineHealthCheckStatus, out *MachineHealthCheckStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachineHealthCheckStatus_To_v1beta1_MachineHealthCheckStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil && in.Deprecated.V1Beta1.Conditions != nil {
		Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
	}
	if in.Conditions != nil {
		out.V1Beta2 = &MachineHealthCheckV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// MachinePools.

// Convert_v1beta1_MachinePoolSpec_To_v1beta2_MachinePoolSpec leaves minReadySeconds to the MachinePool's
// conversion (v1beta2 has it in the template's spec).
func Convert_v1beta1_MachinePoolSpec_To_v1beta2_MachinePoolSpec(in *MachinePoolSpec, out *clusterv1.MachinePoolSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta1_MachinePoolSpec_To_v1beta2_MachinePoolSpec(in, out, s)
}

// Convert_v1beta1_MachinePoolStatus_To_v1beta2_MachinePoolStatus moves the conditions, failure reason and
// message and the replica counters whose meaning changed.
func Convert_v1beta1_MachinePoolStatus_To_v1beta2_MachinePoolStatus(in *MachinePoolStatus, out *clusterv1.MachinePoolStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_MachinePoolStatus_To_v1beta2_MachinePoolStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, nil, nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
		out.ReadyReplicas = in.V1Beta2.ReadyReplicas
		out.AvailableReplicas = in.V1Beta2.AvailableReplicas
		out.UpToDateReplicas = in.V1Beta2.UpToDateReplicas
	}
	out.Deprecated = &clusterv1.MachinePoolDeprecatedStatus{V1Beta1: &clusterv1.MachinePoolV1Beta1DeprecatedStatus{
		FailureReason: (*clusterv1.MachinePoolStatusFailure)(in.FailureReason), FailureMessage: in.FailureMessage,
		ReadyReplicas: in.ReadyReplicas, AvailableReplicas: in.AvailableReplicas, UnavailableReplicas: in.UnavailableReplicas}}
	if in.Conditions != nil {
		Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &out.Deprecated.V1Beta1.Conditions)
	}
	return nil
}

// Convert_v1beta2_MachinePoolStatus_To_v1beta1_MachinePoolStatus is the reverse of
// Convert_v1beta1_MachinePoolStatus_To_v1beta2_MachinePoolStatus, with status.initialization as the
// readiness booleans.
func Convert_v1beta2_MachinePoolStatus_To_v1beta1_MachinePoolStatus(in *clusterv1.MachinePoolStatus, out *MachinePoolStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_MachinePoolStatus_To_v1beta1_MachinePoolStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas = nil, 0, 0
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		d := in.Deprecated.V1Beta1
		if d.Conditions != nil {
			Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&d.Conditions, &out.Conditions)
		}
		out.FailureReason = (*MachinePoolStatusFailure)(d.FailureReason)
		out.FailureMessage = d.FailureMessage
		out.ReadyReplicas, out.AvailableReplicas, out.UnavailableReplicas = d.ReadyReplicas, d.AvailableReplicas, d.UnavailableReplicas
	}
	out.BootstrapReady = boolValue(in.Initialization.BootstrapDataSecretCreated)
	out.InfrastructureReady = boolValue(in.Initialization.InfrastructureProvisioned)
	if in.Conditions != nil || in.ReadyReplicas != nil || in.AvailableReplicas != nil || in.UpToDateReplicas != nil {
		out.V1Beta2 = &MachinePoolV1Beta2Status{Conditions: in.Conditions, ReadyReplicas: in.ReadyReplicas,
			AvailableReplicas: in.AvailableReplicas, UpToDateReplicas: in.UpToDateReplicas}
	}
	return nil
}

// Convert_v1_ObjectReference_To_v1beta2_ContractVersionedObjectReference does nothing: a reference's
// conversion needs the version a provider's CRD serves, which the kinds' conversions in internal/conversion
// know (conversion-gen calls it where a Machine's spec has a value reference in both versions).
func Convert_v1_ObjectReference_To_v1beta2_ContractVersionedObjectReference(_ *corev1.ObjectReference, _ *clusterv1.ContractVersionedObjectReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return nil
}

// Convert_v1beta2_ContractVersionedObjectReference_To_v1_ObjectReference does nothing, as
// Convert_v1_ObjectReference_To_v1beta2_ContractVersionedObjectReference.
func Convert_v1beta2_ContractVersionedObjectReference_To_v1_ObjectReference(_ *clusterv1.ContractVersionedObjectReference, _ *corev1.ObjectReference, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return nil
}

package v1beta1

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	bootstrapv1beta1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// The hand-written halves of the conversion between this package and controlplane v1beta2 (the hub), which
// zz_generated.conversion.go calls: field mapping alone (upstream's names, which conversion-gen looks for).
// The embedded KubeadmConfigSpec is the bootstrap package's conversion: make generate runs conversion-gen
// on every tagged package at once, so it finds the bootstrap package's KubeadmConfigSpec, ObjectMeta and
// condition conversions itself (a local wrapper of the same pair is a duplicate it refuses). The machine template's
// infrastructureRef (a ContractVersionedObjectReference in v1beta2, whose version the manager resolves)
// and what one version cannot express are left to internal/conversion.

// Convert_v1beta1_KubeadmControlPlaneSpec_To_v1beta2_KubeadmControlPlaneSpec converts the spec: rolloutBefore,
// rolloutAfter and rolloutStrategy are v1beta2's rollout, remediationStrategy its remediation (in seconds),
// machineNamingStrategy its machineNaming.
func Convert_v1beta1_KubeadmControlPlaneSpec_To_v1beta2_KubeadmControlPlaneSpec(in *KubeadmControlPlaneSpec, out *controlplanev1.KubeadmControlPlaneSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmControlPlaneSpec_To_v1beta2_KubeadmControlPlaneSpec(in, out, s); err != nil {
		return err
	}
	rolloutToV1beta2(in.RolloutBefore, in.RolloutAfter, in.RolloutStrategy, &out.Rollout)
	remediationToV1beta2(in.RemediationStrategy, &out.Remediation)
	if in.MachineNamingStrategy != nil {
		out.MachineNaming.Template = in.MachineNamingStrategy.Template
	}
	return nil
}

// Convert_v1beta2_KubeadmControlPlaneSpec_To_v1beta1_KubeadmControlPlaneSpec converts the spec back.
func Convert_v1beta2_KubeadmControlPlaneSpec_To_v1beta1_KubeadmControlPlaneSpec(in *controlplanev1.KubeadmControlPlaneSpec, out *KubeadmControlPlaneSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmControlPlaneSpec_To_v1beta1_KubeadmControlPlaneSpec(in, out, s); err != nil {
		return err
	}
	out.RolloutBefore, out.RolloutAfter, out.RolloutStrategy = rolloutToV1beta1(&in.Rollout)
	out.RemediationStrategy = remediationToV1beta1(&in.Remediation)
	out.MachineNamingStrategy = nil
	if in.MachineNaming.Template != "" {
		out.MachineNamingStrategy = &MachineNamingStrategy{Template: in.MachineNaming.Template}
	}
	return nil
}

// Convert_v1beta1_KubeadmControlPlaneTemplateResourceSpec_To_v1beta2_KubeadmControlPlaneTemplateResourceSpec converts the template's spec, as the control plane's.
func Convert_v1beta1_KubeadmControlPlaneTemplateResourceSpec_To_v1beta2_KubeadmControlPlaneTemplateResourceSpec(in *KubeadmControlPlaneTemplateResourceSpec, out *controlplanev1.KubeadmControlPlaneTemplateResourceSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmControlPlaneTemplateResourceSpec_To_v1beta2_KubeadmControlPlaneTemplateResourceSpec(in, out, s); err != nil {
		return err
	}
	if in.MachineTemplate != nil {
		if err := Convert_v1beta1_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta2_KubeadmControlPlaneTemplateMachineTemplate(in.MachineTemplate, &out.MachineTemplate, s); err != nil {
			return err
		}
	}
	rolloutToV1beta2(in.RolloutBefore, in.RolloutAfter, in.RolloutStrategy, &out.Rollout)
	remediationToV1beta2(in.RemediationStrategy, &out.Remediation)
	if in.MachineNamingStrategy != nil {
		out.MachineNaming.Template = in.MachineNamingStrategy.Template
	}
	return nil
}

// Convert_v1beta2_KubeadmControlPlaneTemplateResourceSpec_To_v1beta1_KubeadmControlPlaneTemplateResourceSpec converts the template's spec back.
func Convert_v1beta2_KubeadmControlPlaneTemplateResourceSpec_To_v1beta1_KubeadmControlPlaneTemplateResourceSpec(in *controlplanev1.KubeadmControlPlaneTemplateResourceSpec, out *KubeadmControlPlaneTemplateResourceSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmControlPlaneTemplateResourceSpec_To_v1beta1_KubeadmControlPlaneTemplateResourceSpec(in, out, s); err != nil {
		return err
	}
	out.MachineTemplate = nil
	if !reflect.ValueOf(in.MachineTemplate).IsZero() {
		out.MachineTemplate = &KubeadmControlPlaneTemplateMachineTemplate{}
		if err := Convert_v1beta2_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta1_KubeadmControlPlaneTemplateMachineTemplate(&in.MachineTemplate, out.MachineTemplate, s); err != nil {
			return err
		}
		if reflect.ValueOf(*out.MachineTemplate).IsZero() {
			out.MachineTemplate = nil
		}
	}
	out.RolloutBefore, out.RolloutAfter, out.RolloutStrategy = rolloutToV1beta1(&in.Rollout)
	out.RemediationStrategy = remediationToV1beta1(&in.Remediation)
	out.MachineNamingStrategy = nil
	if in.MachineNaming.Template != "" {
		out.MachineNamingStrategy = &MachineNamingStrategy{Template: in.MachineNaming.Template}
	}
	return nil
}

// Convert_v1beta1_KubeadmControlPlaneMachineTemplate_To_v1beta2_KubeadmControlPlaneMachineTemplate converts the
// machine template: readinessGates and the node timeouts (in seconds, under deletion) are in v1beta2's spec.
// infrastructureRef is converted by internal/conversion.
func Convert_v1beta1_KubeadmControlPlaneMachineTemplate_To_v1beta2_KubeadmControlPlaneMachineTemplate(in *KubeadmControlPlaneMachineTemplate, out *controlplanev1.KubeadmControlPlaneMachineTemplate, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmControlPlaneMachineTemplate_To_v1beta2_KubeadmControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.Spec.ReadinessGates = nil
	if in.ReadinessGates != nil {
		out.Spec.ReadinessGates = make([]clusterv1.MachineReadinessGate, len(in.ReadinessGates))
		for i, g := range in.ReadinessGates {
			out.Spec.ReadinessGates[i] = clusterv1.MachineReadinessGate{ConditionType: g.ConditionType, Polarity: clusterv1.ConditionPolarity(g.Polarity)}
		}
	}
	d := &out.Spec.Deletion
	d.NodeDrainTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeDrainTimeout)
	d.NodeVolumeDetachTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeVolumeDetachTimeout)
	d.NodeDeletionTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeDeletionTimeout)
	out.Spec.Taints = taintsToV1beta2(in.Taints)
	return nil
}

// taintsToV1beta2 and taintsToV1beta1 convert taints, whose fields are the same in both versions.
func taintsToV1beta2(in []clusterv1beta1.MachineTaint) []clusterv1.MachineTaint {
	if in == nil {
		return nil
	}
	out := make([]clusterv1.MachineTaint, len(in))
	for i, t := range in {
		out[i] = clusterv1.MachineTaint{Key: t.Key, Value: t.Value, Effect: t.Effect, Propagation: clusterv1.MachineTaintPropagation(t.Propagation)}
	}
	return out
}

func taintsToV1beta1(in []clusterv1.MachineTaint) []clusterv1beta1.MachineTaint {
	if in == nil {
		return nil
	}
	out := make([]clusterv1beta1.MachineTaint, len(in))
	for i, t := range in {
		out[i] = clusterv1beta1.MachineTaint{Key: t.Key, Value: t.Value, Effect: t.Effect, Propagation: clusterv1beta1.MachineTaintPropagation(t.Propagation)}
	}
	return out
}

// Convert_v1beta2_KubeadmControlPlaneMachineTemplate_To_v1beta1_KubeadmControlPlaneMachineTemplate converts the
// machine template back.
func Convert_v1beta2_KubeadmControlPlaneMachineTemplate_To_v1beta1_KubeadmControlPlaneMachineTemplate(in *controlplanev1.KubeadmControlPlaneMachineTemplate, out *KubeadmControlPlaneMachineTemplate, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmControlPlaneMachineTemplate_To_v1beta1_KubeadmControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.ReadinessGates = nil
	if in.Spec.ReadinessGates != nil {
		out.ReadinessGates = make([]clusterv1beta1.MachineReadinessGate, len(in.Spec.ReadinessGates))
		for i, g := range in.Spec.ReadinessGates {
			out.ReadinessGates[i] = clusterv1beta1.MachineReadinessGate{ConditionType: g.ConditionType, Polarity: clusterv1beta1.ConditionPolarity(g.Polarity)}
		}
	}
	d := &in.Spec.Deletion
	out.NodeDrainTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeDeletionTimeoutSeconds)
	out.Taints = taintsToV1beta1(in.Spec.Taints)
	return nil
}

// Convert_v1beta1_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta2_KubeadmControlPlaneTemplateMachineTemplate converts the template's machine template: the node timeouts in seconds, under deletion.
func Convert_v1beta1_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta2_KubeadmControlPlaneTemplateMachineTemplate(in *KubeadmControlPlaneTemplateMachineTemplate, out *controlplanev1.KubeadmControlPlaneTemplateMachineTemplate, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta2_KubeadmControlPlaneTemplateMachineTemplate(in, out, s); err != nil {
		return err
	}
	d := &out.Spec.Deletion
	d.NodeDrainTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeDrainTimeout)
	d.NodeVolumeDetachTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeVolumeDetachTimeout)
	d.NodeDeletionTimeoutSeconds = bootstrapv1beta1.DurationToSeconds(in.NodeDeletionTimeout)
	out.Spec.Taints = taintsToV1beta2(in.Taints)
	return nil
}

// Convert_v1beta2_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta1_KubeadmControlPlaneTemplateMachineTemplate converts the template's machine template back.
func Convert_v1beta2_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta1_KubeadmControlPlaneTemplateMachineTemplate(in *controlplanev1.KubeadmControlPlaneTemplateMachineTemplate, out *KubeadmControlPlaneTemplateMachineTemplate, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmControlPlaneTemplateMachineTemplate_To_v1beta1_KubeadmControlPlaneTemplateMachineTemplate(in, out, s); err != nil {
		return err
	}
	d := &in.Spec.Deletion
	out.NodeDrainTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = bootstrapv1beta1.SecondsToDuration(d.NodeDeletionTimeoutSeconds)
	out.Taints = taintsToV1beta1(in.Spec.Taints)
	return nil
}

// Convert_v1beta1_LastRemediationStatus_To_v1beta2_LastRemediationStatus converts the last remediation:
// timestamp is v1beta2's time.
func Convert_v1beta1_LastRemediationStatus_To_v1beta2_LastRemediationStatus(in *LastRemediationStatus, out *controlplanev1.LastRemediationStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_LastRemediationStatus_To_v1beta2_LastRemediationStatus(in, out, s); err != nil {
		return err
	}
	out.Time = in.Timestamp
	return nil
}

// Convert_v1beta2_LastRemediationStatus_To_v1beta1_LastRemediationStatus converts the last remediation back.
func Convert_v1beta2_LastRemediationStatus_To_v1beta1_LastRemediationStatus(in *controlplanev1.LastRemediationStatus, out *LastRemediationStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_LastRemediationStatus_To_v1beta1_LastRemediationStatus(in, out, s); err != nil {
		return err
	}
	out.Timestamp = in.Time
	return nil
}

// Convert_v1beta1_KubeadmControlPlaneStatus_To_v1beta2_KubeadmControlPlaneStatus converts the status: v1beta1's
// conditions, failure, and updated, ready and unavailable replicas are v1beta2's status.deprecated.v1beta1, its
// status.v1beta2 v1beta2's conditions and replicas, initialized initialization.controlPlaneInitialized. ready
// (v1beta1's readyReplicas > 0) is not in v1beta2.
func Convert_v1beta1_KubeadmControlPlaneStatus_To_v1beta2_KubeadmControlPlaneStatus(in *KubeadmControlPlaneStatus, out *controlplanev1.KubeadmControlPlaneStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmControlPlaneStatus_To_v1beta2_KubeadmControlPlaneStatus(in, out, s); err != nil {
		return err
	}
	out.LastRemediation = controlplanev1.LastRemediationStatus{}
	if in.LastRemediation != nil {
		if err := Convert_v1beta1_LastRemediationStatus_To_v1beta2_LastRemediationStatus(in.LastRemediation, &out.LastRemediation, s); err != nil {
			return err
		}
	}
	out.Conditions, out.ReadyReplicas, out.AvailableReplicas, out.UpToDateReplicas = nil, nil, nil, nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
		out.ReadyReplicas, out.AvailableReplicas, out.UpToDateReplicas = in.V1Beta2.ReadyReplicas, in.V1Beta2.AvailableReplicas, in.V1Beta2.UpToDateReplicas
	}
	out.Initialization = controlplanev1.KubeadmControlPlaneInitializationStatus{}
	if in.Initialized {
		out.Initialization.ControlPlaneInitialized = &in.Initialized
	}
	out.Deprecated = nil
	deprecated := &controlplanev1.KubeadmControlPlaneV1Beta1DeprecatedStatus{
		FailureReason: controlplanev1.KubeadmControlPlaneStatusError(in.FailureReason), FailureMessage: in.FailureMessage,
		UpdatedReplicas: in.UpdatedReplicas, ReadyReplicas: in.ReadyReplicas, UnavailableReplicas: in.UnavailableReplicas,
	}
	clusterv1beta1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &deprecated.Conditions)
	if !reflect.ValueOf(*deprecated).IsZero() {
		out.Deprecated = &controlplanev1.KubeadmControlPlaneDeprecatedStatus{V1Beta1: deprecated}
	}
	return nil
}

// Convert_v1beta2_KubeadmControlPlaneStatus_To_v1beta1_KubeadmControlPlaneStatus converts the status back;
// ready is v1beta1's readyReplicas > 0.
func Convert_v1beta2_KubeadmControlPlaneStatus_To_v1beta1_KubeadmControlPlaneStatus(in *controlplanev1.KubeadmControlPlaneStatus, out *KubeadmControlPlaneStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmControlPlaneStatus_To_v1beta1_KubeadmControlPlaneStatus(in, out, s); err != nil {
		return err
	}
	if out.Version != nil && *out.Version == "" {
		out.Version = nil
	}
	out.LastRemediation = nil
	if !reflect.ValueOf(in.LastRemediation).IsZero() {
		out.LastRemediation = &LastRemediationStatus{}
		if err := Convert_v1beta2_LastRemediationStatus_To_v1beta1_LastRemediationStatus(&in.LastRemediation, out.LastRemediation, s); err != nil {
			return err
		}
	}
	out.Conditions, out.FailureReason, out.FailureMessage = nil, "", nil
	out.UpdatedReplicas, out.ReadyReplicas, out.UnavailableReplicas = 0, 0, 0
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		d := in.Deprecated.V1Beta1
		clusterv1beta1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&d.Conditions, &out.Conditions)
		out.FailureReason, out.FailureMessage = KubeadmControlPlaneStatusError(d.FailureReason), d.FailureMessage
		out.UpdatedReplicas, out.ReadyReplicas, out.UnavailableReplicas = d.UpdatedReplicas, d.ReadyReplicas, d.UnavailableReplicas
	}
	out.Initialized = in.Initialization.ControlPlaneInitialized != nil && *in.Initialization.ControlPlaneInitialized
	out.Ready = out.ReadyReplicas > 0
	out.V1Beta2 = nil
	if in.Conditions != nil || in.ReadyReplicas != nil || in.AvailableReplicas != nil || in.UpToDateReplicas != nil {
		out.V1Beta2 = &KubeadmControlPlaneV1Beta2Status{Conditions: in.Conditions,
			ReadyReplicas: in.ReadyReplicas, AvailableReplicas: in.AvailableReplicas, UpToDateReplicas: in.UpToDateReplicas}
	}
	return nil
}

func rolloutToV1beta2(before *RolloutBefore, after *metav1.Time, strategy *RolloutStrategy, out *controlplanev1.KubeadmControlPlaneRolloutSpec) {
	if before != nil && before.CertificatesExpiryDays != nil {
		out.Before.CertificatesExpiryDays = *before.CertificatesExpiryDays
	}
	if after != nil {
		out.After = *after
	}
	if strategy != nil {
		// v1beta2 requires the type; RollingUpdate is the one there is (and v1beta1's default in a control
		// plane, not in its template).
		out.Strategy.Type = controlplanev1.KubeadmControlPlaneRolloutStrategyType(strategy.Type)
		if strategy.Type == "" {
			out.Strategy.Type = controlplanev1.RollingUpdateStrategyType
		}
		if strategy.RollingUpdate != nil {
			out.Strategy.RollingUpdate.MaxSurge = strategy.RollingUpdate.MaxSurge
		}
	}
}

func rolloutToV1beta1(in *controlplanev1.KubeadmControlPlaneRolloutSpec) (before *RolloutBefore, after *metav1.Time, strategy *RolloutStrategy) {
	if in.Before.CertificatesExpiryDays != 0 {
		days := in.Before.CertificatesExpiryDays
		before = &RolloutBefore{CertificatesExpiryDays: &days}
	}
	if !in.After.IsZero() {
		t := in.After
		after = &t
	}
	if !reflect.ValueOf(in.Strategy).IsZero() {
		strategy = &RolloutStrategy{Type: RolloutStrategyType(in.Strategy.Type)}
		if in.Strategy.RollingUpdate.MaxSurge != nil {
			strategy.RollingUpdate = &RollingUpdate{MaxSurge: in.Strategy.RollingUpdate.MaxSurge}
		}
	}
	return before, after, strategy
}

func remediationToV1beta2(in *RemediationStrategy, out *controlplanev1.KubeadmControlPlaneRemediationSpec) {
	if in == nil {
		return
	}
	out.MaxRetry = in.MaxRetry
	out.RetryPeriodSeconds = bootstrapv1beta1.DurationToSeconds(&in.RetryPeriod)
	out.MinHealthyPeriodSeconds = bootstrapv1beta1.DurationToSeconds(in.MinHealthyPeriod)
}

func remediationToV1beta1(in *controlplanev1.KubeadmControlPlaneRemediationSpec) *RemediationStrategy {
	if reflect.ValueOf(*in).IsZero() {
		return nil
	}
	out := &RemediationStrategy{MaxRetry: in.MaxRetry, MinHealthyPeriod: bootstrapv1beta1.SecondsToDuration(in.MinHealthyPeriodSeconds)}
	if d := bootstrapv1beta1.SecondsToDuration(in.RetryPeriodSeconds); d != nil {
		out.RetryPeriod = *d
	}
	return out
}

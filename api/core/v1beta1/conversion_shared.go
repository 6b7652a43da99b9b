package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// The conversions every group's v1beta1 ⇄ v1beta2 conversion uses: conditions and template metadata
// (upstream's names, which conversion-gen looks for). A v1beta1 object's status.conditions are v1beta2's
// status.deprecated.v1beta1.conditions, and its status.v1beta2.conditions are v1beta2's status.conditions:
// the two kinds of condition are never converted into each other.

// Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions copies the v1beta1 conditions a v1beta2
// object keeps under status.deprecated.v1beta1 into a v1beta1 object's status.conditions.
func Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(in *clusterv1.Conditions, out *Conditions) { //nolint:revive // conversion-gen's naming
	if *in == nil {
		*out = nil
		return
	}
	*out = make(Conditions, len(*in))
	for i, c := range *in {
		(*out)[i] = Condition{Type: ConditionType(c.Type), Status: c.Status, Severity: ConditionSeverity(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
}

// Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions copies a v1beta1 object's
// status.conditions into the v1beta1 conditions a v1beta2 object keeps under status.deprecated.v1beta1.
func Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(in *Conditions, out *clusterv1.Conditions) { //nolint:revive // conversion-gen's naming
	if *in == nil {
		*out = nil
		return
	}
	*out = make(clusterv1.Conditions, len(*in))
	for i, c := range *in {
		(*out)[i] = clusterv1.Condition{Type: clusterv1.ConditionType(c.Type), Status: c.Status, Severity: clusterv1.ConditionSeverity(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
}

// Convert_v1_Condition_To_v1beta1_Condition does nothing: a v1beta2 condition is not a v1beta1 condition
// (conversion-gen calls it where a status has conditions in both versions; the status's own conversion
// moves them).
func Convert_v1_Condition_To_v1beta1_Condition(_ *metav1.Condition, _ *Condition, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return nil
}

// Convert_v1beta1_Condition_To_v1_Condition does nothing, as Convert_v1_Condition_To_v1beta1_Condition.
func Convert_v1beta1_Condition_To_v1_Condition(_ *Condition, _ *metav1.Condition, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return nil
}

// Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta copies a template's labels and annotations. It is written
// here rather than generated so that the other groups' conversions (kubeadm templates embed it) find it:
// conversion-gen sees the hand-written functions of a peer package, not those it generates in the same run.
func Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta(in *ObjectMeta, out *clusterv1.ObjectMeta, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Labels, out.Annotations = in.Labels, in.Annotations
	return nil
}

// Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta copies a template's labels and annotations back.
func Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta(in *clusterv1.ObjectMeta, out *ObjectMeta, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.Labels, out.Annotations = in.Labels, in.Annotations
	return nil
}

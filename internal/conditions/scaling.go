package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// InternalErrorMessage is the message of a condition whose facts could not be read, as upstream's.
const InternalErrorMessage = "Please check controller logs for errors"

// InternalErrorReason is the reason of a condition Unknown because what it reports could not be read.
const InternalErrorReason = "InternalError"

// InternalError returns the v1beta2 condition t of an object whose facts for it could not be read: Unknown
// with reason, and a message that sends the user to the controller's logs.
func InternalError(t, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: InternalErrorMessage}
}

// The ScalingUp and ScalingDown conditions of the MachineSet and MachineDeployment, as upstream writes them:
// the two kinds share the conditions' types and reasons.

// ScalingUnknown returns the ScalingUp and ScalingDown conditions of an object whose Machines could not
// be read.
func ScalingUnknown() (up, down metav1.Condition) {
	return InternalError(clusterv1.MachineSetScalingUpV1Beta2Condition, clusterv1.MachineSetScalingUpInternalErrorV1Beta2Reason),
		InternalError(clusterv1.MachineSetScalingDownV1Beta2Condition, clusterv1.MachineSetScalingDownInternalErrorV1Beta2Reason)
}

// MissingTemplates are the scale-up blockers of a Machine template whose bootstrap config template or
// infrastructure template does not exist.
func MissingTemplates(spec *clusterv1.MachineSpec, bootstrap, infrastructure bool) []string {
	var out []string
	if ref := spec.Bootstrap.ConfigRef; bootstrap && ref != nil {
		out = append(out, fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name))
	}
	if ref := spec.InfrastructureRef; infrastructure {
		out = append(out, fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name))
	}
	return out
}

// ScalingUp returns the v1beta2 ScalingUp condition of an object that has `have` Machines and wants `want`:
// True while it has fewer. Its message names what blocks scaling up, and, when not scaling up, what would
// block it, so that a user sees the problem before it bites.
func ScalingUp(have, want int32, blockers []string) metav1.Condition {
	c := metav1.Condition{Type: clusterv1.MachineSetScalingUpV1Beta2Condition}
	if have >= want {
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineSetNotScalingUpV1Beta2Reason
		if len(blockers) > 0 {
			c.Message = "Scaling up would be blocked because:\n" + Bullets(blockers)
		}
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, clusterv1.MachineSetScalingUpV1Beta2Reason
	c.Message = fmt.Sprintf("Scaling up from %d to %d replicas", have, want)
	if len(blockers) > 0 {
		c.Message += " is blocked because:\n" + Bullets(blockers)
	}
	return c
}

// ScalingDown returns the v1beta2 ScalingDown condition of an object that has `have` Machines and wants
// `want`: True while it has more, with details (when not empty) on the message's next line.
func ScalingDown(have, want int32, details string) metav1.Condition {
	if have <= want {
		return metav1.Condition{Type: clusterv1.MachineSetScalingDownV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineSetNotScalingDownV1Beta2Reason}
	}
	msg := fmt.Sprintf("Scaling down from %d to %d replicas", have, want)
	if details != "" {
		msg += "\n" + details
	}
	return metav1.Condition{Type: clusterv1.MachineSetScalingDownV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineSetScalingDownV1Beta2Reason, Message: msg}
}

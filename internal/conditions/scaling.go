package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The ScalingUp and ScalingDown conditions of the MachineSet and MachineDeployment, as upstream writes them:
// the two kinds share the conditions' types and reasons.

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

package machineset

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// machineUpToDateCondition returns the UpToDate condition of the Machines of ms: False when ms's template
// differs from its MachineDeployment's in a field that needs new Machines, or when the MachineDeployment's
// spec.rolloutAfter has passed since ms was created. A MachineSet without a MachineDeployment (md is nil)
// does not decide; its Machines keep the condition others set.
func machineUpToDateCondition(ms *clusterv1.MachineSet, md *clusterv1.MachineDeployment, now time.Time) *metav1.Condition {
	if md == nil {
		return nil
	}
	diffs := rollout.TemplateDiff(&ms.Spec.Template, &md.Spec.Template)
	if rollout.AfterExpired(md, ms, now) {
		diffs = append(diffs, "MachineDeployment spec.rolloutAfter expired")
	}
	if len(diffs) == 0 {
		return &metav1.Condition{Type: clusterv1.MachineUpToDateV1Beta2Condition, Status: metav1.ConditionTrue,
			Reason: clusterv1.MachineUpToDateV1Beta2Reason}
	}
	return &metav1.Condition{Type: clusterv1.MachineUpToDateV1Beta2Condition, Status: metav1.ConditionFalse,
		Reason: clusterv1.MachineNotUpToDateV1Beta2Reason, Message: conditions.Bullets(diffs)}
}

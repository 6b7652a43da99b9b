package machineset

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// stuckDeletionAfter is how long a Machine may be deleting before the status points it out.
const stuckDeletionAfter = 15 * time.Minute

// setStatus computes the MachineSet's status from what the reconcile found.
func setStatus(s *scope) {
	ms := s.ms
	ms.Status.ObservedGeneration = ms.Generation
	if sel, err := effectiveSelector(ms); err == nil {
		ms.Status.Selector = sel.String()
	}
	if s.invalidConfiguration != "" {
		ms.Status.FailureReason = ptr.To(clusterv1.InvalidConfigurationMachineSetError)
		ms.Status.FailureMessage = ptr.To(s.invalidConfiguration)
	} else {
		ms.Status.FailureReason, ms.Status.FailureMessage = nil, nil
	}
	if s.getMachinesSucceeded {
		setReplicas(s)
	}
	setV1Beta1Conditions(s)
	conditions.SetV1Beta2(ms, reconciler.PausedCondition(s.cluster, ms, "MachineSet", false))
	setScalingConditions(s)
	conditions.SetMachinesConditions(ms, s.machines, s.getMachinesSucceeded,
		clusterv1.MachineSetMachinesReadyV1Beta2Condition, clusterv1.MachineSetMachinesUpToDateV1Beta2Condition, s.now)
	setRemediatingCondition(s)
	setDeletingCondition(s)
}

// preflightFailedReason (v1beta1 MachinesCreated) says that the preflight checks hold up creating Machines.
const preflightFailedReason = "PreflightFailed"

// setReplicas sets the replica counters: every owned Machine counts in replicas (deleting ones too, as
// they still exist), ready Machines have a True Ready condition, available ones have had it for
// spec.minReadySeconds, and the v1beta2 counters count the Machines' Ready, Available and UpToDate
// conditions. status.versions counts the Machines' Kubernetes versions.
func setReplicas(s *scope) {
	ms := s.ms
	templateLabels := labels.SelectorFromSet(effectiveTemplateLabels(ms))
	var fullyLabeled, ready, available, v2Available, upToDate int32
	for _, m := range s.machines {
		if templateLabels.Matches(labels.Set(m.Labels)) {
			fullyLabeled++
		}
		if isReady(m) {
			ready++
			if isAvailable(m, ms.Spec.MinReadySeconds, s.now) {
				available++
			}
		}
		if conditions.IsV1Beta2True(m, clusterv1.MachineAvailableV1Beta2Condition) {
			v2Available++
		}
		if conditions.IsV1Beta2True(m, clusterv1.MachineUpToDateV1Beta2Condition) {
			upToDate++
		}
	}
	ms.Status.Replicas = int32(len(s.machines))
	ms.Status.FullyLabeledReplicas = fullyLabeled
	ms.Status.ReadyReplicas = ready
	ms.Status.AvailableReplicas = available
	if ms.Status.V1Beta2 == nil {
		ms.Status.V1Beta2 = &clusterv1.MachineSetV1Beta2Status{}
	}
	ms.Status.V1Beta2.ReadyReplicas = ptr.To(ready)
	ms.Status.V1Beta2.AvailableReplicas = ptr.To(v2Available)
	ms.Status.V1Beta2.UpToDateReplicas = ptr.To(upToDate)
	ms.Status.Versions = kubeversion.FromMachines(s.machines)
}

// isReady reports whether a Machine's Ready condition is True.
func isReady(m *clusterv1.Machine) bool {
	return conditions.IsV1Beta2True(m, clusterv1.MachineReadyV1Beta2Condition)
}

// isAvailable reports whether a Machine has been Ready for at least minReadySeconds.
func isAvailable(m *clusterv1.Machine, minReadySeconds int32, now time.Time) bool {
	c := conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false
	}
	return minReadySeconds == 0 || !c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).After(now)
}

// requeueForAvailability returns when to come back to count a Ready Machine as available, or to take a new
// Machine without an UpToDate condition into account; 0 when there is nothing to wait for.
func requeueForAvailability(s *scope) time.Duration {
	var soonest time.Duration
	consider := func(at time.Time) {
		d := at.Sub(s.now)
		if d <= 0 {
			d = time.Second
		}
		if soonest == 0 || d < soonest {
			soonest = d
		}
	}
	for _, m := range s.machines {
		if c := conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition); c != nil && c.Status == metav1.ConditionTrue && s.ms.Spec.MinReadySeconds > 0 &&
			!isAvailable(m, s.ms.Spec.MinReadySeconds, s.now) {
			consider(c.LastTransitionTime.Add(time.Duration(s.ms.Spec.MinReadySeconds) * time.Second))
		}
		if conditions.AwaitingUpToDate(m, s.now) {
			consider(m.CreationTimestamp.Add(conditions.UpToDateGracePeriod))
		}
	}
	return soonest
}

// setV1Beta1Conditions sets MachinesCreated, Resized, MachinesReady and the Ready summary.
func setV1Beta1Conditions(s *scope) {
	ms := s.ms
	switch {
	case s.invalidConfiguration != "":
		conditions.MarkFalse(ms, clusterv1.MachineSetMachinesCreatedCondition, clusterv1.MachineSetInvalidConfigurationReason,
			clusterv1.ConditionSeverityError, "%s", s.invalidConfiguration)
	case s.createFailure != nil:
		conditions.MarkFalse(ms, clusterv1.MachineSetMachinesCreatedCondition, s.createFailure.reason,
			clusterv1.ConditionSeverityError, "%s", s.createFailure.message)
	case len(s.preflightProblems) > 0:
		conditions.MarkFalse(ms, clusterv1.MachineSetMachinesCreatedCondition, preflightFailedReason,
			clusterv1.ConditionSeverityError, "%s", strings.Join(s.preflightProblems, "; "))
	case s.getMachinesSucceeded:
		conditions.MarkTrue(ms, clusterv1.MachineSetMachinesCreatedCondition)
	}

	if s.getMachinesSucceeded && ms.DeletionTimestamp.IsZero() {
		want := ptr.Deref(ms.Spec.Replicas, 1)
		have := ms.Status.Replicas
		switch {
		case have < want:
			conditions.MarkFalse(ms, clusterv1.MachineSetResizedCondition, clusterv1.MachineSetScalingUpReason, clusterv1.ConditionSeverityWarning,
				"Scaling up MachineSet to %d replicas (actual %d)", want, have)
		case have > want:
			conditions.MarkFalse(ms, clusterv1.MachineSetResizedCondition, clusterv1.MachineSetScalingDownReason, clusterv1.ConditionSeverityWarning,
				"Scaling down MachineSet to %d replicas (actual %d)", want, have)
		case ms.Status.ReadyReplicas < have:
			// Resizing is complete when the Machines are provisioned, not when their objects exist.
			conditions.MarkFalse(ms, clusterv1.MachineSetResizedCondition, clusterv1.MachineSetScalingUpReason, clusterv1.ConditionSeverityInfo,
				"Waiting for %d of %d Machines to be ready", have-ms.Status.ReadyReplicas, have)
		default:
			conditions.MarkTrue(ms, clusterv1.MachineSetResizedCondition)
		}
	}

	if s.getMachinesSucceeded {
		setMachinesReadyV1Beta1Condition(ms, s.machines)
	}
	conditions.SetSummary(ms, clusterv1.MachineSetMachinesCreatedCondition, clusterv1.MachineSetResizedCondition,
		clusterv1.MachineSetMachinesReadyCondition)
}

// setMachinesReadyV1Beta1Condition aggregates the v1beta1 Ready conditions of the Machines: False with the
// reason and severity of the worst one when any is False, True when they all are. Machines without a Ready
// condition are left out.
func setMachinesReadyV1Beta1Condition(ms *clusterv1.MachineSet, machines []*clusterv1.Machine) {
	var worst *clusterv1.Condition
	var worstMachine string
	notReady, reported := 0, 0
	for _, m := range machines {
		c := conditions.Get(m, clusterv1.ReadyCondition)
		if c == nil {
			continue
		}
		reported++
		if c.Status == corev1.ConditionTrue {
			continue
		}
		notReady++
		if worst == nil || conditions.SeverityRank(c.Severity) > conditions.SeverityRank(worst.Severity) {
			worst, worstMachine = c, m.Name
		}
	}
	switch {
	case reported == 0:
		conditions.Delete(ms, clusterv1.MachineSetMachinesReadyCondition)
	case worst == nil:
		conditions.MarkTrue(ms, clusterv1.MachineSetMachinesReadyCondition)
	default:
		msg := worst.Message
		if msg == "" {
			msg = worst.Reason
		}
		conditions.Set(ms, clusterv1.Condition{
			Type: clusterv1.MachineSetMachinesReadyCondition, Status: worst.Status, Severity: worst.Severity, Reason: worst.Reason,
			Message: fmt.Sprintf("%d of %d Machines are not ready; Machine %s: %s", notReady, reported, worstMachine, msg),
		})
	}
}

// setScalingConditions sets ScalingUp, True while there are fewer Machines than wanted (its message says
// what blocks scaling up, even when not scaling up, so that users see the problem before it bites), and
// ScalingDown, True while there are more (its message points out Machines whose deletion takes long).
func setScalingConditions(s *scope) {
	ms := s.ms
	up, down := conditions.ScalingUnknown()
	if s.getMachinesSucceeded {
		want := ptr.Deref(ms.Spec.Replicas, 1)
		if !ms.DeletionTimestamp.IsZero() {
			want = 0
		}
		have := int32(len(s.machines))
		up, down = conditions.ScalingUp(have, want, scaleUpBlockers(s)), conditions.ScalingDown(have, want, stuckDeletionMessage(s.machines, s.now))
	}
	conditions.SetV1Beta2(ms, up)
	conditions.SetV1Beta2(ms, down)
}

func scaleUpBlockers(s *scope) []string {
	ms := s.ms
	var out []string
	if s.invalidConfiguration != "" {
		out = append(out, s.invalidConfiguration)
	}
	out = append(out, conditions.MissingTemplates(&ms.Spec.Template.Spec, s.bootstrapTemplateNotFound, s.infrastructureTemplateNotFound)...)
	if _, ok := ms.Annotations[clusterv1.DisableMachineCreateAnnotation]; ok {
		out = append(out, fmt.Sprintf("The MachineSet has the %s annotation", clusterv1.DisableMachineCreateAnnotation))
	}
	if s.createFailure != nil {
		out = append(out, s.createFailure.message)
	}
	out = append(out, s.preflightProblems...)
	return out
}

// stuckDeletionMessage names the Machines deleting for longer than stuckDeletionAfter.
func stuckDeletionMessage(machines []*clusterv1.Machine, now time.Time) string {
	var names []string
	for _, m := range machines {
		if !m.DeletionTimestamp.IsZero() && now.Sub(m.DeletionTimestamp.Time) > stuckDeletionAfter {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("* %s in deletion since more than %s", conditions.MachineNames(names, "is", "are"), stuckDeletionAfter)
}

// setDeletingCondition is True while the MachineSet is being deleted and says how many Machines are left.
func setDeletingCondition(s *scope) {
	ms := s.ms
	if ms.DeletionTimestamp.IsZero() {
		conditions.SetV1Beta2(ms, metav1.Condition{Type: clusterv1.MachineSetDeletingV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineSetNotDeletingV1Beta2Reason})
		return
	}
	if !s.getMachinesSucceeded {
		conditions.SetV1Beta2(ms, conditions.InternalError(clusterv1.MachineSetDeletingV1Beta2Condition, clusterv1.MachineSetDeletingInternalErrorV1Beta2Reason))
		return
	}
	msg := ""
	if n := len(s.machines); n > 0 {
		msg = fmt.Sprintf("Deleting %d %s", n, plural(n, "Machine", "Machines"))
		if stuck := stuckDeletionMessage(s.machines, s.now); stuck != "" {
			msg += "\n" + stuck
		}
	}
	conditions.SetV1Beta2(ms, metav1.Condition{Type: clusterv1.MachineSetDeletingV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineSetDeletingV1Beta2Reason, Message: msg})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package machinedeployment

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// setStatus computes the MachineDeployment's status from what the reconcile found.
func setStatus(s *scope) {
	md := s.md
	md.Status.ObservedGeneration = md.Generation
	if sel, err := effectiveSelector(md); err == nil {
		md.Status.Selector = sel.String()
	}
	if s.getMachineSetsSucceeded {
		setReplicas(s)
		md.Status.Phase = string(computePhase(s))
	}
	setV1Beta1Conditions(s)
	conditions.SetV1Beta2(md, reconciler.PausedCondition(s.cluster, md, "MachineDeployment", false))
	setAvailableCondition(s)
	conditions.SetMachinesConditions(md, s.machines, s.getMachinesSucceeded,
		clusterv1.MachineDeploymentMachinesReadyV1Beta2Condition, clusterv1.MachineDeploymentMachinesUpToDateV1Beta2Condition, s.now)
	setRollingOutCondition(s)
	setScalingConditions(s)
	setDeletingCondition(s)
}

// setReplicas sums the counters of the MachineSets: replicas, ready and available Machines of all of them,
// updated Machines of the new one, and the Machines still needed for full availability; and their
// status.versions, merged.
func setReplicas(s *scope) {
	md := s.md
	var replicas, specTotal, ready, available int32
	var v2Ready, v2Available, v2UpToDate *int32
	var versions []clusterv1.StatusVersion
	add := func(sum **int32, v *int32) {
		if v != nil {
			*sum = ptr.To(ptr.Deref(*sum, 0) + *v)
		}
	}
	for _, ms := range s.machineSets {
		replicas += ms.Status.Replicas
		specTotal += specReplicas(ms)
		ready += ms.Status.ReadyReplicas
		available += ms.Status.AvailableReplicas
		versions = append(versions, ms.Status.Versions...)
		if v2 := ms.Status.V1Beta2; v2 != nil {
			add(&v2Ready, v2.ReadyReplicas)
			add(&v2Available, v2.AvailableReplicas)
			add(&v2UpToDate, v2.UpToDateReplicas)
		}
	}
	md.Status.Replicas = replicas
	md.Status.UpdatedReplicas = 0
	if s.newMS != nil {
		md.Status.UpdatedReplicas = s.newMS.Status.Replicas
	}
	md.Status.ReadyReplicas = ready
	md.Status.AvailableReplicas = available
	// As upstream: the Machines the MachineSets want minus those available, so Machines not created yet
	// count as unavailable.
	md.Status.UnavailableReplicas = max(specTotal-available, 0)
	if md.Status.V1Beta2 == nil {
		md.Status.V1Beta2 = &clusterv1.MachineDeploymentV1Beta2Status{}
	}
	md.Status.V1Beta2.ReadyReplicas = v2Ready
	md.Status.V1Beta2.AvailableReplicas = v2Available
	md.Status.V1Beta2.UpToDateReplicas = v2UpToDate
	md.Status.Versions = kubeversion.Aggregate(versions)
}

// computePhase is Running when as many Machines are ready as wanted, ScalingUp when fewer, ScalingDown when more,
// and Failed when the spec is invalid or a MachineSet reports a terminal failure.
func computePhase(s *scope) clusterv1.MachineDeploymentPhase {
	if s.invalidConfiguration != "" {
		return clusterv1.MachineDeploymentPhaseFailed
	}
	for _, ms := range s.machineSets {
		if ms.Status.FailureReason != nil || ms.Status.FailureMessage != nil {
			return clusterv1.MachineDeploymentPhaseFailed
		}
	}
	desired := s.replicas()
	switch ready := s.md.Status.ReadyReplicas; {
	case ready < desired:
		return clusterv1.MachineDeploymentPhaseScalingUp
	case ready > desired:
		return clusterv1.MachineDeploymentPhaseScalingDown
	default:
		return clusterv1.MachineDeploymentPhaseRunning
	}
}

// setV1Beta1Conditions sets Available, MachineSetReady and the Ready summary (of Available, as upstream;
// and of MachineSetReady when the spec is invalid, so that Ready says so).
func setV1Beta1Conditions(s *scope) {
	md := s.md
	if s.getMachineSetsSucceeded {
		need := s.replicas() - s.strategy.maxUnavailable
		if md.Status.AvailableReplicas >= need {
			conditions.MarkTrue(md, clusterv1.MachineDeploymentAvailableCondition)
		} else {
			conditions.MarkFalse(md, clusterv1.MachineDeploymentAvailableCondition, clusterv1.MachineDeploymentWaitingForAvailableMachinesReason,
				clusterv1.ConditionSeverityWarning, "Minimum availability requires %d replicas, current %d available", need, md.Status.AvailableReplicas)
		}
	}
	switch {
	case s.invalidConfiguration != "":
		conditions.MarkFalse(md, clusterv1.MachineDeploymentMachineSetReadyCondition, clusterv1.MachineDeploymentInvalidConfigurationReason,
			clusterv1.ConditionSeverityError, "%s", s.invalidConfiguration)
	case s.newMS == nil:
		conditions.MarkFalse(md, clusterv1.MachineDeploymentMachineSetReadyCondition, clusterv1.MachineDeploymentWaitingForMachineSetFallbackReason,
			clusterv1.ConditionSeverityInfo, "MachineSet not found")
	default:
		if c := conditions.Get(s.newMS, clusterv1.ReadyCondition); c != nil {
			mirror := *c
			mirror.Type = clusterv1.MachineDeploymentMachineSetReadyCondition
			mirror.LastTransitionTime = metav1.Time{}
			conditions.Set(md, mirror)
		} else {
			conditions.MarkFalse(md, clusterv1.MachineDeploymentMachineSetReadyCondition, clusterv1.MachineDeploymentWaitingForMachineSetFallbackReason,
				clusterv1.ConditionSeverityInfo, "Waiting for MachineSet %s to report its status", s.newMS.Name)
		}
	}
	summarised := []clusterv1.ConditionType{clusterv1.MachineDeploymentAvailableCondition}
	if s.invalidConfiguration != "" {
		summarised = append(summarised, clusterv1.MachineDeploymentMachineSetReadyCondition)
	}
	if conditions.Get(md, clusterv1.MachineDeploymentAvailableCondition) != nil || s.invalidConfiguration != "" {
		conditions.SetSummary(md, summarised...)
	}
}

// setAvailableCondition is True when at least spec.replicas minus maxUnavailable Machines are available.
func setAvailableCondition(s *scope) {
	md := s.md
	c := metav1.Condition{Type: clusterv1.MachineDeploymentAvailableV1Beta2Condition}
	switch {
	case !md.DeletionTimestamp.IsZero():
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineDeploymentAvailableDeletingV1Beta2Reason
	case !s.getMachineSetsSucceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, clusterv1.MachineDeploymentAvailableInternalErrorV1Beta2Reason,
			conditions.InternalErrorMessage
	default:
		desired := s.replicas()
		need := desired - s.strategy.maxUnavailable
		available := ptr.Deref(md.Status.V1Beta2.AvailableReplicas, 0)
		if available >= need {
			c.Status, c.Reason = metav1.ConditionTrue, clusterv1.MachineDeploymentAvailableV1Beta2Reason
			break
		}
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineDeploymentNotAvailableV1Beta2Reason
		if s.strategy.kind == clusterv1.RollingUpdateMachineDeploymentStrategyType && s.invalidConfiguration == "" {
			c.Message = fmt.Sprintf("%d available replicas, at least %d required (spec.strategy.rollingUpdate.maxUnavailable is %s, spec.replicas is %d)",
				available, need, s.strategy.maxUnavailableText, desired)
		} else {
			c.Message = fmt.Sprintf("%d available replicas, at least %d required (spec.replicas is %d)", available, need, desired)
		}
	}
	conditions.SetV1Beta2(md, c)
}

// setRollingOutCondition is True while old MachineSets still have Machines, and says why they are old.
func setRollingOutCondition(s *scope) {
	md := s.md
	if !s.getMachineSetsSucceeded {
		conditions.SetV1Beta2(md, conditions.InternalError(clusterv1.MachineDeploymentRollingOutV1Beta2Condition,
			clusterv1.MachineDeploymentRollingOutInternalErrorV1Beta2Reason))
		return
	}
	var outdated int32
	var reasons []string
	seen := map[string]bool{}
	for _, ms := range s.machineSets {
		if ms == s.newMS || ms.Status.Replicas == 0 {
			continue
		}
		outdated += ms.Status.Replicas
		diffs := rollout.TemplateDiff(&ms.Spec.Template, &md.Spec.Template)
		if len(diffs) == 0 && rollout.AfterExpired(md, ms, s.now) {
			diffs = []string{"MachineDeployment spec.rolloutAfter expired"}
		}
		for _, d := range diffs {
			if !seen[d] {
				seen[d] = true
				reasons = append(reasons, d)
			}
		}
	}
	if outdated == 0 {
		conditions.SetV1Beta2(md, metav1.Condition{Type: clusterv1.MachineDeploymentRollingOutV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineDeploymentNotRollingOutV1Beta2Reason})
		return
	}
	msg := fmt.Sprintf("Rolling out %d not up-to-date %s", outdated, plural(int(outdated), "replica", "replicas"))
	if len(reasons) > 0 {
		msg += "\n" + conditions.Bullets(reasons)
	}
	if md.Spec.Paused {
		msg += "\nThe rollout waits: spec.paused is set"
	}
	conditions.SetV1Beta2(md, metav1.Condition{Type: clusterv1.MachineDeploymentRollingOutV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineDeploymentRollingOutV1Beta2Reason, Message: msg})
}

// setScalingConditions sets ScalingUp, True while there are fewer Machines than wanted (its message says
// what blocks scaling up, even when not scaling up), and ScalingDown, True while there are more.
func setScalingConditions(s *scope) {
	md := s.md
	up, down := conditions.ScalingUnknown()
	if s.getMachineSetsSucceeded {
		desired := s.replicas()
		if !md.DeletionTimestamp.IsZero() {
			desired = 0
		}
		blockers := conditions.MissingTemplates(&md.Spec.Template.Spec, s.bootstrapTemplateNotFound, s.infrastructureTemplateNotFound)
		if s.invalidConfiguration != "" {
			blockers = append([]string{s.invalidConfiguration}, blockers...)
		}
		up, down = conditions.ScalingUp(md.Status.Replicas, desired, blockers), conditions.ScalingDown(md.Status.Replicas, desired, "")
	}
	conditions.SetV1Beta2(md, up)
	conditions.SetV1Beta2(md, down)
}

// setDeletingCondition is True while the MachineDeployment is being deleted and says what is left.
func setDeletingCondition(s *scope) {
	md := s.md
	c := metav1.Condition{Type: clusterv1.MachineDeploymentDeletingV1Beta2Condition}
	switch {
	case md.DeletionTimestamp.IsZero():
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineDeploymentNotDeletingV1Beta2Reason
	case !s.getMachineSetsSucceeded || !s.getMachinesSucceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, clusterv1.MachineDeploymentDeletingInternalErrorV1Beta2Reason,
			conditions.InternalErrorMessage
	default:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1.MachineDeploymentDeletingV1Beta2Reason
		var parts []string
		if n := len(s.machineSets); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, "MachineSet", "MachineSets")))
		}
		if n := len(s.machines); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, "Machine", "Machines")))
		}
		if len(parts) > 0 {
			c.Message = "Deleting " + strings.Join(parts, " and ")
		}
	}
	conditions.SetV1Beta2(md, c)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

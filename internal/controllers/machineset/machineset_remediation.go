package machineset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
)

// needsRemediation reports whether a MachineHealthCheck handed the Machine over to its owner: its health
// check failed and OwnerRemediated is False (in either condition flavour).
func needsRemediation(m *clusterv1.Machine) bool {
	return (conditions.IsFalse(m, clusterv1.MachineHealthCheckSucceededCondition) && conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition)) ||
		(isV1Beta2False(m, clusterv1.MachineHealthCheckSucceededV1Beta2Condition) && isV1Beta2False(m, clusterv1.MachineOwnerRemediatedV1Beta2Condition))
}

func isV1Beta2False(m *clusterv1.Machine, t string) bool {
	c := conditions.GetV1Beta2(m, t)
	return c != nil && c.Status == metav1.ConditionFalse
}

// reconcileUnhealthyMachines remediates, as upstream's MachineSet does, the Machines a MachineHealthCheck
// marked: it deletes them (the MachineSet then creates replacements), at most
// spec.strategy.remediation.maxInFlight of its MachineDeployment at a time and only when the preflight
// checks pass; a MachineSet of an older revision of its MachineDeployment does not remediate, the rollout
// replaces its Machines. It also clears OwnerRemediated from Machines that are healthy again.
func (r *Reconciler) reconcileUnhealthyMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.getMachinesSucceeded {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		v1 := conditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition) && conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition)
		v2 := conditions.IsV1Beta2True(m, clusterv1.MachineHealthCheckSucceededV1Beta2Condition) && isV1Beta2False(m, clusterv1.MachineOwnerRemediatedV1Beta2Condition)
		if !v1 && !v2 {
			continue
		}
		h := patch.NewHelper(m, r.Client, patch.WithWrites(&r.machineWrites))
		if v1 {
			conditions.Delete(m, clusterv1.MachineOwnerRemediatedCondition)
		}
		if v2 {
			deleteV1Beta2(m, clusterv1.MachineOwnerRemediatedV1Beta2Condition)
		}
		if err := h.Patch(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("removing OwnerRemediated from healthy Machines: %w", errors.Join(errs...))
	}

	var toRemediate []*clusterv1.Machine
	for _, m := range s.machines {
		if m.DeletionTimestamp.IsZero() && needsRemediation(m) {
			toRemediate = append(toRemediate, m)
		}
	}
	if len(toRemediate) == 0 {
		return ctrl.Result{}, nil
	}

	maxInFlight := math.MaxInt
	md := s.owningMD
	if md != nil {
		if md.Annotations[clusterv1.RevisionAnnotation] != s.ms.Annotations[clusterv1.RevisionAnnotation] {
			return ctrl.Result{}, r.setOwnerRemediated(ctx, toRemediate, metav1.Condition{Status: metav1.ConditionFalse,
				Reason: clusterv1.MachineSetMachineCannotBeRemediatedV1Beta2Reason, Message: "Machine won't be remediated because it is pending removal due to rollout"}, nil)
		}
		if md.Spec.Strategy != nil && md.Spec.Strategy.Remediation != nil && md.Spec.Strategy.Remediation.MaxInFlight != nil {
			replicas := int(ptr.Deref(md.Spec.Replicas, 1))
			n, err := intstr.GetScaledValueFromIntOrPercent(md.Spec.Strategy.Remediation.MaxInFlight, replicas, true)
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("computing spec.strategy.remediation.maxInFlight of MachineDeployment %s: %w", md.Name, err)
			}
			maxInFlight = n
		}
	}
	// A Machine deleted by an earlier remediation that still exists is in flight.
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() && conditions.IsTrue(m, clusterv1.MachineOwnerRemediatedCondition) {
			maxInFlight--
		}
	}
	deferred := metav1.Condition{Status: metav1.ConditionFalse, Reason: clusterv1.MachineSetMachineRemediationDeferredV1Beta2Reason}
	if md != nil && md.Spec.Strategy != nil && md.Spec.Strategy.Remediation != nil {
		deferred.Message = fmt.Sprintf("Waiting because there are already too many remediations in progress (spec.strategy.remediation.maxInFlight is %s)",
			md.Spec.Strategy.Remediation.MaxInFlight)
	}
	if maxInFlight <= 0 {
		log.V(3).Info("Not remediating: maxInFlight remediations are in progress", "machinesToRemediate", len(toRemediate))
		return ctrl.Result{}, r.setOwnerRemediated(ctx, toRemediate, deferred, nil)
	}
	// Newest first: a Machine that failed to come up is the least likely to run workloads.
	sort.SliceStable(toRemediate, func(i, j int) bool {
		a, b := toRemediate[i].CreationTimestamp, toRemediate[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return toRemediate[i].Name < toRemediate[j].Name
	})
	if len(toRemediate) > maxInFlight {
		if err := r.setOwnerRemediated(ctx, toRemediate[maxInFlight:], deferred, nil); err != nil {
			return ctrl.Result{}, err
		}
		toRemediate = toRemediate[:maxInFlight]
	}

	if problems := r.preflightProblems(ctx, s, "Machine remediation"); len(problems) > 0 {
		lines := make([]string, len(problems))
		for i, p := range problems {
			lines[i] = "* " + p
		}
		log.Info("Not remediating: preflight checks failed", "problems", strings.Join(problems, "; "))
		err := r.setOwnerRemediated(ctx, toRemediate,
			metav1.Condition{Status: metav1.ConditionFalse, Reason: clusterv1.MachineSetMachineRemediationDeferredV1Beta2Reason, Message: strings.Join(lines, "\n")},
			&clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.WaitingForRemediationReason, Severity: clusterv1.ConditionSeverityWarning,
				Message: strings.Join(problems, "; ")})
		return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}, err
	}

	// The condition is written before the deletion, so that a Machine whose deletion does not go through
	// is retried rather than forgotten.
	if err := r.setOwnerRemediated(ctx, toRemediate,
		metav1.Condition{Status: metav1.ConditionFalse, Reason: clusterv1.MachineSetMachineRemediationMachineDeletingV1Beta2Reason, Message: "Machine is deleting"},
		&clusterv1.Condition{Status: corev1.ConditionTrue}); err != nil {
		return ctrl.Result{}, err
	}
	for _, m := range toRemediate {
		if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Machine %s: %w", m.Name, err))
			continue
		}
		log.Info("Deleting Machine (remediating unhealthy Machine)", "Machine", klog.KObj(m))
		r.recorder().Eventf(s.ms, corev1.EventTypeNormal, EventSuccessfulDelete, "Deleted machine %q (remediating unhealthy Machine)", m.Name)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// setOwnerRemediated writes the OwnerRemediated conditions of machines: v1beta2 always, v1beta1 when given.
func (r *Reconciler) setOwnerRemediated(ctx context.Context, machines []*clusterv1.Machine, v1beta2 metav1.Condition, v1beta1 *clusterv1.Condition) error {
	var errs []error
	for _, m := range machines {
		h := patch.NewHelper(m, r.Client, patch.WithWrites(&r.machineWrites))
		v1beta2.Type = clusterv1.MachineOwnerRemediatedV1Beta2Condition
		conditions.SetV1Beta2(m, v1beta2)
		if v1beta1 != nil {
			c := *v1beta1
			c.Type = clusterv1.MachineOwnerRemediatedCondition
			conditions.Set(m, c)
		}
		if err := h.Patch(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteV1Beta2(m *clusterv1.Machine, t string) {
	list := m.GetV1Beta2Conditions()
	out := list[:0:0]
	for _, c := range list {
		if c.Type != t {
			out = append(out, c)
		}
	}
	m.SetV1Beta2Conditions(out)
}

// setRemediatingCondition sets the v1beta2 Remediating condition: True while some Machines wait for or
// undergo remediation, saying what each waits for.
func setRemediatingCondition(s *scope) {
	ms := s.ms
	if !s.getMachinesSucceeded {
		conditions.SetV1Beta2(ms, conditions.InternalError(clusterv1.MachineSetRemediatingV1Beta2Condition, conditions.InternalErrorReason))
		return
	}
	var remediating []*clusterv1.Machine
	messages := map[string]string{}
	for _, m := range s.machines {
		if !isV1Beta2False(m, clusterv1.MachineHealthCheckSucceededV1Beta2Condition) {
			continue
		}
		c := conditions.GetV1Beta2(m, clusterv1.MachineOwnerRemediatedV1Beta2Condition)
		if c == nil || c.Status != metav1.ConditionFalse {
			continue
		}
		remediating = append(remediating, m)
		messages[m.Name] = cmp.Or(c.Message, c.Reason)
	}
	if len(remediating) == 0 {
		conditions.SetV1Beta2(ms, metav1.Condition{Type: clusterv1.MachineSetRemediatingV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineSetNotRemediatingV1Beta2Reason})
		return
	}
	conditions.SetV1Beta2(ms, metav1.Condition{Type: clusterv1.MachineSetRemediatingV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineSetRemediatingV1Beta2Reason, Message: conditions.MachinesMessage(remediating, messages)})
}

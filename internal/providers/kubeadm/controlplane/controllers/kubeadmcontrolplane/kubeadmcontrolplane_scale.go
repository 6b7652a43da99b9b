package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// initialize creates the first Machine, with the init configuration (no join configuration).
func (r *Reconciler) initialize(ctx context.Context, s *scope) (ctrl.Result, error) {
	spec := s.kcp.Spec.KubeadmConfigSpec.DeepCopy()
	spec.JoinConfiguration = nil
	return r.addMachine(ctx, s, spec, machineCreation{
		failedReason: "FailedInitialization", which: "initial", reason: "SuccessfulCreate", step: "init",
	})
}

// scaleUp creates one Machine joining the control plane, once the preflight checks pass.
func (r *Reconciler) scaleUp(ctx context.Context, s *scope) (ctrl.Result, error) {
	if res := r.preflightChecks(ctx, s); !res.IsZero() {
		return res, nil
	}
	spec := s.kcp.Spec.KubeadmConfigSpec.DeepCopy()
	spec.InitConfiguration = nil
	return r.addMachine(ctx, s, spec, machineCreation{
		failedReason: "FailedScaleUp", which: "additional", reason: "SuccessfulScaleUp", step: "scale up",
	})
}

// machineCreation names a step that creates a control plane Machine in its events and log line.
type machineCreation struct {
	// failedReason and which are the reason of the event of a failure, and which Machine it says failed
	// ("initial", "additional").
	failedReason, which string
	// reason and step are the reason of the event of a success, and the step it and the log name ("init",
	// "scale up").
	reason, step string
}

// addMachine creates a control plane Machine with spec, says so (events and log line of c), and requeues
// for the next step.
func (r *Reconciler) addMachine(ctx context.Context, s *scope, spec *bootstrapv1.KubeadmConfigSpec, c machineCreation) (ctrl.Result, error) {
	m, err := r.createMachine(ctx, s, spec)
	if err != nil {
		r.recorder.Eventf(s.kcp, corev1.EventTypeWarning, c.failedReason, "Failed to create %s control plane Machine for cluster %s control plane: %v", c.which, klog.KObj(s.cluster), err)
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Machine created ("+c.step+")", "Machine", klog.KObj(m))
	r.recorder.Eventf(s.kcp, corev1.EventTypeNormal, c.reason, "Created control plane Machine %s (%s)", m.Name, c.step)
	s.machines[m.Name] = m
	return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // Requeue for the next step, as upstream.
}

// scaleDown deletes one Machine, chosen as upstream does, once the preflight checks (of the other Machines)
// pass, after moving the etcd leadership away from it; its kcp-cleanup hook removes its etcd member.
func (r *Reconciler) scaleDown(ctx context.Context, s *scope, outdated []*clusterv1.Machine) (ctrl.Result, error) {
	victim := selectMachineForScaleDown(s, outdated)
	if victim == nil {
		return ctrl.Result{}, errors.New("failed to pick a control plane Machine to delete")
	}
	return r.deleteMachine(ctx, s, victim)
}

// deleteMachine deletes victim (scale down).
func (r *Reconciler) deleteMachine(ctx context.Context, s *scope, victim *clusterv1.Machine) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if res := r.preflightChecks(ctx, s, victim); !res.IsZero() {
		return res, nil
	}
	if s.isEtcdManaged() {
		if s.workload == nil {
			return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}, nil
		}
		var others []*clusterv1.Machine
		for _, m := range s.active() {
			if m.Name != victim.Name {
				others = append(others, m)
			}
		}
		if candidate := newest(others); candidate != nil {
			if err := r.forwardLeadership(ctx, s, victim, candidate); err != nil {
				log.Error(err, "Failed to move the etcd leadership to the candidate Machine", "candidate", klog.KObj(candidate))
				return ctrl.Result{}, err
			}
		}
	}
	if err := r.Client.Delete(ctx, victim); err != nil && !apierrors.IsNotFound(err) {
		r.recorder.Eventf(s.kcp, corev1.EventTypeWarning, "FailedScaleDown", "Failed to delete control plane Machine %s for cluster %s control plane: %v", victim.Name, klog.KObj(s.cluster), err)
		return ctrl.Result{}, err
	}
	r.machineWrites.deleted(client.ObjectKeyFromObject(s.kcp), victim.Name)
	log.Info("Deleting Machine (scale down)", "Machine", klog.KObj(victim))
	r.recorder.Eventf(s.kcp, corev1.EventTypeNormal, "SuccessfulScaleDown", "Deleting control plane Machine %s (scale down)", victim.Name)
	return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // Requeue for the next step, as upstream.
}

// rollout replaces outdated Machines one at a time: with maxSurge 1 it first creates a new Machine (up to
// replicas+1), with maxSurge 0 it first deletes an outdated one. At replicas+maxSurge Machines, the Machine
// it would delete is updated in place instead when in-place updates are on, the Machine is eligible, fewer
// Machines than replicas are up to date, and the CanUpdateMachine extension covers the whole difference
// (upstream's rollingUpdate; trying only where a Machine would be deleted anyway, the control plane can
// afford an update that fails). It keeps the kubeadm-config ConfigMap in line with the spec first, so that
// joining Machines read the new configuration.
func (r *Reconciler) rollout(ctx context.Context, s *scope, outdated []*clusterv1.Machine) (ctrl.Result, error) {
	if s.workload == nil {
		return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}, nil
	}
	if err := s.workload.AllowBootstrapTokensToGetNodes(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if err := s.workload.UpdateClusterConfiguration(ctx, s.kcp.Spec.KubeadmConfigSpec.ClusterConfiguration, s.kcp.Spec.Version); err != nil {
		return ctrl.Result{}, err
	}
	if int32(len(s.machines)) < s.replicas()+s.maxSurge() {
		return r.scaleUp(ctx, s)
	}
	victim := selectMachineForScaleDown(s, outdated)
	if victim == nil {
		return ctrl.Result{}, errors.New("failed to pick a control plane Machine to delete")
	}
	upToDate := int32(len(s.machines) - len(s.notUpToDate)) //nolint:gosec // A handful of Machines.
	if r.inPlaceUpdatesOn() && s.eligibleForInPlaceUpdate(victim) && upToDate < s.replicas() {
		fallback, res, err := r.tryInPlaceUpdate(ctx, s, victim)
		if err != nil || !res.IsZero() || !fallback {
			// Triggered: the Machine's change brings the control plane back.
			return res, err
		}
	}
	return r.deleteMachine(ctx, s, victim)
}

// selectMachineForScaleDown picks the Machine to delete as upstream does: among the outdated Machines with
// the delete-machine annotation, else any Machine with it, else outdated Machines with unhealthy
// components, else outdated Machines, else all Machines — the oldest of the failure domain with the most
// Machines.
func selectMachineForScaleDown(s *scope, outdated []*clusterv1.Machine) *clusterv1.Machine {
	annotated := func(in []*clusterv1.Machine) []*clusterv1.Machine {
		return filter(in, func(m *clusterv1.Machine) bool {
			_, ok := m.Annotations[clusterv1.DeleteMachineAnnotation]
			return ok
		})
	}
	eligible := s.all()
	switch {
	case len(annotated(outdated)) > 0:
		eligible = annotated(outdated)
	case len(annotated(eligible)) > 0:
		eligible = annotated(eligible)
	case len(filter(outdated, s.hasUnhealthyComponents)) > 0:
		eligible = filter(outdated, s.hasUnhealthyComponents)
	case len(outdated) > 0:
		eligible = outdated
	}
	return s.machineInFailureDomainWithMostMachines(eligible)
}

// hasUnhealthyComponents reports whether a Machine's component conditions are not all True.
func (s *scope) hasUnhealthyComponents(m *clusterv1.Machine) bool {
	for _, c := range s.healthConditions() {
		if !conditions.IsTrue(m, c) {
			return true
		}
	}
	return false
}

// healthConditions are the Machine conditions the preflight checks look at.
func (s *scope) healthConditions() []clusterv1.ConditionType {
	out := []clusterv1.ConditionType{controlplanev1.MachineAPIServerPodHealthyCondition, controlplanev1.MachineControllerManagerPodHealthyCondition, controlplanev1.MachineSchedulerPodHealthyCondition}
	if s.isEtcdManaged() {
		out = append(out, controlplanev1.MachineEtcdPodHealthyCondition, controlplanev1.MachineEtcdMemberHealthyCondition)
	}
	return out
}

// pendingTopologyVersion reports whether the Cluster's topology has a version the control plane does not
// have yet, and which: spec.topology.version, or, during a chained upgrade, the version of the current step
// (the Cluster's upgrade-step annotation), which the control plane is allowed to have.
func (s *scope) pendingTopologyVersion() (string, bool) {
	t := s.cluster.Spec.Topology
	if t == nil || t.Version == "" || t.Version == s.kcp.Spec.Version {
		return "", false
	}
	if step := s.cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation]; step != "" {
		if step == s.kcp.Spec.Version {
			return "", false
		}
		return step, true
	}
	return t.Version, true
}

// preflightChecks lets a scale or rollout step go on only when the control plane is stable: no Machine
// being deleted, and every Machine (but exclude) has a Node and healthy components. Otherwise it records why
// and asks to look again later.
func (r *Reconciler) preflightChecks(ctx context.Context, s *scope, exclude ...*clusterv1.Machine) ctrl.Result {
	log := ctrl.LoggerFrom(ctx)
	if len(s.machines) == 0 {
		return ctrl.Result{}
	}
	if v, waiting := s.pendingTopologyVersion(); waiting {
		s.preflight.topologyVersionMismatch = true
		log.Info(fmt.Sprintf("Waiting for a version upgrade to %s to be propagated from Cluster.spec.topology", v))
		return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}
	}
	if deleting := s.deleting(); len(deleting) > 0 {
		s.preflight.hasDeletingMachine = true
		log.Info("Waiting for Machines to be deleted", "machines", strings.Join(names(deleting), ", "))
		return ctrl.Result{RequeueAfter: deleteRequeueAfter}
	}
	r.readEtcdLive(ctx, s)
	var problems []string
	for _, m := range s.all() {
		skip := false
		for _, e := range exclude {
			skip = skip || e.Name == m.Name
		}
		if skip {
			continue
		}
		if m.Status.NodeRef == nil {
			problems = append(problems, fmt.Sprintf("Machine %s does not have a corresponding Node yet (Machine.status.nodeRef not set)", m.Name))
			s.preflight.controlPlaneComponentsNotHealthy = true
			s.preflight.etcdClusterNotHealthy = s.preflight.etcdClusterNotHealthy || s.isEtcdManaged()
			continue
		}
		for _, t := range s.healthConditions() {
			c := conditions.Get(m, t)
			var problem string
			switch {
			case c == nil:
				problem = fmt.Sprintf("Machine %s does not have %s condition", m.Name, t)
			case c.Status == corev1.ConditionFalse:
				problem = fmt.Sprintf("Machine %s reports %s condition is false (%s, %s)", m.Name, t, c.Severity, c.Message)
			case c.Status == corev1.ConditionUnknown:
				problem = fmt.Sprintf("Machine %s reports %s condition is unknown (%s)", m.Name, t, c.Message)
			default:
				continue
			}
			problems = append(problems, problem)
			if t == controlplanev1.MachineEtcdMemberHealthyCondition {
				s.preflight.etcdClusterNotHealthy = true
			} else {
				s.preflight.controlPlaneComponentsNotHealthy = true
			}
		}
	}
	if len(problems) > 0 {
		msg := strings.Join(problems, ", ")
		r.recorder.Eventf(s.kcp, corev1.EventTypeWarning, "ControlPlaneUnhealthy", "Waiting for control plane to pass preflight checks to continue reconciliation: %s", msg)
		log.Info("Waiting for control plane to pass preflight checks", "failures", msg)
		return ctrl.Result{RequeueAfter: preflightFailedRequeueAfter}
	}
	return ctrl.Result{}
}

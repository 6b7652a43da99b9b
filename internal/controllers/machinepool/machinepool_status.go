package machinepool

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// setStatus computes the MachinePool's status from the facts of a reconcile. Fields whose source was not
// observed this time (a workload cluster that cannot be reached, a deletion) keep their value.
func setStatus(s *scope, _ time.Time) {
	mp := s.mp
	mp.Status.ObservedGeneration = mp.Generation
	conditions.SetV1Beta2(mp, reconciler.PausedCondition(s.cluster, mp, "MachinePool", false))
	deleting := !mp.DeletionTimestamp.IsZero()

	if !deleting {
		setBootstrapStatus(mp, s.bootstrap)
		setInfrastructureStatus(mp, s.infra)
		if s.nodes != nil {
			mp.Status.NodeRefs = s.nodes.refs
			mp.Status.ReadyReplicas = s.nodes.ready
			mp.Status.AvailableReplicas = s.nodes.available
		}
		mp.Status.UnavailableReplicas = max(mp.Status.Replicas-mp.Status.AvailableReplicas, 0)
		setFailure(mp, s)
		if mp.Status.Replicas == mp.Status.ReadyReplicas && int32(len(mp.Status.NodeRefs)) == mp.Status.ReadyReplicas {
			conditions.MarkTrue(mp, clusterv1.ReplicasReadyCondition)
		} else {
			conditions.MarkFalse(mp, clusterv1.ReplicasReadyCondition, clusterv1.WaitingForReplicasReadyReason, clusterv1.ConditionSeverityInfo, "")
		}
	}
	conditions.SetSummary(mp, clusterv1.BootstrapReadyCondition, clusterv1.InfrastructureReadyCondition, clusterv1.ReplicasReadyCondition)

	setV1Beta2Replicas(s)
	setVersions(s)
	setAvailableCondition(mp, deleting)
	setScalingConditions(mp)
	if deleting {
		message := s.deletingMessage
		if message == "" {
			message = "Deleting the MachinePool"
		}
		setV1Beta2(mp, clusterv1.MachinePoolDeletingV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachinePoolDeletingV1Beta2Reason, message)
	} else {
		setV1Beta2(mp, clusterv1.MachinePoolDeletingV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolNotDeletingV1Beta2Reason, "")
	}
	setPhase(mp)
}

// setBootstrapStatus sets status.bootstrapReady and the BootstrapReady conditions.
func setBootstrapStatus(mp *clusterv1.MachinePool, f providerFacts) {
	ref := mp.Spec.Template.Spec.Bootstrap.ConfigRef
	switch {
	case ref == nil:
		mp.Status.BootstrapReady = mp.Spec.Template.Spec.Bootstrap.DataSecretName != nil
		if mp.Status.BootstrapReady {
			conditions.MarkTrue(mp, clusterv1.BootstrapReadyCondition)
		} else {
			conditions.MarkFalse(mp, clusterv1.BootstrapReadyCondition, clusterv1.WaitingForDataSecretFallbackReason, clusterv1.ConditionSeverityInfo, "")
		}
		setV1Beta2(mp, clusterv1.MachinePoolBootstrapConfigReadyV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachineBootstrapDataSecretProvidedV1Beta2Reason, "")
	case f.obj != nil:
		mp.Status.BootstrapReady = f.ready && mp.Spec.Template.Spec.Bootstrap.DataSecretName != nil
		conditions.MirrorReadyV1Beta1(mp, clusterv1.BootstrapReadyCondition, f.obj, mp.Status.BootstrapReady, clusterv1.WaitingForDataSecretFallbackReason)
		conditions.MirrorReadyV1Beta2(mp, clusterv1.MachinePoolBootstrapConfigReadyV1Beta2Condition, f.obj, mp.Status.BootstrapReady, providerReasons,
			fmt.Sprintf("%s status.dataSecretName is not set yet", ref.Kind))
	default:
		setReadProblem(mp, bootstrapConditions, *ref, f)
	}
}

// providerConditions are the conditions of a MachinePool that say how its bootstrap config or
// InfraMachinePool is doing, and the reasons they give when it cannot be read.
type providerConditions struct {
	// what names the reference in the v1beta1 message: bootstrap or infra.
	what                                 string
	v1beta1                              clusterv1.ConditionType
	v1beta2, doesNotExist, internalError string
}

var (
	bootstrapConditions = providerConditions{what: "bootstrap", v1beta1: clusterv1.BootstrapReadyCondition,
		v1beta2: clusterv1.MachinePoolBootstrapConfigReadyV1Beta2Condition, doesNotExist: clusterv1.MachineBootstrapConfigDoesNotExistV1Beta2Reason,
		internalError: clusterv1.MachineBootstrapConfigInternalErrorV1Beta2Reason}
	infrastructureConditions = providerConditions{what: "infra", v1beta1: clusterv1.InfrastructureReadyCondition,
		v1beta2: clusterv1.MachinePoolInfrastructureReadyV1Beta2Condition, doesNotExist: clusterv1.MachineInfrastructureDoesNotExistV1Beta2Reason,
		internalError: clusterv1.MachineInfrastructureInternalErrorV1Beta2Reason}
)

// setReadProblem sets the conditions c when the object ref points at does not exist or cannot be used
// (f says which); nothing otherwise.
func setReadProblem(mp *clusterv1.MachinePool, c providerConditions, ref corev1.ObjectReference, f providerFacts) {
	switch {
	case f.notFound:
		conditions.MarkFalse(mp, c.v1beta1, clusterv1.IncorrectExternalRefReason, clusterv1.ConditionSeverityError,
			"Could not find %s reference of kind %s with name %s", c.what, ref.Kind, ref.Name)
		setV1Beta2(mp, c.v1beta2, metav1.ConditionFalse, c.doesNotExist, fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name))
	case f.problem != "":
		conditions.MarkFalse(mp, c.v1beta1, clusterv1.IncorrectExternalRefReason, clusterv1.ConditionSeverityError, "%s", f.problem)
		setV1Beta2(mp, c.v1beta2, metav1.ConditionUnknown, c.internalError, f.problem)
	}
}

// setInfrastructureStatus sets status.infrastructureReady, status.replicas and the InfrastructureReady
// conditions.
func setInfrastructureStatus(mp *clusterv1.MachinePool, f providerFacts) {
	ref := mp.Spec.Template.Spec.InfrastructureRef
	switch {
	case f.obj != nil:
		mp.Status.InfrastructureReady = f.ready
		if f.ready && f.replicasFound {
			mp.Status.Replicas = f.replicas
		}
		conditions.MirrorReadyV1Beta1(mp, clusterv1.InfrastructureReadyCondition, f.obj, f.ready, clusterv1.WaitingForInfrastructureFallbackReason)
		conditions.MirrorReadyV1Beta2(mp, clusterv1.MachinePoolInfrastructureReadyV1Beta2Condition, f.obj, f.ready, providerReasons,
			fmt.Sprintf("%s is not provisioned yet", ref.Kind))
	default:
		setReadProblem(mp, infrastructureConditions, ref, f)
	}
}

// setFailure sets the terminal failure fields (v1beta1 contract), which are never cleared: a failure the
// bootstrap config or InfraMachinePool reports, or an InfraMachinePool deleted after it was ready.
func setFailure(mp *clusterv1.MachinePool, s *scope) {
	for _, f := range []providerFacts{s.bootstrap, s.infra} {
		if f.obj == nil {
			continue
		}
		if f.failureReason != "" {
			mp.Status.FailureReason = ptr.To(clusterv1.MachinePoolStatusFailure(f.failureReason))
		}
		if f.failureMessage != "" {
			mp.Status.FailureMessage = ptr.To(fmt.Sprintf("Failure detected from referenced resource %s with name %q: %s",
				f.obj.GroupVersionKind(), f.obj.GetName(), f.failureMessage))
		}
	}
	if s.infra.notFound && mp.Status.InfrastructureReady {
		ref := mp.Spec.Template.Spec.InfrastructureRef
		mp.Status.FailureReason = ptr.To(clusterv1.InvalidConfigurationMachinePoolError)
		mp.Status.FailureMessage = ptr.To(fmt.Sprintf("MachinePool infrastructure resource %s with name %q has been deleted after being ready",
			ref.GroupVersionKind(), ref.Name))
	}
}

// setV1Beta2Replicas sets the v1beta2 counters: from the MachinePool Machines' conditions when the
// InfraMachinePool creates Machines, otherwise from the pool's Nodes. MachinePool Machines are up to date
// unless something says they are not (their UpToDate condition False): the InfraMachinePool decides.
func setV1Beta2Replicas(s *scope) {
	mp := s.mp
	if mp.Status.V1Beta2 == nil {
		mp.Status.V1Beta2 = &clusterv1.MachinePoolV1Beta2Status{}
	}
	v := mp.Status.V1Beta2
	if !s.machinesRead {
		v.ReadyReplicas = ptr.To(mp.Status.ReadyReplicas)
		v.AvailableReplicas = ptr.To(mp.Status.AvailableReplicas)
		v.UpToDateReplicas = ptr.To(mp.Status.Replicas)
		return
	}
	var ready, available, upToDate int32
	for i := range s.machines {
		m := &s.machines[i]
		if conditions.IsV1Beta2True(m, clusterv1.MachineReadyV1Beta2Condition) {
			ready++
		}
		if conditions.IsV1Beta2True(m, clusterv1.MachineAvailableV1Beta2Condition) {
			available++
		}
		if c := conditions.GetV1Beta2(m, clusterv1.MachineUpToDateV1Beta2Condition); c == nil || c.Status != metav1.ConditionFalse {
			upToDate++
		}
	}
	v.ReadyReplicas, v.AvailableReplicas, v.UpToDateReplicas = ptr.To(ready), ptr.To(available), ptr.To(upToDate)
}

// setVersions sets status.versions, as upstream: the MachinePool Machines' Kubernetes versions when the
// InfraMachinePool creates Machines, otherwise the kubelet versions of the pool's Nodes; it keeps its value
// when neither was read.
func setVersions(s *scope) {
	switch {
	case s.machinesRead:
		machines := make([]*clusterv1.Machine, len(s.machines))
		for i := range s.machines {
			machines[i] = &s.machines[i]
		}
		s.mp.Status.Versions = kubeversion.FromMachines(machines)
	case s.nodes != nil:
		s.mp.Status.Versions = s.nodes.versions
	}
}

// setAvailableCondition: a MachinePool is Available when its InfraMachinePool is ready and at least
// spec.replicas of its Nodes are available.
func setAvailableCondition(mp *clusterv1.MachinePool, deleting bool) {
	desired := ptr.Deref(mp.Spec.Replicas, 1)
	switch {
	case deleting:
		setV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolAvailableDeletingV1Beta2Reason, "")
	case !mp.Status.InfrastructureReady:
		setV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolNotAvailableV1Beta2Reason,
			fmt.Sprintf("%s is not ready", mp.Spec.Template.Spec.InfrastructureRef.Kind))
	case mp.Status.AvailableReplicas < desired:
		setV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolNotAvailableV1Beta2Reason,
			fmt.Sprintf("%d available replicas, at least %d required", mp.Status.AvailableReplicas, desired))
	default:
		setV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachinePoolAvailableV1Beta2Reason, "")
	}
}

// setScalingConditions: ScalingUp while fewer replicas are available than spec.replicas, ScalingDown
// while the pool has more replicas than spec.replicas.
func setScalingConditions(mp *clusterv1.MachinePool) {
	desired := ptr.Deref(mp.Spec.Replicas, 1)
	if mp.Status.AvailableReplicas < desired {
		setV1Beta2(mp, clusterv1.MachinePoolScalingUpV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachinePoolScalingUpV1Beta2Reason,
			fmt.Sprintf("Scaling up from %d to %d replicas", mp.Status.AvailableReplicas, desired))
	} else {
		setV1Beta2(mp, clusterv1.MachinePoolScalingUpV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolNotScalingUpV1Beta2Reason, "")
	}
	if mp.Status.Replicas > desired {
		setV1Beta2(mp, clusterv1.MachinePoolScalingDownV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachinePoolScalingDownV1Beta2Reason,
			fmt.Sprintf("Scaling down from %d to %d replicas", mp.Status.Replicas, desired))
	} else {
		setV1Beta2(mp, clusterv1.MachinePoolScalingDownV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachinePoolNotScalingDownV1Beta2Reason, "")
	}
}

// setPhase sets the phase by upstream's rules, later rules winning.
func setPhase(mp *clusterv1.MachinePool) {
	st := &mp.Status
	if st.Phase == "" {
		st.Phase = string(clusterv1.MachinePoolPhasePending)
	}
	if st.BootstrapReady && !st.InfrastructureReady {
		st.Phase = string(clusterv1.MachinePoolPhaseProvisioning)
	}
	if len(st.NodeRefs) != 0 {
		st.Phase = string(clusterv1.MachinePoolPhaseProvisioned)
	}
	_, autoscaled := mp.Annotations[clusterv1.ReplicasManagedByAnnotation]
	if st.InfrastructureReady && mp.Spec.Replicas != nil {
		switch desired := *mp.Spec.Replicas; {
		case desired == st.ReadyReplicas:
			st.Phase = string(clusterv1.MachinePoolPhaseRunning)
		case autoscaled:
			st.Phase = string(clusterv1.MachinePoolPhaseScaling)
		case desired > st.ReadyReplicas:
			st.Phase = string(clusterv1.MachinePoolPhaseScalingUp)
		default:
			st.Phase = string(clusterv1.MachinePoolPhaseScalingDown)
		}
	}
	if st.FailureReason != nil || st.FailureMessage != nil {
		st.Phase = string(clusterv1.MachinePoolPhaseFailed)
	}
	if !mp.DeletionTimestamp.IsZero() {
		st.Phase = string(clusterv1.MachinePoolPhaseDeleting)
	}
}

func setV1Beta2(mp *clusterv1.MachinePool, t string, status metav1.ConditionStatus, reason, message string) {
	conditions.SetV1Beta2(mp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: mp.Generation})
}

// providerReasons are the reasons of the MachinePool's v1beta2 conditions that mirror its providers' Ready
// condition when they give none.
var providerReasons = conditions.ProviderReasons{Ready: "Ready", NotReady: "NotReady", Invalid: "InvalidConditionReported"}

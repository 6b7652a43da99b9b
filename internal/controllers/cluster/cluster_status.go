package cluster

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

const (
	noReasonReported = "NoReasonReported"
	// maxNames is how many object names (or groups of them) a message lists before it only counts the others.
	maxNames = 5
)

// mirrorOptions: the Cluster's conditions that mirror a provider object's keep its lastTransitionTime and,
// unless True, its severity. Providers' messages are cut to what the API accepts (conditions.Truncate), so
// that they never block the status patch.
var mirrorOptions = conditions.MirrorOptions{KeepTransitionTime: true, KeepSeverity: true}

// updateStatus computes the Cluster's status from the facts a reconcile recorded: the v1beta1 fields and
// conditions, then the status.v1beta2 counters and conditions, Available last as it summarises the others.
func updateStatus(s *scope) {
	c := s.cluster
	setInfrastructureStatus(c, s.infra)
	setControlPlaneStatus(c, s.controlPlane)
	c.Status.Phase = string(computePhase(c))

	setV1Beta1InfrastructureReadyCondition(c, s.infra)
	setV1Beta1ControlPlaneReadyCondition(c, s.controlPlane)
	setV1Beta1ControlPlaneInitializedCondition(c, s.controlPlane, s.descendants, s.descendantsRead)
	conditions.SetSummary(c, clusterv1.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition)

	setControlPlaneReplicas(c, s.controlPlane, s.descendants, s.descendantsRead)
	setWorkersReplicas(c, s.descendants, s.descendantsRead)
	setInfrastructureReadyCondition(c, s.infra)
	setControlPlaneAvailableCondition(c, s.controlPlane)
	setControlPlaneInitializedCondition(c, s.controlPlane, s.descendants, s.descendantsRead)
	setWorkersAvailableCondition(c, s.descendants, s.descendantsRead)
	setDeletingCondition(c, s.deletingReason, s.deletingMessage)
	setPausedCondition(c)
	setAvailableCondition(c)
}

// setInfrastructureStatus surfaces the InfraCluster: infrastructureReady (which, once true, stays true),
// the failure domains once it is provisioned, and its terminal failure. A Cluster without InfraCluster
// needs no infrastructure: it is ready; but a Cluster with a topology waits for the topology controller to
// create its InfraCluster (as upstream, which does not look at the infrastructure of such a Cluster
// before): infrastructureReady set now would say true before the InfraCluster even exists, and stay true.
func setInfrastructureStatus(c *clusterv1.Cluster, infra externalObject) {
	if c.Spec.InfrastructureRef == nil {
		if c.DeletionTimestamp.IsZero() && c.Spec.Topology == nil {
			c.Status.InfrastructureReady = true
		}
		return
	}
	if infra.obj == nil {
		return
	}
	setFailure(c, infra)
	if !infra.ready {
		return
	}
	c.Status.InfrastructureReady = true
	c.Status.FailureDomains = infra.failureDomains
}

// setControlPlaneStatus surfaces the control plane object: controlPlaneReady (which, once true, stays
// true) and its terminal failure.
func setControlPlaneStatus(c *clusterv1.Cluster, cp externalObject) {
	if c.Spec.ControlPlaneRef == nil || cp.obj == nil {
		return
	}
	setFailure(c, cp)
	if cp.ready {
		c.Status.ControlPlaneReady = true
	}
}

// setFailure copies a provider object's terminal failure to the Cluster. A failure is never cleared: the
// only way out is to delete the Cluster.
func setFailure(c *clusterv1.Cluster, o externalObject) {
	if o.failureReason != "" {
		c.Status.FailureReason = ptr.To(clusterv1.ClusterStatusError(o.failureReason))
	}
	if o.failureMessage != "" {
		c.Status.FailureMessage = ptr.To(conditions.Truncate(fmt.Sprintf("Failure detected from referenced resource %v with name %q: %s",
			o.obj.GroupVersionKind(), o.obj.GetName(), o.failureMessage), conditions.MaxV1Beta1MessageLength))
	}
}

// computePhase returns the Cluster's phase: Deleting, then Failed on a terminal failure, Provisioned once
// the infrastructure is ready and the endpoint known, Provisioning once it references an InfraCluster or
// a control plane, Pending before.
func computePhase(c *clusterv1.Cluster) clusterv1.ClusterPhase {
	switch {
	case !c.DeletionTimestamp.IsZero():
		return clusterv1.ClusterPhaseDeleting
	case c.Status.FailureReason != nil || c.Status.FailureMessage != nil:
		return clusterv1.ClusterPhaseFailed
	case c.Status.InfrastructureReady && c.Spec.ControlPlaneEndpoint.IsValid():
		return clusterv1.ClusterPhaseProvisioned
	case c.Spec.InfrastructureRef != nil || c.Spec.ControlPlaneRef != nil:
		return clusterv1.ClusterPhaseProvisioning
	default:
		return clusterv1.ClusterPhasePending
	}
}

// setV1Beta1InfrastructureReadyCondition mirrors the InfraCluster's Ready condition, or says whether it is
// provisioned when it has none.
func setV1Beta1InfrastructureReadyCondition(c *clusterv1.Cluster, infra externalObject) {
	ref := c.Spec.InfrastructureRef
	switch {
	case ref == nil:
		// A Cluster with a topology waits for its InfraCluster (see setInfrastructureStatus).
		if c.DeletionTimestamp.IsZero() && c.Spec.Topology == nil {
			conditions.MarkTrue(c, clusterv1.InfrastructureReadyCondition)
		}
	case infra.obj != nil:
		conditions.MirrorV1Beta1(c, clusterv1.InfrastructureReadyCondition, infra.readyCondition,
			fallbackV1Beta1(c, infra.ready, clusterv1.WaitingForInfrastructureFallbackReason), mirrorOptions)
	case infra.notFound:
		setV1Beta1Missing(c, clusterv1.InfrastructureReadyCondition, ref, c.Status.InfrastructureReady, clusterv1.WaitingForInfrastructureFallbackReason)
	case infra.problem != "":
		conditions.MarkFalse(c, clusterv1.InfrastructureReadyCondition, clusterv1.WaitingForInfrastructureFallbackReason, clusterv1.ConditionSeverityWarning, "%s", infra.problem)
	}
	// When the InfraCluster could not be read for another reason the condition keeps its last value.
}

// setV1Beta1ControlPlaneReadyCondition mirrors the control plane object's Ready condition, or says whether
// it is ready when it has none. A Cluster without control plane object has no such condition.
func setV1Beta1ControlPlaneReadyCondition(c *clusterv1.Cluster, cp externalObject) {
	ref := c.Spec.ControlPlaneRef
	switch {
	case ref == nil:
		conditions.Delete(c, clusterv1.ControlPlaneReadyCondition)
	case cp.obj != nil:
		conditions.MirrorV1Beta1(c, clusterv1.ControlPlaneReadyCondition, cp.readyCondition,
			fallbackV1Beta1(c, cp.ready, clusterv1.WaitingForControlPlaneFallbackReason), mirrorOptions)
	case cp.notFound:
		setV1Beta1Missing(c, clusterv1.ControlPlaneReadyCondition, ref, c.Status.ControlPlaneReady, clusterv1.WaitingForControlPlaneFallbackReason)
	case cp.problem != "":
		conditions.MarkFalse(c, clusterv1.ControlPlaneReadyCondition, clusterv1.WaitingForControlPlaneFallbackReason, clusterv1.ConditionSeverityWarning, "%s", cp.problem)
	}
}

// fallbackV1Beta1 is the condition mirroring a provider object that reports none: whether it is ready.
func fallbackV1Beta1(c *clusterv1.Cluster, ready bool, waitingReason string) clusterv1.Condition {
	if !c.DeletionTimestamp.IsZero() {
		waitingReason = clusterv1.DeletingReason
	}
	return conditions.ReadyFallbackV1Beta1(ready, waitingReason)
}

// setV1Beta1Missing reports a referenced object that does not exist: deleted (an error while the Cluster
// lives on, if it had been ready) or not created yet.
func setV1Beta1Missing(c *clusterv1.Cluster, t clusterv1.ConditionType, ref *corev1.ObjectReference, wasReady bool, waitingReason string) {
	switch {
	case !c.DeletionTimestamp.IsZero():
		conditions.MarkFalse(c, t, clusterv1.DeletedReason, clusterv1.ConditionSeverityInfo, "%s %s has been deleted", ref.Kind, ref.Name)
	case wasReady:
		conditions.MarkFalse(c, t, clusterv1.DeletedReason, clusterv1.ConditionSeverityError, "%s %s has been deleted while the Cluster still exists", ref.Kind, ref.Name)
	default:
		conditions.MarkFalse(c, t, waitingReason, clusterv1.ConditionSeverityInfo, "%s %s does not exist", ref.Kind, ref.Name)
	}
}

// setV1Beta1ControlPlaneInitializedCondition says whether the control plane is initialized: as the control
// plane object says, or, without one, once a control plane Machine has a Node. Once true it stays true.
func setV1Beta1ControlPlaneInitializedCondition(c *clusterv1.Cluster, cp externalObject, d descendants, descendantsRead bool) {
	if conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition) {
		return
	}
	const waiting = "Waiting for control plane provider to indicate the control plane has been initialized"
	switch {
	case c.Spec.ControlPlaneRef != nil:
		switch {
		case cp.obj != nil && cp.initialized:
			conditions.MarkTrue(c, clusterv1.ControlPlaneInitializedCondition)
		case cp.obj != nil || cp.notFound:
			conditions.MarkFalse(c, clusterv1.ControlPlaneInitializedCondition, clusterv1.WaitingForControlPlaneProviderInitializedReason, clusterv1.ConditionSeverityInfo, waiting)
		}
	case c.Spec.Topology != nil || !descendantsRead:
		// The topology controller creates the control plane object; or the Machines could not be listed.
	case anyHasNode(d.controlPlaneMachines):
		conditions.MarkTrue(c, clusterv1.ControlPlaneInitializedCondition)
	default:
		conditions.MarkFalse(c, clusterv1.ControlPlaneInitializedCondition, clusterv1.MissingNodeRefReason, clusterv1.ConditionSeverityInfo,
			"Waiting for the first control plane machine to have its status.nodeRef set")
	}
}

func anyHasNode(machines []clusterv1.Machine) bool {
	for _, m := range machines {
		if m.Status.NodeRef != nil {
			return true
		}
	}
	return false
}

func v1beta2Status(c *clusterv1.Cluster) *clusterv1.ClusterV1Beta2Status {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &clusterv1.ClusterV1Beta2Status{}
	}
	return c.Status.V1Beta2
}

// setControlPlaneReplicas copies the control plane object's counters and status.versions (by contract;
// none when it has none) or, without one, counts the control plane Machines and their Kubernetes versions.
// Counters that cannot be read keep their last value.
func setControlPlaneReplicas(c *clusterv1.Cluster, cp externalObject, d descendants, descendantsRead bool) {
	if c.Spec.ControlPlaneRef != nil {
		if cp.obj == nil {
			return
		}
		r := cp.replicas
		versions := cp.versions
		if !cp.versionsRead && c.Status.V1Beta2 != nil && c.Status.V1Beta2.ControlPlane != nil {
			versions = c.Status.V1Beta2.ControlPlane.Versions
		}
		v1beta2Status(c).ControlPlane = &clusterv1.ClusterControlPlaneStatus{
			DesiredReplicas: r.Desired, Replicas: r.Replicas, UpToDateReplicas: r.UpToDate,
			ReadyReplicas: r.Ready, AvailableReplicas: r.Available, Versions: versions, UpgradePlan: controlPlaneUpgradePlan(c),
		}
		return
	}
	if !descendantsRead {
		return
	}
	n := countMachines(d.controlPlaneMachines)
	v1beta2Status(c).ControlPlane = &clusterv1.ClusterControlPlaneStatus{
		DesiredReplicas: ptr.To(n.replicas), Replicas: ptr.To(n.replicas), UpToDateReplicas: ptr.To(n.upToDate),
		ReadyReplicas: ptr.To(n.ready), AvailableReplicas: ptr.To(n.available),
		Versions: kubeversion.FromMachines(pointers(d.controlPlaneMachines)), UpgradePlan: controlPlaneUpgradePlan(c),
	}
}

// controlPlaneUpgradePlan and workersUpgradePlan are the upgrade plans in the Cluster's status, which the
// topology controller writes: the counters' writes keep them.
func controlPlaneUpgradePlan(c *clusterv1.Cluster) []clusterv1.StatusUpgradePlanVersion {
	if c.Status.V1Beta2 == nil || c.Status.V1Beta2.ControlPlane == nil {
		return nil
	}
	return c.Status.V1Beta2.ControlPlane.UpgradePlan
}

func workersUpgradePlan(c *clusterv1.Cluster) []clusterv1.StatusUpgradePlanVersion {
	if c.Status.V1Beta2 == nil || c.Status.V1Beta2.Workers == nil {
		return nil
	}
	return c.Status.V1Beta2.Workers.UpgradePlan
}

// setWorkersReplicas adds up the workers' counters, as upstream: those of the MachineDeployments' status,
// of the MachineSets no MachineDeployment owns, and of the worker Machines (those without the control-plane
// label) no MachineSet owns, each counting as one desired replica. Counted from the MachineDeployments'
// and MachineSets' status, the counters change when those do (once for changes of several Machines), not
// with each Machine's. workers.versions merges, as upstream v1.14, the status.versions of the MachinePools
// (whose replicas the counters leave out), MachineDeployments and those MachineSets, and the versions of
// those Machines.
func setWorkersReplicas(c *clusterv1.Cluster, d descendants, descendantsRead bool) {
	if !descendantsRead {
		return
	}
	var desired int32
	var n machineCounts
	var versions []clusterv1.StatusVersion
	add := func(replicas int32, c counters) {
		n.replicas += replicas
		n.ready += c.ready
		n.available += c.available
		n.upToDate += c.upToDate
	}
	for _, mp := range d.machinePools {
		versions = append(versions, mp.Status.Versions...)
	}
	for _, md := range d.machineDeployments {
		desired += ptr.Deref(md.Spec.Replicas, 0)
		add(md.Status.Replicas, replicaCounters(md.Status.V1Beta2))
		versions = append(versions, md.Status.Versions...)
	}
	for _, ms := range d.machineSets {
		if !ownedBy(&ms, "MachineDeployment") {
			desired += ptr.Deref(ms.Spec.Replicas, 0)
			add(ms.Status.Replicas, replicaCounters(ms.Status.V1Beta2))
			versions = append(versions, ms.Status.Versions...)
		}
	}
	var standalone []clusterv1.Machine
	for _, m := range d.workerMachines {
		if !ownedBy(&m, "MachineSet") {
			desired++
			standalone = append(standalone, m)
		}
	}
	m := countMachines(standalone)
	n.replicas, n.ready, n.available, n.upToDate = n.replicas+m.replicas, n.ready+m.ready, n.available+m.available, n.upToDate+m.upToDate
	versions = append(versions, kubeversion.FromMachines(pointers(standalone))...)
	v1beta2Status(c).Workers = &clusterv1.WorkersStatus{
		DesiredReplicas: ptr.To(desired), Replicas: ptr.To(n.replicas), UpToDateReplicas: ptr.To(n.upToDate),
		ReadyReplicas: ptr.To(n.ready), AvailableReplicas: ptr.To(n.available), Versions: kubeversion.Aggregate(versions),
		UpgradePlan: workersUpgradePlan(c),
	}
}

// pointers points at the Machines of a list.
func pointers(machines []clusterv1.Machine) []*clusterv1.Machine {
	out := make([]*clusterv1.Machine, len(machines))
	for i := range machines {
		out[i] = &machines[i]
	}
	return out
}

// ownedBy reports whether obj has a controller owner of a Cluster API kind.
func ownedBy(obj metav1.Object, kind string) bool {
	owner := metav1.GetControllerOfNoCopy(obj)
	return owner != nil && owner.Kind == kind && strings.HasPrefix(owner.APIVersion, clusterv1.GroupVersion.Group+"/")
}

type machineCounts struct{ replicas, ready, available, upToDate int32 }

func countMachines(machines []clusterv1.Machine) machineCounts {
	var n machineCounts
	for i := range machines {
		m := &machines[i]
		n.replicas++
		if conditions.IsV1Beta2True(m, machineReadyCondition) {
			n.ready++
		}
		if conditions.IsV1Beta2True(m, machineAvailableCondition) {
			n.available++
		}
		if conditions.IsV1Beta2True(m, machineUpToDateCondition) {
			n.upToDate++
		}
	}
	return n
}

// setInfrastructureReadyCondition sets the v1beta2 InfrastructureReady condition: the InfraCluster's Ready
// condition or, when it has none, whether it is provisioned.
func setInfrastructureReadyCondition(c *clusterv1.Cluster, infra externalObject) {
	const t = clusterv1.ClusterInfrastructureReadyV1Beta2Condition
	ref := c.Spec.InfrastructureRef
	if ref == nil && c.Spec.Topology != nil {
		// As upstream: the topology controller has not created the InfraCluster yet.
		message := ""
		if c.DeletionTimestamp.IsZero() {
			message = "Waiting for cluster topology to be reconciled"
		}
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterInfrastructureDoesNotExistV1Beta2Reason, message)
		return
	}
	if ref == nil {
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterInfrastructureDoesNotExistV1Beta2Reason, "")
		return
	}
	setProviderV1Beta2Condition(c, t, ref, infra, c.Status.InfrastructureReady, providerV1Beta2Reasons{
		invalid: clusterv1.ClusterInfrastructureInvalidConditionReportedV1Beta2Reason,
		ready:   clusterv1.ClusterInfrastructureReadyV1Beta2Reason, notReady: clusterv1.ClusterInfrastructureNotReadyV1Beta2Reason,
		internalError: clusterv1.ClusterInfrastructureInternalErrorV1Beta2Reason,
		deleted:       clusterv1.ClusterInfrastructureDeletedV1Beta2Reason, doesNotExist: clusterv1.ClusterInfrastructureDoesNotExistV1Beta2Reason,
		v1beta2Field: "status.initialization.provisioned",
	})
}

// setControlPlaneAvailableCondition sets the v1beta2 ControlPlaneAvailable condition: the control plane
// object's Available condition or, when it has none, whether it is ready. A Cluster without control
// plane object has no available control plane, as upstream.
func setControlPlaneAvailableCondition(c *clusterv1.Cluster, cp externalObject) {
	const t = clusterv1.ClusterControlPlaneAvailableV1Beta2Condition
	ref := c.Spec.ControlPlaneRef
	if ref == nil {
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterControlPlaneDoesNotExistV1Beta2Reason, "")
		return
	}
	setProviderV1Beta2Condition(c, t, ref, cp, c.Status.ControlPlaneReady, providerV1Beta2Reasons{
		invalid: clusterv1.ClusterControlPlaneInvalidConditionReportedV1Beta2Reason,
		ready:   clusterv1.ClusterControlPlaneAvailableV1Beta2Reason, notReady: clusterv1.ClusterControlPlaneNotAvailableV1Beta2Reason,
		internalError: clusterv1.ClusterControlPlaneAvailableInternalErrorV1Beta2Reason,
		deleted:       clusterv1.ClusterControlPlaneDeletedV1Beta2Reason, doesNotExist: clusterv1.ClusterControlPlaneDoesNotExistV1Beta2Reason,
		v1beta2Field: "status.initialization.controlPlaneInitialized",
	})
}

// providerV1Beta2Reasons are the reasons of a v1beta2 condition that mirrors a provider object's, and the
// field of a v1beta2-contract provider that says it is ready (v1beta1: status.ready).
type providerV1Beta2Reasons struct {
	invalid, ready, notReady, internalError, deleted, doesNotExist string
	v1beta2Field                                                   string
}

// setProviderV1Beta2Condition sets the v1beta2 condition t from the provider object o that ref points to:
// its condition or, when it has none, whether it is ready; or why it could not be read.
func setProviderV1Beta2Condition(c *clusterv1.Cluster, t string, ref *corev1.ObjectReference, o externalObject, ready bool, r providerV1Beta2Reasons) {
	switch {
	case o.obj != nil && o.conditionError != nil:
		setV1Beta2(c, t, metav1.ConditionUnknown, r.invalid, o.conditionError.Error())
	case o.obj != nil:
		fallback := metav1.Condition{Status: metav1.ConditionTrue, Reason: r.ready}
		if !ready {
			fallback = metav1.Condition{Status: metav1.ConditionFalse, Reason: r.notReady, Message: conditions.NotReadyMessage(ref.Kind, o.contract, r.v1beta2Field)}
		}
		conditions.SetV1Beta2(c, conditions.MirrorV1Beta2(t, o.v1beta2Condition, fallback, r.ready, noReasonReported, mirrorOptions))
	case o.problem != "":
		setV1Beta2(c, t, metav1.ConditionUnknown, r.internalError, o.problem)
	case !o.notFound:
		setV1Beta2(c, t, metav1.ConditionUnknown, r.internalError, conditions.InternalErrorMessage)
	default:
		setV1Beta2Missing(c, t, ref, ready, r.deleted, r.doesNotExist)
	}
}

// setV1Beta2Missing reports a referenced object that does not exist: deleted, if the Cluster had seen it
// ready, or not created yet.
func setV1Beta2Missing(c *clusterv1.Cluster, t string, ref *corev1.ObjectReference, wasReady bool, deletedReason, doesNotExistReason string) {
	deleting := !c.DeletionTimestamp.IsZero()
	switch {
	case wasReady && deleting:
		setV1Beta2(c, t, metav1.ConditionFalse, deletedReason, fmt.Sprintf("%s has been deleted", ref.Kind))
	case wasReady:
		setV1Beta2(c, t, metav1.ConditionFalse, deletedReason, fmt.Sprintf("%s has been deleted while the cluster still exists", ref.Kind))
	default:
		setV1Beta2(c, t, metav1.ConditionFalse, doesNotExistReason, fmt.Sprintf("%s does not exist", ref.Kind))
	}
}

// setControlPlaneInitializedCondition sets the v1beta2 ControlPlaneInitialized condition, as its v1beta1
// counterpart. Once true it stays true.
func setControlPlaneInitializedCondition(c *clusterv1.Cluster, cp externalObject, d descendants, descendantsRead bool) {
	const t = clusterv1.ClusterControlPlaneInitializedV1Beta2Condition
	if conditions.IsV1Beta2True(c, t) {
		return
	}
	ref := c.Spec.ControlPlaneRef
	switch {
	case ref == nil && c.Spec.Topology != nil:
		message := ""
		if c.DeletionTimestamp.IsZero() {
			message = "Waiting for cluster topology to be reconciled"
		}
		setV1Beta2(c, t, metav1.ConditionUnknown, clusterv1.ClusterControlPlaneDoesNotExistV1Beta2Reason, message)
	case ref != nil && cp.obj != nil && cp.initialized:
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterControlPlaneInitializedV1Beta2Reason, "")
	case ref != nil && cp.obj != nil:
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterControlPlaneNotInitializedV1Beta2Reason, "Control plane not yet initialized")
	case ref != nil && cp.notFound:
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterControlPlaneDoesNotExistV1Beta2Reason, fmt.Sprintf("%s does not exist", ref.Kind))
	case ref != nil || !descendantsRead:
		setV1Beta2(c, t, metav1.ConditionUnknown, clusterv1.ClusterControlPlaneInitializedInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
	case anyHasNode(d.controlPlaneMachines):
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterControlPlaneInitializedV1Beta2Reason, "")
	default:
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterControlPlaneNotInitializedV1Beta2Reason,
			"Waiting for the first control plane machine to have status.nodeRef set")
	}
}

// setWorkersAvailableCondition aggregates the Available conditions of the MachineDeployments.
func setWorkersAvailableCondition(c *clusterv1.Cluster, d descendants, descendantsRead bool) {
	const t = clusterv1.ClusterWorkersAvailableV1Beta2Condition
	if !descendantsRead {
		setV1Beta2(c, t, metav1.ConditionUnknown, clusterv1.ClusterWorkersAvailableInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
		return
	}
	if len(d.machineDeployments) == 0 {
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterWorkersAvailableNoWorkersV1Beta2Reason, "")
		return
	}
	var issues, unknowns messageGroups
	for i := range d.machineDeployments {
		md := &d.machineDeployments[i]
		cond := conditions.GetV1Beta2(md, machineAvailableCondition)
		switch {
		case cond == nil:
			unknowns.add(md.Name, "Condition Available not yet reported")
		case cond.Status == metav1.ConditionFalse:
			issues.add(md.Name, messageOrReason(cond))
		case cond.Status != metav1.ConditionTrue:
			unknowns.add(md.Name, messageOrReason(cond))
		}
	}
	switch {
	case len(issues) > 0:
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterWorkersNotAvailableV1Beta2Reason, issues.format("MachineDeployment"))
	case len(unknowns) > 0:
		setV1Beta2(c, t, metav1.ConditionUnknown, clusterv1.ClusterWorkersAvailableUnknownV1Beta2Reason, unknowns.format("MachineDeployment"))
	default:
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterWorkersAvailableV1Beta2Reason, "")
	}
}

// setDeletingCondition says whether the Cluster is being deleted and what the deletion waits for.
func setDeletingCondition(c *clusterv1.Cluster, reason, message string) {
	const t = clusterv1.ClusterDeletingV1Beta2Condition
	if c.DeletionTimestamp.IsZero() {
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterNotDeletingV1Beta2Reason, "")
		return
	}
	if reason == "" {
		reason, message = clusterv1.ClusterDeletingInternalErrorV1Beta2Reason, conditions.InternalErrorMessage
	}
	setV1Beta2(c, t, metav1.ConditionTrue, reason, message)
}

// setPausedCondition says whether the Cluster is paused, and why.
func setPausedCondition(c *clusterv1.Cluster) {
	conditions.SetV1Beta2(c, reconciler.PausedCondition(c, c, "Cluster", reconciler.IsPaused(c, c)))
}

// setAvailableCondition summarises Deleting (good when false), InfrastructureReady, ControlPlaneAvailable,
// WorkersAvailable, TopologyReconciled for Clusters with a topology, and the availability gates: False when
// one reports an issue, Unknown when one is unknown or missing, True otherwise.
// RemoteConnectionProbe is left out until capstan probes workload clusters.
func setAvailableCondition(c *clusterv1.Cluster) {
	type check struct {
		conditionType string
		negative      bool
	}
	checks := []check{
		{conditionType: clusterv1.ClusterDeletingV1Beta2Condition, negative: true},
		{conditionType: clusterv1.ClusterInfrastructureReadyV1Beta2Condition},
		{conditionType: clusterv1.ClusterControlPlaneAvailableV1Beta2Condition},
		{conditionType: clusterv1.ClusterWorkersAvailableV1Beta2Condition},
	}
	if c.Spec.Topology != nil {
		checks = append(checks, check{conditionType: clusterv1.ClusterTopologyReconciledV1Beta2Condition})
	}
	seen := map[string]bool{}
	for _, ch := range checks {
		seen[ch.conditionType] = true
	}
	for _, gate := range c.Spec.AvailabilityGates {
		if seen[gate.ConditionType] {
			continue
		}
		seen[gate.ConditionType] = true
		checks = append(checks, check{conditionType: gate.ConditionType, negative: gate.Polarity == clusterv1.NegativePolarityCondition})
	}

	var issues, unknowns []string
	for _, ch := range checks {
		cond := conditions.GetV1Beta2(c, ch.conditionType)
		good, bad := metav1.ConditionTrue, metav1.ConditionFalse
		if ch.negative {
			good, bad = bad, good
		}
		switch {
		case cond == nil:
			unknowns = append(unknowns, bullet(ch.conditionType, "Condition not yet reported"))
		case cond.Status == bad:
			issues = append(issues, bullet(ch.conditionType, messageOrReason(cond)))
		case cond.Status != good:
			unknowns = append(unknowns, bullet(ch.conditionType, messageOrReason(cond)))
		}
	}
	const t = clusterv1.ClusterAvailableV1Beta2Condition
	switch {
	case len(issues) > 0:
		setV1Beta2(c, t, metav1.ConditionFalse, clusterv1.ClusterNotAvailableV1Beta2Reason, strings.Join(issues, "\n"))
	case len(unknowns) > 0:
		setV1Beta2(c, t, metav1.ConditionUnknown, clusterv1.ClusterAvailableUnknownV1Beta2Reason, strings.Join(unknowns, "\n"))
	default:
		setV1Beta2(c, t, metav1.ConditionTrue, clusterv1.ClusterAvailableV1Beta2Reason, "")
	}
}

func setV1Beta2(c *clusterv1.Cluster, t string, status metav1.ConditionStatus, reason, message string) {
	conditions.SetV1Beta2(c, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
}

func messageOrReason(c *metav1.Condition) string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}

// bullet formats one line of a summary message; the lines of a multi-line message are indented under it.
func bullet(subject, message string) string {
	return "* " + subject + ": " + strings.ReplaceAll(message, "\n", "\n  ")
}

// messageGroups groups object names by message, in the order the messages first appear.
type messageGroups []struct {
	message string
	names   []string
}

func (g *messageGroups) add(name, message string) {
	for i := range *g {
		if (*g)[i].message == message {
			(*g)[i].names = append((*g)[i].names, name)
			return
		}
	}
	*g = append(*g, struct {
		message string
		names   []string
	}{message: message, names: []string{name}})
}

func (g messageGroups) format(kind string) string {
	lines := make([]string, 0, len(g))
	for i, group := range g {
		if i == maxNames {
			var others int
			for _, rest := range g[i:] {
				others += len(rest.names)
			}
			lines = append(lines, fmt.Sprintf("* And %s with other messages", namedCount(kind, others)))
			break
		}
		lines = append(lines, bullet(namedObjects(kind, group.names), group.message))
	}
	return strings.Join(lines, "\n")
}

func namedCount(kind string, n int) string {
	if n != 1 {
		kind += "s"
	}
	return fmt.Sprintf("%d %s", n, kind)
}

// namedObjects returns "Kind a" or "Kinds a, b, c", listing at most maxNames names.
func namedObjects(kind string, names []string) string {
	if len(names) != 1 {
		kind += "s"
	}
	shown := names
	if len(names) > maxNames {
		shown = names[:maxNames]
	}
	out := kind + " " + strings.Join(shown, ", ")
	if len(names) > maxNames {
		out += fmt.Sprintf(", ... (%d more)", len(names)-maxNames)
	}
	return out
}

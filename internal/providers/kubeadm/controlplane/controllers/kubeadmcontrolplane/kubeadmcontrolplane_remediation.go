package kubeadmcontrolplane

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
)

// The conditions a MachineHealthCheck sets on the Machines it checks, as upstream names them.
const (
	healthCheckSucceededCondition clusterv1.ConditionType = "HealthCheckSucceeded"
	ownerRemediatedCondition      clusterv1.ConditionType = "OwnerRemediated"
	waitingForRemediationReason                           = "WaitingForRemediation"
	remediationFailedReason                               = "RemediationFailed"
	remediationInProgressReason                           = "RemediationInProgress"
)

// remediationData is the value of the remediation-in-progress and remediation-for annotations.
type remediationData struct {
	Machine    string      `json:"machine"`
	Timestamp  metav1.Time `json:"timestamp"`
	RetryCount int         `json:"retryCount"`
}

func parseRemediationData(value string) (*remediationData, error) {
	d := &remediationData{}
	if err := json.Unmarshal([]byte(value), d); err != nil {
		return nil, fmt.Errorf("reading remediation data %q: %w", value, err)
	}
	return d, nil
}

func (d *remediationData) String() string {
	data, _ := json.Marshal(d)
	return string(data)
}

// isUnhealthy reports whether a MachineHealthCheck found the Machine unhealthy.
func isUnhealthy(m *clusterv1.Machine) bool {
	return conditions.IsFalse(m, healthCheckSucceededCondition) ||
		isV1Beta2False(m, string(healthCheckSucceededCondition))
}

// toBeRemediatedByKCP reports whether a MachineHealthCheck asks the Machine's owner to remediate it.
func toBeRemediatedByKCP(m *clusterv1.Machine) bool {
	return isUnhealthy(m) && (conditions.IsFalse(m, ownerRemediatedCondition) || isV1Beta2False(m, string(ownerRemediatedCondition)))
}

func isV1Beta2False(m *clusterv1.Machine, t string) bool {
	c := conditions.GetV1Beta2(m, t)
	return c != nil && c.Status == metav1.ConditionFalse
}

// markOwnerRemediated sets OwnerRemediated (v1beta1 and, when the MachineHealthCheck wrote it, v1beta2).
func markOwnerRemediated(m *clusterv1.Machine, reason string, severity clusterv1.ConditionSeverity, v1beta2Reason, message string) {
	conditions.MarkFalse(m, ownerRemediatedCondition, reason, severity, "%s", message)
	if conditions.GetV1Beta2(m, string(ownerRemediatedCondition)) != nil {
		conditions.SetV1Beta2(m, metav1.Condition{Type: string(ownerRemediatedCondition), Status: metav1.ConditionFalse, Reason: v1beta2Reason, Message: message})
	}
}

// reconcileUnhealthyMachines remediates one Machine a MachineHealthCheck marked, when it is safe: it deletes
// the Machine (after moving the etcd leadership away; the kcp-cleanup hook removes its member) and records
// the remediation in the remediation-in-progress annotation, which the replacement Machine inherits as
// remediation-for. It returns true when it acted and the reconcile should stop.
func (r *Reconciler) reconcileUnhealthyMachines(ctx context.Context, s *scope) (bool, error) {
	log := ctrl.LoggerFrom(ctx)

	// A Machine that recovered no longer waits for its owner.
	for _, m := range s.active() {
		if !conditions.IsTrue(m, healthCheckSucceededCondition) || !conditions.IsFalse(m, ownerRemediatedCondition) {
			continue
		}
		h := patch.NewHelper(m, r.Client)
		conditions.Delete(m, ownerRemediatedCondition)
		if c := conditions.GetV1Beta2(m, string(ownerRemediatedCondition)); c != nil {
			list := m.GetV1Beta2Conditions()
			out := list[:0]
			for _, c := range list {
				if c.Type != string(ownerRemediatedCondition) {
					out = append(out, c)
				}
			}
			m.SetV1Beta2Conditions(out)
		}
		if err := h.Patch(ctx, m); err != nil {
			return false, err
		}
	}

	var candidates []*clusterv1.Machine
	for _, m := range s.all() {
		if toBeRemediatedByKCP(m) {
			candidates = append(candidates, m)
		}
	}
	if len(candidates) == 0 {
		return false, nil
	}
	sort.Slice(candidates, func(i, j int) bool { return remediateFirst(candidates[i], candidates[j], s.isEtcdManaged()) })
	m := candidates[0]
	if !m.DeletionTimestamp.IsZero() {
		return false, nil
	}
	log = log.WithValues("Machine", klog.KObj(m))

	// Another remediation waits for its replacement Machine.
	if v, ok := s.kcp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
		d, err := parseRemediationData(v)
		if err != nil {
			return false, err
		}
		stale := false
		for _, other := range s.machines {
			if other.CreationTimestamp.After(d.Timestamp.Time) {
				stale = true
			}
		}
		if !stale {
			log.Info("Another remediation is already in progress, skipping remediation")
			return false, nil
		}
		delete(s.kcp.Annotations, controlplanev1.RemediationInProgressAnnotation)
	}

	h := patch.NewHelper(m, r.Client)
	acted, err := r.remediate(ctx, s, m)
	if perr := h.Patch(ctx, m); perr != nil && err == nil {
		err = fmt.Errorf("patching control plane Machine %s: %w", m.Name, perr)
	}
	return acted, err
}

// remediate checks the limits and the safety of deleting m, and deletes it when both allow it.
func (r *Reconciler) remediate(ctx context.Context, s *scope, m *clusterv1.Machine) (bool, error) {
	log := ctrl.LoggerFrom(ctx)
	deferred := func(v1beta2Reason, message string) (bool, error) {
		log.Info("A control plane Machine needs remediation, skipping it: " + message)
		markOwnerRemediated(m, waitingForRemediationReason, clusterv1.ConditionSeverityWarning, v1beta2Reason, message)
		return false, nil
	}
	if v, waiting := s.pendingTopologyVersion(); waiting {
		return deferred(controlplanev1.KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason,
			fmt.Sprintf("KubeadmControlPlane can't remediate while waiting for a version upgrade to %s to be propagated from Cluster.spec.topology", v))
	}
	data, ok, reason, message := checkRetryLimits(s, m)
	if !ok {
		return deferred(reason, message)
	}

	if s.kcp.Status.Initialized {
		if len(s.machines) <= 1 {
			return deferred(controlplanev1.KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason, "KubeadmControlPlane can't remediate if current replicas are less or equal to 1")
		}
		for _, other := range s.all() {
			if !isUnhealthy(other) && other.Status.NodeRef == nil {
				return deferred(controlplanev1.KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason, "KubeadmControlPlane waiting for control plane Machine provisioning to complete before triggering remediation")
			}
		}
		if len(s.deleting()) > 0 {
			return deferred(controlplanev1.KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason, "KubeadmControlPlane waiting for control plane Machine deletion to complete before triggering remediation")
		}
		if s.isEtcdManaged() {
			r.readEtcdLive(ctx, s)
			if s.etcdMembers == nil || s.workload == nil {
				return deferred(controlplanev1.KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason, "KubeadmControlPlane can't remediate this Machine because the etcd members could not be read")
			}
			if !canSafelyRemoveEtcdMember(s, m) {
				return deferred(controlplanev1.KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason, "KubeadmControlPlane can't remediate this Machine because this could result in etcd loosing quorum")
			}
			var healthy []*clusterv1.Machine
			for _, other := range s.active() {
				if other.Name != m.Name && !isUnhealthy(other) {
					healthy = append(healthy, other)
				}
			}
			candidate := newest(healthy)
			if candidate == nil {
				markOwnerRemediated(m, remediationFailedReason, clusterv1.ConditionSeverityWarning, controlplanev1.KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason,
					"KubeadmControlPlane can't remediate this Machine because there is no healthy Machine to forward etcd leadership to")
				return false, nil
			}
			if err := r.forwardLeadership(ctx, s, m, candidate); err != nil {
				markOwnerRemediated(m, remediationFailedReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachineRemediationInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
				return false, err
			}
		}
	}

	if err := r.Client.Delete(ctx, m); err != nil {
		markOwnerRemediated(m, remediationFailedReason, clusterv1.ConditionSeverityError, controlplanev1.KubeadmControlPlaneMachineRemediationInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
		return false, fmt.Errorf("deleting unhealthy Machine %s: %w", m.Name, err)
	}
	r.machineWrites.deleted(client.ObjectKeyFromObject(s.kcp), m.Name)
	log.Info("Deleting Machine (remediating unhealthy Machine)")
	r.recorder.Eventf(s.kcp, corev1.EventTypeNormal, "MachineRemediation", "Deleting unhealthy control plane Machine %s to replace it", m.Name)
	markOwnerRemediated(m, remediationInProgressReason, clusterv1.ConditionSeverityWarning, controlplanev1.KubeadmControlPlaneMachineRemediationMachineDeletingV1Beta2Reason, "Machine is deleting")
	if s.kcp.Annotations == nil {
		s.kcp.Annotations = map[string]string{}
	}
	s.kcp.Annotations[controlplanev1.RemediationInProgressAnnotation] = data.String()
	return true, nil
}

// checkRetryLimits says whether m may be remediated under remediationStrategy: a Machine that replaced
// another remediated one less than minHealthyPeriod ago counts as a retry, which waits retryPeriod and stops
// after maxRetry. It returns the remediation data to record.
func checkRetryLimits(s *scope, m *clusterv1.Machine) (*remediationData, bool, string, string) {
	data := &remediationData{Machine: m.Name, Timestamp: metav1.NewTime(s.now.UTC().Truncate(time.Second))}
	v, ok := m.Annotations[controlplanev1.RemediationForAnnotation]
	if !ok {
		return data, true, "", ""
	}
	last, err := parseRemediationData(v)
	if err != nil {
		return data, true, "", ""
	}
	minHealthy := controlplanev1.DefaultMinHealthyPeriod
	var retryPeriod time.Duration
	var maxRetry *int32
	if rs := s.kcp.Spec.RemediationStrategy; rs != nil {
		if rs.MinHealthyPeriod != nil {
			minHealthy = rs.MinHealthyPeriod.Duration
		}
		retryPeriod = rs.RetryPeriod.Duration
		maxRetry = rs.MaxRetry
	}
	lastTime := s.now.Add(-2 * max(minHealthy, retryPeriod))
	if !last.Timestamp.IsZero() {
		lastTime = last.Timestamp.Time
	}
	if !lastTime.Add(minHealthy).After(s.now) {
		// The previous remediation is old enough: this is a new failure.
		return data, true, "", ""
	}
	data.RetryCount = last.RetryCount
	if lastTime.Add(retryPeriod).After(s.now) {
		return data, false, controlplanev1.KubeadmControlPlaneMachineRemediationDeferredV1Beta2Reason,
			fmt.Sprintf("KubeadmControlPlane can't remediate this machine because the operation already failed in the latest %s (RetryPeriod)", retryPeriod)
	}
	if maxRetry != nil && data.RetryCount >= int(*maxRetry) {
		return data, false, controlplanev1.KubeadmControlPlaneMachineCannotBeRemediatedV1Beta2Reason,
			fmt.Sprintf("KubeadmControlPlane can't remediate this machine because the operation already failed %d times (MaxRetry)", *maxRetry)
	}
	data.RetryCount++
	return data, true, "", ""
}

// canSafelyRemoveEtcdMember reports whether etcd keeps its quorum without m's member: the members left,
// less those whose Machine's EtcdMemberHealthy is not True (or that have no Machine), must be a majority of
// the members left.
func canSafelyRemoveEtcdMember(s *scope, m *clusterv1.Machine) bool {
	total, unhealthy := 0, 0
	for _, member := range s.etcdMembers {
		if m.Status.NodeRef != nil && m.Status.NodeRef.Name == member.Name {
			continue
		}
		total++
		var owner *clusterv1.Machine
		for _, other := range s.machines {
			if other.Status.NodeRef != nil && other.Status.NodeRef.Name == member.Name {
				owner = other
			}
		}
		if owner == nil || !conditions.IsTrue(owner, controlplanev1.MachineEtcdMemberHealthyCondition) {
			unhealthy++
		}
	}
	return total-unhealthy >= total/2+1
}

// remediateFirst orders the Machines to remediate: the remediate-machine annotation first, then Machines
// without a Node, then with an unhealthy etcd member, etcd Pod, API server, controller manager, scheduler,
// then the oldest.
func remediateFirst(i, j *clusterv1.Machine, etcdManaged bool) bool {
	_, ai := i.Annotations[clusterv1.RemediateMachineAnnotation]
	_, aj := j.Annotations[clusterv1.RemediateMachineAnnotation]
	if ai != aj {
		return ai
	}
	if (i.Status.NodeRef == nil) != (j.Status.NodeRef == nil) {
		return i.Status.NodeRef == nil
	}
	order := []clusterv1.ConditionType{controlplanev1.MachineAPIServerPodHealthyCondition, controlplanev1.MachineControllerManagerPodHealthyCondition, controlplanev1.MachineSchedulerPodHealthyCondition}
	if etcdManaged {
		order = append([]clusterv1.ConditionType{controlplanev1.MachineEtcdMemberHealthyCondition, controlplanev1.MachineEtcdPodHealthyCondition}, order...)
	}
	for _, t := range order {
		ti, tj := conditions.IsTrue(i, t), conditions.IsTrue(j, t)
		if ti != tj {
			return !ti
		}
	}
	if !i.CreationTimestamp.Equal(&j.CreationTimestamp) {
		return i.CreationTimestamp.Before(&j.CreationTimestamp)
	}
	return i.Name < j.Name
}

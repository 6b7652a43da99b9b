package kubeadmcontrolplane

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// selector returns the label selector of a Cluster's control plane Machines, as status.selector says it.
func selector(clusterName string) string {
	return fmt.Sprintf("%s=%s,%s", clusterv1.ClusterNameLabel, clusterName, clusterv1.MachineControlPlaneLabel)
}

// setPausedStatus sets what a paused reconcile reports: the Paused condition.
func setPausedStatus(s *scope) {
	setPausedCondition(s, true)
}

// setPausedCondition says whether the KubeadmControlPlane is paused, and why.
func setPausedCondition(s *scope, paused bool) {
	conditions.SetV1Beta2(s.kcp, reconciler.PausedCondition(s.cluster, s.kcp, "KubeadmControlPlane", paused))
}

// setStatus computes the status of the KubeadmControlPlane and the UpToDate condition of its Machines from
// what the reconcile found.
func setStatus(s *scope) {
	kcp := s.kcp
	st := &kcp.Status
	setPausedCondition(s, false)
	st.Selector = selector(s.cluster.Name)
	st.Replicas = int32(len(s.machines))                             //nolint:gosec // A handful of Machines.
	st.UpdatedReplicas = int32(len(s.machines) - len(s.notUpToDate)) //nolint:gosec // A handful of Machines.
	if s.workloadStatus != nil {
		st.ReadyReplicas = s.workloadStatus.ReadyNodes
	}
	if len(s.machines) == 0 {
		st.ReadyReplicas = 0
	}
	// Deprecated upstream in v1beta2, still part of the v1beta1 API and its printer columns.
	st.UnavailableReplicas = max(max(s.replicas(), st.Replicas)-st.ReadyReplicas, 0) //nolint:staticcheck // See above.
	if st.ReadyReplicas > 0 {
		st.Ready = true
	}
	st.Version = lowestVersion(s.all())
	st.Versions = kubeversion.FromMachines(s.all())
	setLastRemediation(s)

	for _, m := range s.machines {
		setMachineUpToDate(s, m)
	}
	setV1Beta1Conditions(s)
	setV1Beta2Conditions(s)
}

// lowestVersion returns the lowest Kubernetes version of the Machines, nil when one has none.
func lowestVersion(machines []*clusterv1.Machine) *string {
	var lowest *semver.Version
	var out *string
	for _, m := range machines {
		if m.Spec.Version == nil {
			return nil
		}
		v, err := semver.ParseTolerant(*m.Spec.Version)
		if err != nil {
			return nil
		}
		if lowest == nil || v.LT(*lowest) {
			lowest, out = &v, ptr.To(*m.Spec.Version)
		}
	}
	return out
}

func setLastRemediation(s *scope) {
	var last *remediationData
	if v, ok := s.kcp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
		last, _ = parseRemediationData(v)
	}
	if last == nil {
		for _, m := range s.machines {
			if v, ok := m.Annotations[controlplanev1.RemediationForAnnotation]; ok {
				if d, err := parseRemediationData(v); err == nil && (last == nil || d.Timestamp.After(last.Timestamp.Time)) {
					last = d
				}
			}
		}
	}
	if last != nil {
		s.kcp.Status.LastRemediation = &controlplanev1.LastRemediationStatus{Machine: last.Machine, Timestamp: last.Timestamp, RetryCount: int32(last.RetryCount)} //nolint:gosec // Small.
	}
}

// setMachineUpToDate sets a Machine's v1beta2 UpToDate condition, which its owner writes.
func setMachineUpToDate(s *scope, m *clusterv1.Machine) {
	c := metav1.Condition{Type: clusterv1.MachineUpToDateV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineUpToDateV1Beta2Reason}
	if r, ok := s.notUpToDate[m.Name]; ok {
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineNotUpToDateV1Beta2Reason
		c.Message = "* " + strings.Join(r.condition, "\n* ")
	} else if s.inPlaceUpdates && inPlaceUpdateInProgress(m) {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, clusterv1.MachineUpToDateUpdatingV1Beta2Reason, inPlaceUpdatingMessage(m)
	}
	if !m.DeletionTimestamp.IsZero() && c.Status == metav1.ConditionTrue {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "Deleting", "Machine is deleting"
	}
	conditions.SetV1Beta2(m, c)
}

func setV1Beta1Conditions(s *scope) {
	kcp := s.kcp
	if f := s.machinesCreatedFailure; f != nil {
		conditions.MarkFalse(kcp, controlplanev1.MachinesCreatedCondition, f.reason, clusterv1.ConditionSeverityError, "%s", f.message)
	} else if len(s.machines) > 0 {
		conditions.MarkTrue(kcp, controlplanev1.MachinesCreatedCondition)
	}
	if s.certificatesErr != nil {
		conditions.MarkFalse(kcp, controlplanev1.CertificatesAvailableCondition, controlplanev1.CertificatesGenerationFailedReason, clusterv1.ConditionSeverityWarning, "%s", s.certificatesErr.Error())
	} else if s.cluster.Status.InfrastructureReady {
		conditions.MarkTrue(kcp, controlplanev1.CertificatesAvailableCondition)
	}
	if outdated := s.needingRollout(); len(outdated) > 0 {
		conditions.MarkFalse(kcp, controlplanev1.MachinesSpecUpToDateCondition, controlplanev1.RollingUpdateInProgressReason, clusterv1.ConditionSeverityWarning,
			"Rolling %d replicas with outdated spec (%d replicas up to date)", len(outdated), len(s.machines)-len(outdated))
	} else if conditions.Get(kcp, controlplanev1.MachinesSpecUpToDateCondition) != nil {
		conditions.MarkTrue(kcp, controlplanev1.MachinesSpecUpToDateCondition)
	}
	desired, current := s.replicas(), int32(len(s.active())) //nolint:gosec // Small.
	switch {
	case !kcp.DeletionTimestamp.IsZero():
		conditions.MarkFalse(kcp, controlplanev1.ResizedCondition, clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, "")
	case current < desired:
		conditions.MarkFalse(kcp, controlplanev1.ResizedCondition, controlplanev1.ScalingUpReason, clusterv1.ConditionSeverityWarning, "Scaling up control plane to %d replicas (actual %d)", desired, current)
	case int32(len(s.machines)) > desired: //nolint:gosec // Small.
		conditions.MarkFalse(kcp, controlplanev1.ResizedCondition, controlplanev1.ScalingDownReason, clusterv1.ConditionSeverityWarning, "Scaling down control plane to %d replicas (actual %d)", desired, len(s.machines))
	case len(s.machines) > 0:
		conditions.MarkTrue(kcp, controlplanev1.ResizedCondition)
	}
	setMachinesReadyV1Beta1(s)
	if kcp.Status.Initialized {
		conditions.MarkTrue(kcp, controlplanev1.AvailableCondition)
	} else {
		conditions.MarkFalse(kcp, controlplanev1.AvailableCondition, controlplanev1.WaitingForKubeadmInitReason, clusterv1.ConditionSeverityInfo, "")
	}
	if s.healthInspected {
		aggregateV1Beta1(s, s.podComponentConditions(), s.componentsErrors, controlplanev1.ControlPlaneComponentsHealthyCondition,
			controlplanev1.ControlPlaneComponentsUnhealthyReason, controlplanev1.ControlPlaneComponentsUnknownReason, "control plane")
		if s.isEtcdManaged() {
			aggregateV1Beta1(s, []clusterv1.ConditionType{controlplanev1.MachineEtcdMemberHealthyCondition}, s.etcdErrors, controlplanev1.EtcdClusterHealthyCondition,
				controlplanev1.EtcdClusterUnhealthyReason, controlplanev1.EtcdClusterUnknownReason, "etcd member")
		} else {
			conditions.MarkTrue(kcp, controlplanev1.EtcdClusterHealthyCondition)
		}
	}
	conditions.SetSummary(kcp, controlplanev1.MachinesCreatedCondition, controlplanev1.MachinesSpecUpToDateCondition, controlplanev1.ResizedCondition,
		controlplanev1.MachinesReadyCondition, controlplanev1.AvailableCondition, controlplanev1.CertificatesAvailableCondition)
}

func (s *scope) podComponentConditions() []clusterv1.ConditionType {
	var out []clusterv1.ConditionType
	for _, c := range s.podComponents() {
		out = append(out, c.v1)
	}
	return out
}

// setMachinesReadyV1Beta1 aggregates the Machines' v1beta1 Ready conditions: the most severe problem wins,
// named after its Machine.
func setMachinesReadyV1Beta1(s *scope) {
	var worst *clusterv1.Condition
	var worstMachine string
	unknown := ""
	for _, m := range s.all() {
		c := conditions.Get(m, clusterv1.ReadyCondition)
		switch {
		case c == nil || c.Status == corev1.ConditionUnknown:
			if unknown == "" {
				unknown = m.Name
			}
		case c.Status == corev1.ConditionFalse:
			if worst == nil || conditions.SeverityRank(c.Severity) > conditions.SeverityRank(worst.Severity) {
				worst, worstMachine = c, m.Name
			}
		}
	}
	switch {
	case len(s.machines) == 0:
		conditions.Delete(s.kcp, controlplanev1.MachinesReadyCondition)
	case worst != nil:
		conditions.MarkFalse(s.kcp, controlplanev1.MachinesReadyCondition, worst.Reason, worst.Severity, "%s @ Machine/%s", worst.Message, worstMachine)
	case unknown != "":
		conditions.MarkUnknown(s.kcp, controlplanev1.MachinesReadyCondition, "ReadyUnknown", "Machine %s readiness is unknown", unknown)
	default:
		conditions.MarkTrue(s.kcp, controlplanev1.MachinesReadyCondition)
	}
}

// aggregateV1Beta1 sets a KubeadmControlPlane condition from the Machines' component conditions and the
// problems found outside the Machines, as upstream words it.
func aggregateV1Beta1(s *scope, types []clusterv1.ConditionType, kcpErrors []string, t clusterv1.ConditionType, unhealthyReason, unknownReason, note string) {
	var errs, warns, infos, unknowns []string
	for _, m := range s.all() {
		worst := ""
		for _, ct := range types {
			c := conditions.Get(m, ct)
			switch {
			case c == nil || c.Status == corev1.ConditionUnknown:
				if worst == "" {
					worst = "unknown"
				}
			case c.Status == corev1.ConditionFalse:
				switch c.Severity {
				case clusterv1.ConditionSeverityError:
					worst = "error"
				case clusterv1.ConditionSeverityWarning:
					if worst != "error" {
						worst = "warning"
					}
				default:
					if worst == "" || worst == "unknown" {
						worst = "info"
					}
				}
			}
		}
		switch worst {
		case "error":
			errs = append(errs, m.Name)
		case "warning":
			warns = append(warns, m.Name)
		case "info":
			infos = append(infos, m.Name)
		case "unknown":
			unknowns = append(unknowns, m.Name)
		}
	}
	switch {
	case len(kcpErrors) > 0:
		conditions.MarkFalse(s.kcp, t, unhealthyReason, clusterv1.ConditionSeverityError, "%s", strings.Join(kcpErrors, "; "))
	case len(errs) > 0:
		conditions.MarkFalse(s.kcp, t, unhealthyReason, clusterv1.ConditionSeverityError, "Following machines are reporting %s errors: %s", note, strings.Join(errs, ", "))
	case len(warns) > 0:
		conditions.MarkFalse(s.kcp, t, unhealthyReason, clusterv1.ConditionSeverityWarning, "Following machines are reporting %s warnings: %s", note, strings.Join(warns, ", "))
	case len(infos) > 0:
		conditions.MarkFalse(s.kcp, t, unhealthyReason, clusterv1.ConditionSeverityInfo, "Following machines are reporting %s info: %s", note, strings.Join(infos, ", "))
	case len(unknowns) > 0:
		conditions.MarkUnknown(s.kcp, t, unknownReason, "Following machines are reporting unknown %s status: %s", note, strings.Join(unknowns, ", "))
	default:
		conditions.MarkTrue(s.kcp, t)
	}
}

// componentsHealthy reports whether the v1beta1 ControlPlaneComponentsHealthy condition is not False.
func componentsHealthy(kcp *controlplanev1.KubeadmControlPlane) bool {
	return !conditions.IsFalse(kcp, controlplanev1.ControlPlaneComponentsHealthyCondition)
}

// setV1Beta2Conditions computes the v1beta2 conditions and counters.
func setV1Beta2Conditions(s *scope) {
	kcp := s.kcp
	if kcp.Status.V1Beta2 == nil {
		kcp.Status.V1Beta2 = &controlplanev1.KubeadmControlPlaneV1Beta2Status{}
	}
	var ready, available, upToDate int32
	for _, m := range s.machines {
		if conditions.IsV1Beta2True(m, clusterv1.MachineReadyV1Beta2Condition) {
			ready++
		}
		if conditions.IsV1Beta2True(m, clusterv1.MachineAvailableV1Beta2Condition) {
			available++
		}
		if conditions.IsV1Beta2True(m, clusterv1.MachineUpToDateV1Beta2Condition) {
			upToDate++
		}
	}
	kcp.Status.V1Beta2.ReadyReplicas, kcp.Status.V1Beta2.AvailableReplicas, kcp.Status.V1Beta2.UpToDateReplicas = &ready, &available, &upToDate

	set := func(t string, status metav1.ConditionStatus, reason, message string) {
		conditions.SetV1Beta2(kcp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
	}
	if kcp.Status.Initialized {
		set(controlplanev1.KubeadmControlPlaneInitializedV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneInitializedV1Beta2Reason, "")
	} else {
		set(controlplanev1.KubeadmControlPlaneInitializedV1Beta2Condition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotInitializedV1Beta2Reason, "Control plane not yet initialized")
	}
	switch {
	case s.certificatesErr != nil:
		set(controlplanev1.KubeadmControlPlaneCertificatesAvailableV1Beta2Condition, metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneCertificatesInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
	case s.cluster.Status.InfrastructureReady:
		set(controlplanev1.KubeadmControlPlaneCertificatesAvailableV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneCertificatesAvailableV1Beta2Reason, "")
	}
	setHealthV1Beta2(s)
	setAvailableV1Beta2(s)
	setMachinesV1Beta2(s)
	setScalingV1Beta2(s)
	setRemediatingV1Beta2(s)
	if kcp.DeletionTimestamp.IsZero() {
		set(controlplanev1.KubeadmControlPlaneDeletingV1Beta2Condition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotDeletingV1Beta2Reason, "")
	} else if s.deletingReason != "" {
		set(controlplanev1.KubeadmControlPlaneDeletingV1Beta2Condition, metav1.ConditionTrue, s.deletingReason, s.deletingMessage)
	}
}

// setHealthV1Beta2 sets ControlPlaneComponentsHealthy and EtcdClusterHealthy.
func setHealthV1Beta2(s *scope) {
	if !s.healthInspected {
		if s.notInspectedReason == "" {
			return
		}
		set := func(t, reason string) {
			conditions.SetV1Beta2(s.kcp, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: s.notInspectedMessage})
		}
		set(controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Condition, s.notInspectedReason)
		set(controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition, s.notInspectedReason)
		return
	}
	var comps []string
	for _, c := range s.podComponents() {
		comps = append(comps, c.v2)
	}
	aggregateV1Beta2(s, comps, s.componentsErrors, controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Condition,
		controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Reason, controlplanev1.KubeadmControlPlaneControlPlaneComponentsNotHealthyV1Beta2Reason,
		controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthUnknownV1Beta2Reason)
	if s.isEtcdManaged() {
		aggregateV1Beta2(s, []string{etcdMember.v2}, s.etcdErrors, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition,
			controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Reason, controlplanev1.KubeadmControlPlaneEtcdClusterNotHealthyV1Beta2Reason,
			controlplanev1.KubeadmControlPlaneEtcdClusterHealthUnknownV1Beta2Reason)
	} else {
		conditions.SetV1Beta2(s.kcp, metav1.Condition{Type: controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Reason})
	}
}

// aggregateV1Beta2 sets a condition from the Machines' conditions of types and the problems found outside
// the Machines; the message lists each problem with its Machine.
func aggregateV1Beta2(s *scope, types, kcpErrors []string, t, trueReason, falseReason, unknownReason string) {
	var falseLines, unknownLines []string
	for _, m := range s.all() {
		for _, ct := range types {
			c := conditions.GetV1Beta2(m, ct)
			switch {
			case c == nil:
				unknownLines = append(unknownLines, fmt.Sprintf("* Machine %s: %s not yet reported", m.Name, ct))
			case c.Status == metav1.ConditionFalse:
				falseLines = append(falseLines, fmt.Sprintf("* Machine %s: %s: %s", m.Name, ct, c.Message))
			case c.Status == metav1.ConditionUnknown:
				unknownLines = append(unknownLines, fmt.Sprintf("* Machine %s: %s: %s", m.Name, ct, c.Message))
			}
		}
	}
	for _, e := range kcpErrors {
		falseLines = append(falseLines, "* "+e)
	}
	c := metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: trueReason}
	switch {
	case len(falseLines) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, falseReason, strings.Join(append(falseLines, unknownLines...), "\n")
	case len(unknownLines) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, unknownReason, strings.Join(unknownLines, "\n")
	}
	conditions.SetV1Beta2(s.kcp, c)
}

// setAvailableV1Beta2 sets Available: the control plane is initialized, etcd (when stacked) has a quorum of
// healthy members, and at least one Machine has all its components healthy.
func setAvailableV1Beta2(s *scope) {
	set := func(status metav1.ConditionStatus, reason, message string) {
		conditions.SetV1Beta2(s.kcp, metav1.Condition{Type: controlplanev1.KubeadmControlPlaneAvailableV1Beta2Condition, Status: status, Reason: reason, Message: message})
	}
	if !s.kcp.DeletionTimestamp.IsZero() {
		set(metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableV1Beta2Reason, "KubeadmControlPlane is deleted")
		return
	}
	if !s.kcp.Status.Initialized {
		set(metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableV1Beta2Reason, "Control plane not yet initialized")
		return
	}
	if !s.healthInspected {
		if s.notInspectedReason != "" {
			set(metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneAvailableInspectionFailedV1Beta2Reason, s.notInspectedMessage)
		}
		return
	}
	var problems []string
	if s.isEtcdManaged() {
		if s.etcdMembers == nil {
			set(metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneAvailableInspectionFailedV1Beta2Reason, "Failed to get etcd members")
			return
		}
		healthy := 0
		for _, mb := range s.etcdMembers {
			if m := machineForNode(s, mb.Name); m != nil && conditions.IsV1Beta2True(m, etcdMember.v2) {
				healthy++
			}
		}
		if quorum := len(s.etcdMembers)/2 + 1; healthy < quorum {
			problems = append(problems, fmt.Sprintf("* %d of %d etcd members are healthy, at least %d required for etcd quorum", healthy, len(s.etcdMembers), quorum))
		}
	}
	anyHealthy := false
	for _, m := range s.active() {
		ok := true
		for _, c := range s.podComponents() {
			ok = ok && conditions.IsV1Beta2True(m, c.v2)
		}
		if s.isEtcdManaged() {
			ok = ok && conditions.IsV1Beta2True(m, etcdMember.v2)
		}
		anyHealthy = anyHealthy || ok
	}
	if !anyHealthy {
		problems = append(problems, "* There are no Machines with healthy control plane components, at least 1 required")
	}
	if len(problems) > 0 {
		set(metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableV1Beta2Reason, strings.Join(problems, "\n"))
		return
	}
	set(metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneAvailableV1Beta2Reason, "")
}

// setMachinesV1Beta2 sets MachinesReady, MachinesUpToDate and RollingOut.
func setMachinesV1Beta2(s *scope) {
	kcp := s.kcp
	set := func(t string, status metav1.ConditionStatus, reason, message string) {
		conditions.SetV1Beta2(kcp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
	}
	if len(s.machines) == 0 {
		set(controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneMachinesReadyNoReplicasV1Beta2Reason, "")
		set(controlplanev1.KubeadmControlPlaneMachinesUpToDateV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneMachinesUpToDateNoReplicasV1Beta2Reason, "")
	} else {
		var notReady, unknownReady, notUpToDate []string
		for _, m := range s.all() {
			switch c := conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition); {
			case c == nil || c.Status == metav1.ConditionUnknown:
				unknownReady = append(unknownReady, m.Name)
			case c.Status == metav1.ConditionFalse:
				notReady = append(notReady, m.Name)
			}
			if !s.upToDate(m) {
				notUpToDate = append(notUpToDate, m.Name)
			}
		}
		switch {
		case len(notReady) > 0:
			set(controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Condition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneMachinesNotReadyV1Beta2Reason, machinesMessage("not ready", notReady))
		case len(unknownReady) > 0:
			set(controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Condition, metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneMachinesReadyUnknownV1Beta2Reason, machinesMessage("readiness unknown", unknownReady))
		default:
			set(controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Reason, "")
		}
		if len(notUpToDate) > 0 {
			set(controlplanev1.KubeadmControlPlaneMachinesUpToDateV1Beta2Condition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneMachinesNotUpToDateV1Beta2Reason, machinesMessage("not up-to-date", notUpToDate))
		} else {
			set(controlplanev1.KubeadmControlPlaneMachinesUpToDateV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneMachinesUpToDateV1Beta2Reason, "")
		}
	}
	outdated := s.needingRollout()
	if len(outdated) == 0 {
		set(controlplanev1.KubeadmControlPlaneRollingOutV1Beta2Condition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotRollingOutV1Beta2Reason, "")
		return
	}
	reasons := map[string]bool{}
	for _, m := range outdated {
		for _, r := range s.notUpToDate[m.Name].condition {
			reasons[r] = true
		}
	}
	var lines []string
	for r := range reasons {
		lines = append(lines, "  * "+r)
	}
	sort.Strings(lines)
	word := "Machines"
	if len(outdated) == 1 {
		word = "Machine"
	}
	set(controlplanev1.KubeadmControlPlaneRollingOutV1Beta2Condition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneRollingOutV1Beta2Reason,
		fmt.Sprintf("Rolling out %d not up-to-date %s\n%s", len(outdated), word, strings.Join(lines, "\n")))
}

func machinesMessage(what string, machineNames []string) string {
	if len(machineNames) == 1 {
		return fmt.Sprintf("* Machine %s is %s", machineNames[0], what)
	}
	return fmt.Sprintf("* Machines %s are %s", listNames(machineNames), what)
}

// setScalingV1Beta2 sets ScalingUp and ScalingDown, saying what blocks them.
func setScalingV1Beta2(s *scope) {
	kcp := s.kcp
	set := func(t string, status metav1.ConditionStatus, reason, message string) {
		conditions.SetV1Beta2(kcp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
	}
	desired, current := s.replicas(), int32(len(s.machines)) //nolint:gosec // Small.
	blockers := func() string {
		var out []string
		if s.infraTemplateNotFound {
			ref := kcp.Spec.MachineTemplate.InfrastructureRef
			out = append(out, fmt.Sprintf("* %s does not exist", ref.Kind))
		}
		if s.preflight.topologyVersionMismatch {
			out = append(out, "* Waiting for the version upgrade of Cluster.spec.topology to be propagated")
		}
		if s.preflight.hasDeletingMachine {
			out = append(out, "* Waiting for Machines being deleted")
		}
		if s.preflight.controlPlaneComponentsNotHealthy {
			out = append(out, "* Waiting for control plane components to become healthy")
		}
		if s.preflight.etcdClusterNotHealthy {
			out = append(out, "* Waiting for etcd cluster to become healthy")
		}
		return strings.Join(out, "\n")
	}
	// scaling sets condition t of scaling in direction ("up", "down"): True with reason, saying what blocks
	// it, while the KubeadmControlPlane scales that way and is not being deleted; False with notReason else.
	scaling := func(t string, scales bool, direction, reason, notReason string) {
		if !scales || !kcp.DeletionTimestamp.IsZero() {
			set(t, metav1.ConditionFalse, notReason, "")
			return
		}
		msg := fmt.Sprintf("Scaling %s from %d to %d replicas", direction, current, desired)
		if b := blockers(); b != "" {
			msg += " is blocked because:\n" + b
		}
		set(t, metav1.ConditionTrue, reason, msg)
	}
	scaling(controlplanev1.KubeadmControlPlaneScalingUpV1Beta2Condition, current < desired, "up",
		controlplanev1.KubeadmControlPlaneScalingUpV1Beta2Reason, controlplanev1.KubeadmControlPlaneNotScalingUpV1Beta2Reason)
	scaling(controlplanev1.KubeadmControlPlaneScalingDownV1Beta2Condition, current > desired, "down",
		controlplanev1.KubeadmControlPlaneScalingDownV1Beta2Reason, controlplanev1.KubeadmControlPlaneNotScalingDownV1Beta2Reason)
}

// setRemediatingV1Beta2 sets Remediating from the Machines a MachineHealthCheck marked.
func setRemediatingV1Beta2(s *scope) {
	var toRemediate, otherUnhealthy []string
	for _, m := range s.all() {
		switch {
		case toBeRemediatedByKCP(m):
			msg := m.Name
			if c := conditions.Get(m, ownerRemediatedCondition); c != nil && c.Message != "" {
				msg += ": " + c.Message
			}
			toRemediate = append(toRemediate, "* Machine "+msg)
		case isUnhealthy(m):
			otherUnhealthy = append(otherUnhealthy, m.Name)
		}
	}
	c := metav1.Condition{Type: controlplanev1.KubeadmControlPlaneRemediatingV1Beta2Condition, Status: metav1.ConditionFalse, Reason: controlplanev1.KubeadmControlPlaneNotRemediatingV1Beta2Reason}
	if len(toRemediate) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneRemediatingV1Beta2Reason, strings.Join(toRemediate, "\n")
	} else if len(otherUnhealthy) > 0 {
		c.Message = machinesMessage("not healthy (not to be remediated by KubeadmControlPlane)", otherUnhealthy)
	}
	conditions.SetV1Beta2(s.kcp, c)
}

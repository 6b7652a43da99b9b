package machine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Conditions that other controllers set on Machines and that the Ready summaries take into account.
const (
	healthCheckSucceededCondition clusterv1.ConditionType = "HealthCheckSucceeded"
	ownerRemediatedCondition      clusterv1.ConditionType = "OwnerRemediated"
	healthCheckSucceededV1Beta2   string                  = "HealthCheckSucceeded"
	// deletionFailedReason is used for NodeHealthy when the Node could not be deleted.
	deletionFailedReason = "DeletionFailed"
)

// updateStatus computes the Machine's phase and conditions from what the phases observed. It needs no
// client, so it is tested with tables.
func updateStatus(s *scope, now time.Time, remoteGracePeriod time.Duration) {
	m := s.machine
	setBootstrapConditions(m, s.bootstrap)
	setInfrastructureConditions(m, s.infra)
	setNodeConditions(s, now, remoteGracePeriod)
	setDeletionConditions(m, s.deletion)
	setUpdatingCondition(s)
	conditions.SetSummary(m, clusterv1.InfrastructureReadyCondition, clusterv1.BootstrapReadyCondition,
		healthCheckSucceededCondition, ownerRemediatedCondition, clusterv1.DrainingSucceededCondition)
	setReadyCondition(m)
	setAvailableCondition(m)
	setUpToDateCondition(m)
	conditions.SetV1Beta2(m, reconciler.PausedCondition(s.cluster, m, "Machine", false))
	setPhase(m, now)
	m.Status.ObservedGeneration = m.Generation
}

func setV1Beta2(m *clusterv1.Machine, t string, status metav1.ConditionStatus, reason, message string) {
	conditions.SetV1Beta2(m, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message})
}

// setBootstrapConditions sets BootstrapReady (v1beta1) and BootstrapConfigReady (v1beta2).
func setBootstrapConditions(m *clusterv1.Machine, f providerFacts) {
	const t = clusterv1.MachineBootstrapConfigReadyV1Beta2Condition
	deleting := !m.DeletionTimestamp.IsZero()
	ref := m.Spec.Bootstrap.ConfigRef
	switch {
	case ref == nil:
		if m.Spec.Bootstrap.DataSecretName != nil {
			conditions.MarkTrue(m, clusterv1.BootstrapReadyCondition)
		} else {
			conditions.MarkFalse(m, clusterv1.BootstrapReadyCondition, clusterv1.WaitingForDataSecretFallbackReason, clusterv1.ConditionSeverityInfo, "")
		}
		setV1Beta2(m, t, metav1.ConditionTrue, clusterv1.MachineBootstrapDataSecretProvidedV1Beta2Reason, "")
		return
	case f.obj != nil:
		if m.Spec.Bootstrap.DataSecretName != nil {
			conditions.MarkTrue(m, clusterv1.BootstrapReadyCondition)
		} else {
			conditions.MirrorReadyV1Beta1(m, clusterv1.BootstrapReadyCondition, f.obj, f.ready, fallbackReason(deleting, clusterv1.WaitingForDataSecretFallbackReason))
		}
		conditions.MirrorReadyV1Beta2(m, t, f.obj, m.Status.BootstrapReady, conditions.ProviderReasons{
			Ready: clusterv1.MachineBootstrapConfigReadyV1Beta2Reason, NotReady: clusterv1.MachineBootstrapConfigNotReadyV1Beta2Reason,
			Invalid: clusterv1.MachineBootstrapConfigInvalidConditionReportedV1Beta2Reason,
		}, conditions.NotReadyMessage(ref.Kind, f.contract, "status.initialization.dataSecretCreated"))
	case f.getErr && f.problem != "":
		conditions.MarkFalse(m, clusterv1.BootstrapReadyCondition, clusterv1.WaitingForDataSecretFallbackReason, clusterv1.ConditionSeverityWarning, "%s", f.problem)
		setV1Beta2(m, t, metav1.ConditionUnknown, clusterv1.MachineBootstrapConfigInternalErrorV1Beta2Reason, f.problem)
	case f.getErr:
		setV1Beta2(m, t, metav1.ConditionUnknown, clusterv1.MachineBootstrapConfigInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
	case f.notFound:
		if conditions.Get(m, clusterv1.BootstrapReadyCondition) == nil && !deleting {
			conditions.MarkFalse(m, clusterv1.BootstrapReadyCondition, clusterv1.WaitingForDataSecretFallbackReason, clusterv1.ConditionSeverityInfo, "")
		}
		if deleting && m.Status.BootstrapReady {
			setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigDeletedV1Beta2Reason, fmt.Sprintf("%s has been deleted", ref.Kind))
		} else {
			setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigDoesNotExistV1Beta2Reason, fmt.Sprintf("%s does not exist", ref.Kind))
		}
	}
}

// setInfrastructureConditions sets InfrastructureReady, both v1beta1 and v1beta2.
func setInfrastructureConditions(m *clusterv1.Machine, f providerFacts) {
	const t = clusterv1.MachineInfrastructureReadyV1Beta2Condition
	deleting := !m.DeletionTimestamp.IsZero()
	kind := m.Spec.InfrastructureRef.Kind
	switch {
	case len(f.unboundClaims) > 0:
		conditions.MarkFalse(m, clusterv1.InfrastructureReadyCondition, waitingForIPAddressClaimsReason, clusterv1.ConditionSeverityInfo,
			"%s", claimsMessage(f.unboundClaims))
		setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineInfrastructureNotReadyV1Beta2Reason, claimsMessage(f.unboundClaims))
	case f.obj != nil:
		conditions.MirrorReadyV1Beta1(m, clusterv1.InfrastructureReadyCondition, f.obj, f.ready, fallbackReason(deleting, clusterv1.WaitingForInfrastructureFallbackReason))
		conditions.MirrorReadyV1Beta2(m, t, f.obj, m.Status.InfrastructureReady, conditions.ProviderReasons{
			Ready: clusterv1.MachineInfrastructureReadyV1Beta2Reason, NotReady: clusterv1.MachineInfrastructureNotReadyV1Beta2Reason,
			Invalid: clusterv1.MachineInfrastructureInvalidConditionReportedV1Beta2Reason,
		}, conditions.NotReadyMessage(kind, f.contract, "status.initialization.provisioned"))
	case f.getErr && f.problem != "":
		conditions.MarkFalse(m, clusterv1.InfrastructureReadyCondition, clusterv1.WaitingForInfrastructureFallbackReason, clusterv1.ConditionSeverityWarning, "%s", f.problem)
		setV1Beta2(m, t, metav1.ConditionUnknown, clusterv1.MachineInfrastructureInternalErrorV1Beta2Reason, f.problem)
	case f.getErr:
		setV1Beta2(m, t, metav1.ConditionUnknown, clusterv1.MachineInfrastructureInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
	case f.notFound:
		switch {
		case deleting && m.Status.InfrastructureReady:
			setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineInfrastructureDeletedV1Beta2Reason, fmt.Sprintf("%s has been deleted", kind))
		case m.Status.InfrastructureReady:
			conditions.MarkFalse(m, clusterv1.InfrastructureReadyCondition, clusterv1.DeletedReason, clusterv1.ConditionSeverityError,
				"%s has been deleted while the Machine still exists", kind)
			setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineInfrastructureDeletedV1Beta2Reason, fmt.Sprintf("%s has been deleted while the Machine still exists", kind))
		default:
			if conditions.Get(m, clusterv1.InfrastructureReadyCondition) == nil && !deleting {
				conditions.MarkFalse(m, clusterv1.InfrastructureReadyCondition, clusterv1.WaitingForInfrastructureFallbackReason, clusterv1.ConditionSeverityInfo, "")
			}
			setV1Beta2(m, t, metav1.ConditionFalse, clusterv1.MachineInfrastructureDoesNotExistV1Beta2Reason, fmt.Sprintf("%s does not exist", kind))
		}
	}
}

func fallbackReason(deleting bool, reason string) string {
	if deleting {
		return clusterv1.DeletingReason
	}
	return reason
}

// setNodeConditions sets NodeHealthy (v1beta1 and v1beta2) and NodeReady (v1beta2).
func setNodeConditions(s *scope, now time.Time, remoteGracePeriod time.Duration) {
	m := s.machine
	deleting := !m.DeletionTimestamp.IsZero()
	v1beta2 := func(status metav1.ConditionStatus, reason, message string) {
		setV1Beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition, status, reason, message)
		setV1Beta2(m, clusterv1.MachineNodeReadyV1Beta2Condition, status, reason, message)
	}
	hasProviderID := m.Spec.ProviderID != nil && *m.Spec.ProviderID != ""

	if s.node != nil {
		setNodeReadyCondition(m, s.node)
		status, reason, message := summarizeNode(s.node)
		setV1Beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition, status, reason, message)
		switch status1, message1 := summarizeNodeV1Beta1(s.node); status1 {
		case corev1.ConditionTrue:
			conditions.MarkTrue(m, clusterv1.MachineNodeHealthyCondition)
		case corev1.ConditionFalse:
			conditions.MarkFalse(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeConditionsFailedReason, clusterv1.ConditionSeverityWarning, "%s", message1)
		default:
			conditions.MarkUnknown(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeConditionsFailedReason, "%s", message1)
		}
		return
	}

	if s.cluster == nil {
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeInspectionFailedV1Beta2Reason, "Cluster does not exist")
		return
	}
	if !hasProviderID && !deleting {
		conditions.MarkFalse(m, clusterv1.MachineNodeHealthyCondition, clusterv1.WaitingForNodeRefReason, clusterv1.ConditionSeverityInfo, "")
	}
	if !controlPlaneInitialized(s.cluster) {
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeInspectionFailedV1Beta2Reason, "Waiting for Cluster control plane to be initialized")
		return
	}
	if errors.Is(s.nodeGetErr, clustercache.ErrClusterNotConnected) {
		lastSuccess := s.health.LastProbeSuccess
		switch {
		case lastSuccess.IsZero():
			v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeRemoteConnectionFailedV1Beta2Reason, "Remote connection not established yet")
			conditions.MarkUnknown(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeInspectionFailedReason, "Remote connection not established yet")
		case now.Sub(lastSuccess) > remoteGracePeriod:
			v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeRemoteConnectionFailedV1Beta2Reason, "Remote connection probe failed")
			conditions.MarkUnknown(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeInspectionFailedReason, "Remote connection probe failed")
		default:
			// Within the grace period the last values stand, so a short outage does not flap the Machine.
			if conditions.GetV1Beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition) == nil {
				v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeConnectionDownV1Beta2Reason, "Remote connection down")
			}
			if conditions.Get(m, clusterv1.MachineNodeHealthyCondition) == nil {
				conditions.MarkUnknown(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeInspectionFailedReason, "Remote connection down")
			}
		}
		return
	}
	if s.nodeGetErr != nil {
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
		if conditions.Get(m, clusterv1.MachineNodeHealthyCondition) == nil {
			conditions.MarkUnknown(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeInspectionFailedReason, conditions.InternalErrorMessage)
		}
		return
	}

	switch {
	case deleting && m.Status.NodeRef != nil:
		v1beta2(metav1.ConditionFalse, clusterv1.MachineNodeDeletedV1Beta2Reason, fmt.Sprintf("Node %s has been deleted", m.Status.NodeRef.Name))
	case deleting:
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeDoesNotExistV1Beta2Reason, "Node does not exist")
	case m.Status.NodeRef != nil:
		v1beta2(metav1.ConditionFalse, clusterv1.MachineNodeDeletedV1Beta2Reason, fmt.Sprintf("Node %s has been deleted while the Machine still exists", m.Status.NodeRef.Name))
		conditions.MarkFalse(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeNotFoundReason, clusterv1.ConditionSeverityError, "")
	case hasProviderID:
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeInspectionFailedV1Beta2Reason, fmt.Sprintf("Waiting for a Node with spec.providerID %s to exist", *m.Spec.ProviderID))
		conditions.MarkFalse(m, clusterv1.MachineNodeHealthyCondition, clusterv1.NodeProvisioningReason, clusterv1.ConditionSeverityWarning, "Waiting for a node with matching ProviderID to exist")
	default:
		v1beta2(metav1.ConditionUnknown, clusterv1.MachineNodeInspectionFailedV1Beta2Reason, fmt.Sprintf("Waiting for %s to report spec.providerID", m.Spec.InfrastructureRef.Kind))
	}
}

// setNodeReadyCondition mirrors the Node's Ready condition.
func setNodeReadyCondition(m *clusterv1.Machine, node *corev1.Node) {
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		reason := c.Reason
		if reason == "" {
			reason = "NoReasonReported"
		}
		message := ""
		if c.Message != "" {
			message = "* Node.Ready: " + c.Message
		}
		conditions.SetV1Beta2(m, metav1.Condition{
			Type: clusterv1.MachineNodeReadyV1Beta2Condition, Status: metav1.ConditionStatus(c.Status),
			Reason: reason, Message: message, LastTransitionTime: c.LastTransitionTime,
		})
		return
	}
	setV1Beta2(m, clusterv1.MachineNodeReadyV1Beta2Condition, metav1.ConditionUnknown, "NotYetReported", "* Node.Ready: Condition not yet reported")
}

// nodeHealthConditions are the Node conditions that make NodeHealthy, with the status that is healthy.
var nodeHealthConditions = []struct {
	t       corev1.NodeConditionType
	healthy corev1.ConditionStatus
}{
	{corev1.NodeReady, corev1.ConditionTrue},
	{corev1.NodeMemoryPressure, corev1.ConditionFalse},
	{corev1.NodeDiskPressure, corev1.ConditionFalse},
	{corev1.NodePIDPressure, corev1.ConditionFalse},
}

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// summarizeNode computes the v1beta2 NodeHealthy condition: Ready must be True and the pressure conditions
// False. A missing Ready condition makes it Unknown; missing pressure conditions are only mentioned.
func summarizeNode(node *corev1.Node) (metav1.ConditionStatus, string, string) {
	unhealthy, unknown := 0, 0
	var lines []string
	for _, hc := range nodeHealthConditions {
		c := nodeCondition(node, hc.t)
		if c == nil {
			lines = append(lines, fmt.Sprintf("* Node.%s: Condition not yet reported", hc.t))
			if hc.t == corev1.NodeReady {
				unknown++
			}
			continue
		}
		if c.Status == hc.healthy {
			continue
		}
		if c.Status == corev1.ConditionUnknown {
			unknown++
		} else {
			unhealthy++
		}
		msg := c.Message
		if msg == "" {
			msg = fmt.Sprintf("Condition is %s", c.Status)
		}
		lines = append(lines, fmt.Sprintf("* Node.%s: %s", hc.t, msg))
	}
	message := strings.Join(lines, "\n")
	switch {
	case unhealthy > 0:
		return metav1.ConditionFalse, clusterv1.MachineNodeNotHealthyV1Beta2Reason, message
	case unknown > 0:
		return metav1.ConditionUnknown, clusterv1.MachineNodeHealthUnknownV1Beta2Reason, message
	default:
		return metav1.ConditionTrue, clusterv1.MachineNodeHealthyV1Beta2Reason, message
	}
}

// summarizeNodeV1Beta1 computes the v1beta1 NodeHealthy status and message from the same Node conditions.
func summarizeNodeV1Beta1(node *corev1.Node) (corev1.ConditionStatus, string) {
	unhealthy, unknown := 0, 0
	var parts []string
	for _, hc := range nodeHealthConditions {
		c := nodeCondition(node, hc.t)
		switch {
		case c == nil && hc.t == corev1.NodeReady:
			unknown++
			parts = append(parts, "Node condition Ready is not reported")
		case c == nil || c.Status == hc.healthy:
		case c.Status == corev1.ConditionUnknown:
			unknown++
			parts = append(parts, fmt.Sprintf("Node condition %s is %s", c.Type, c.Status))
		default:
			unhealthy++
			parts = append(parts, fmt.Sprintf("Node condition %s is %s", c.Type, c.Status))
		}
	}
	message := strings.Join(parts, "; ")
	switch {
	case unhealthy > 0:
		return corev1.ConditionFalse, message
	case unknown > 0:
		return corev1.ConditionUnknown, message
	default:
		return corev1.ConditionTrue, ""
	}
}

// setDeletionConditions sets the conditions of the deletion steps this reconcile got to, and Deleting.
func setDeletionConditions(m *clusterv1.Machine, d deletionFacts) {
	hook := func(t clusterv1.ConditionType, state stepState) {
		switch state {
		case stepWaiting:
			conditions.MarkFalse(m, t, clusterv1.WaitingExternalHookReason, clusterv1.ConditionSeverityInfo, "")
		case stepDone:
			conditions.MarkTrue(m, t)
		}
	}
	hook(clusterv1.PreDrainDeleteHookSucceededCondition, d.preDrainHook)
	switch d.drain {
	case stepWaiting:
		conditions.MarkFalse(m, clusterv1.DrainingSucceededCondition, clusterv1.DrainingReason, clusterv1.ConditionSeverityInfo, "%s", d.drainMessage)
	case stepFailed:
		conditions.MarkFalse(m, clusterv1.DrainingSucceededCondition, clusterv1.DrainingFailedReason, clusterv1.ConditionSeverityWarning,
			"Error draining Node, please check controller logs for errors")
	case stepDone:
		conditions.MarkTrue(m, clusterv1.DrainingSucceededCondition)
	}
	switch d.volumeDetach {
	case stepWaiting:
		conditions.MarkFalse(m, clusterv1.VolumeDetachSucceededCondition, clusterv1.WaitingForVolumeDetachReason, clusterv1.ConditionSeverityInfo,
			"Waiting for node volumes to be detached")
	case stepDone:
		conditions.MarkTrue(m, clusterv1.VolumeDetachSucceededCondition)
	}
	hook(clusterv1.PreTerminateDeleteHookSucceededCondition, d.preTerminateHook)
	if d.nodeDeletionFailed {
		conditions.MarkFalse(m, clusterv1.MachineNodeHealthyCondition, deletionFailedReason, clusterv1.ConditionSeverityWarning, "")
	}

	switch {
	case m.DeletionTimestamp.IsZero():
		setV1Beta2(m, clusterv1.MachineDeletingV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachineNotDeletingV1Beta2Reason, "")
	case d.executed:
		setV1Beta2(m, clusterv1.MachineDeletingV1Beta2Condition, metav1.ConditionTrue, d.reason, d.message)
	}
}

// readyInput is one condition the v1beta2 Ready condition summarises.
type readyInput struct {
	t        string
	negative bool
	optional bool
}

// setReadyCondition sets the v1beta2 Ready condition: True when the bootstrap config and the
// infrastructure are ready, the Node is healthy, the Machine is not being deleted, the health check (when
// there is one) succeeded, and every readiness gate holds.
func setReadyCondition(m *clusterv1.Machine) {
	inputs := []readyInput{
		{t: clusterv1.MachineDeletingV1Beta2Condition, negative: true},
		{t: clusterv1.MachineUpdatingV1Beta2Condition, negative: true},
		{t: clusterv1.MachineBootstrapConfigReadyV1Beta2Condition},
		{t: clusterv1.MachineInfrastructureReadyV1Beta2Condition},
		{t: clusterv1.MachineNodeHealthyV1Beta2Condition},
		{t: healthCheckSucceededV1Beta2, optional: true},
	}
	for _, gate := range m.Spec.ReadinessGates {
		inputs = append(inputs, readyInput{t: gate.ConditionType, negative: gate.Polarity == clusterv1.NegativePolarityCondition})
	}
	var lines []string
	issues, unknowns := 0, 0
	for _, in := range inputs {
		c := conditions.GetV1Beta2(m, in.t)
		if c == nil {
			if !in.optional {
				unknowns++
				lines = append(lines, fmt.Sprintf("* %s: Condition not yet reported", in.t))
			}
			continue
		}
		good := (c.Status == metav1.ConditionTrue) != in.negative
		switch {
		case c.Status == metav1.ConditionUnknown:
			unknowns++
		case good:
			continue
		default:
			issues++
		}
		message := c.Message
		if in.t == clusterv1.MachineDeletingV1Beta2Condition {
			message = fmt.Sprintf("Machine deletion in progress, stage: %s", c.Reason)
		}
		lines = append(lines, summaryLine(in.t, c.Reason, message))
	}
	message := strings.Join(lines, "\n")
	switch {
	case issues > 0:
		setV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachineNotReadyV1Beta2Reason, message)
	case unknowns > 0:
		setV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition, metav1.ConditionUnknown, clusterv1.MachineReadyUnknownV1Beta2Reason, message)
	default:
		setV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachineReadyV1Beta2Reason, "")
	}
}

// summaryLine is one line of a summary message: "* Type: message", with a message that is itself a list
// (or has several lines) indented under "* Type:"; without a message, the reason stands in.
func summaryLine(t, reason, message string) string {
	if message == "" {
		message = reason
	}
	if !strings.Contains(message, "\n") && !strings.HasPrefix(message, "* ") {
		return fmt.Sprintf("* %s: %s", t, message)
	}
	return fmt.Sprintf("* %s:\n  %s", t, strings.ReplaceAll(message, "\n", "\n  "))
}

// setUpdatingCondition sets Updating: True, with the reason and message the in-place update phase gave (or
// InPlaceUpdating), from the moment the Machine's owner marks it for an in-place update until the
// UpdateMachine hook is done; False (NotUpdating) otherwise. As upstream, Ready counts it as a negative
// condition, and a v1beta2 client sees the phase Updating while it is True.
func setUpdatingCondition(s *scope) {
	m := s.machine
	if !inPlaceUpdateInProgress(m) {
		setV1Beta2(m, clusterv1.MachineUpdatingV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachineNotUpdatingV1Beta2Reason, "")
		return
	}
	reason, message := s.updatingReason, s.updatingMessage
	if reason == "" {
		reason = clusterv1.MachineInPlaceUpdatingV1Beta2Reason
	}
	if message == "" {
		message = "In-place update in progress"
	}
	setV1Beta2(m, clusterv1.MachineUpdatingV1Beta2Condition, metav1.ConditionTrue, reason, message)
}

// setAvailableCondition sets Available from Ready: a v1beta1 Machine has no minReadySeconds, so it is
// available as soon as it is ready; MachineSets apply their minReadySeconds to Ready's lastTransitionTime.
func setAvailableCondition(m *clusterv1.Machine) {
	ready := conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition)
	switch {
	case ready == nil:
		setV1Beta2(m, clusterv1.MachineAvailableV1Beta2Condition, metav1.ConditionUnknown, clusterv1.MachineAvailableInternalErrorV1Beta2Reason, conditions.InternalErrorMessage)
	case ready.Status != metav1.ConditionTrue:
		setV1Beta2(m, clusterv1.MachineAvailableV1Beta2Condition, metav1.ConditionFalse, clusterv1.MachineNotReadyV1Beta2Reason, "")
	default:
		setV1Beta2(m, clusterv1.MachineAvailableV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachineAvailableV1Beta2Reason, "")
	}
}

// setUpToDateCondition sets UpToDate True when nobody set it: the Machine's owner (a MachineSet) decides
// whether the Machine is up to date; a Machine without one is.
func setUpToDateCondition(m *clusterv1.Machine) {
	if conditions.GetV1Beta2(m, clusterv1.MachineUpToDateV1Beta2Condition) == nil {
		setV1Beta2(m, clusterv1.MachineUpToDateV1Beta2Condition, metav1.ConditionTrue, clusterv1.MachineUpToDateV1Beta2Reason, "")
	}
}

// setPhase sets the phase by upstream's rules, later rules winning: Pending when unset, Provisioning once
// the bootstrap data is ready, Provisioned once there is a providerID, Running once the Node is linked
// (and the infrastructure ready), Failed on a terminal failure, Deleting once deleted; lastUpdated moves
// when the phase changes.
func setPhase(m *clusterv1.Machine, now time.Time) {
	original := m.Status.Phase
	if m.Status.Phase == "" {
		m.Status.SetTypedPhase(clusterv1.MachinePhasePending)
	}
	if m.Status.BootstrapReady && !m.Status.InfrastructureReady {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseProvisioning)
	}
	if m.Spec.ProviderID != nil {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseProvisioned)
	}
	if m.Status.NodeRef != nil && m.Status.InfrastructureReady {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseRunning)
	}
	if m.Status.FailureReason != nil || m.Status.FailureMessage != nil {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseFailed)
	}
	if !m.DeletionTimestamp.IsZero() {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseDeleting)
	}
	if m.Status.Phase != original {
		t := metav1.NewTime(now)
		m.Status.LastUpdated = &t
	}
}

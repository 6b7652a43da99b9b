package v1beta1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultNodeStartupTimeout is how long a Machine may go without a Node before a MachineHealthCheck that
// does not say otherwise finds it unhealthy (upstream's webhook default).
var DefaultNodeStartupTimeout = metav1.Duration{Duration: 10 * time.Minute}

// Conditions a MachineHealthCheck sets on the Machines it checks, and their v1beta1 reasons.
const (
	// MachineHealthCheckSucceededCondition is True on a Machine that passed its MachineHealthCheck.
	MachineHealthCheckSucceededCondition ConditionType = "HealthCheckSucceeded"

	// MachineHasFailureReason: the Machine has status.failureReason or status.failureMessage.
	MachineHasFailureReason = "MachineHasFailure"
	// HasRemediateMachineAnnotationReason: the Machine has the cluster.x-k8s.io/remediate-machine annotation.
	HasRemediateMachineAnnotationReason = "HasRemediateMachineAnnotation"
	// NodeStartupTimeoutReason: the Machine got no Node within nodeStartupTimeout.
	NodeStartupTimeoutReason = "NodeStartupTimeout"
	// UnhealthyNodeConditionReason: the Node held one of the unhealthyConditions for its timeout.
	UnhealthyNodeConditionReason = "UnhealthyNode"
	// UnhealthyMachineConditionReason: the Machine held one of the unhealthyMachineConditions for its timeout.
	UnhealthyMachineConditionReason = "UnhealthyMachine"

	// MachineOwnerRemediatedCondition is set False on a Machine that failed its health check; the Machine's
	// owner (a MachineSet, a control plane) remediates it and sets it True.
	MachineOwnerRemediatedCondition ConditionType = "OwnerRemediated"
	// WaitingForRemediationReason: the Machine failed its health check and waits for its owner.
	WaitingForRemediationReason = "WaitingForRemediation"
	// RemediationFailedReason: the owner failed to remediate the Machine.
	RemediationFailedReason = "RemediationFailed"
	// RemediationInProgressReason: the owner is remediating the Machine.
	RemediationInProgressReason = "RemediationInProgress"

	// ExternalRemediationTemplateAvailableCondition is False on a MachineHealthCheck whose
	// remediationTemplate cannot be found.
	ExternalRemediationTemplateAvailableCondition ConditionType = "ExternalRemediationTemplateAvailable"
	// ExternalRemediationTemplateNotFoundReason: the remediation template does not exist.
	ExternalRemediationTemplateNotFoundReason = "ExternalRemediationTemplateNotFound"
	// ExternalRemediationRequestAvailableCondition is False on a MachineHealthCheck that could not create a
	// remediation request.
	ExternalRemediationRequestAvailableCondition ConditionType = "ExternalRemediationRequestAvailable"
	// ExternalRemediationRequestCreationFailedReason: creating the remediation request failed.
	ExternalRemediationRequestCreationFailedReason = "ExternalRemediationRequestCreationFailed"

	// RemediationAllowedCondition says on a MachineHealthCheck whether it may remediate Machines now.
	RemediationAllowedCondition ConditionType = "RemediationAllowed"
	// TooManyUnhealthyReason: more Machines are unhealthy than maxUnhealthy (or unhealthyRange) allows.
	TooManyUnhealthyReason = "TooManyUnhealthy"
)

// The v1beta2 conditions of MachineHealthCheck remediation on Machines, and their reasons.
const (
	// MachineHealthCheckSucceededV1Beta2Condition is True on a Machine that passed its MachineHealthCheck.
	MachineHealthCheckSucceededV1Beta2Condition = "HealthCheckSucceeded"
	// MachineHealthCheckSucceededV1Beta2Reason: the Machine passed every check.
	MachineHealthCheckSucceededV1Beta2Reason = "HealthCheckSucceeded"
	// MachineHealthCheckUnhealthyNodeV1Beta2Reason: the Node held an unhealthy condition for its timeout.
	MachineHealthCheckUnhealthyNodeV1Beta2Reason = "UnhealthyNode"
	// MachineHealthCheckUnhealthyMachineV1Beta2Reason: the Machine held an unhealthy condition for its timeout.
	MachineHealthCheckUnhealthyMachineV1Beta2Reason = "UnhealthyMachine"
	// MachineHealthCheckNodeStartupTimeoutV1Beta2Reason: no Node within nodeStartupTimeout.
	MachineHealthCheckNodeStartupTimeoutV1Beta2Reason = "NodeStartupTimeout"
	// MachineHealthCheckNodeDeletedV1Beta2Reason: the Machine's Node has been deleted.
	MachineHealthCheckNodeDeletedV1Beta2Reason = "NodeDeleted"
	// MachineHealthCheckHasRemediateAnnotationV1Beta2Reason: the Machine has the remediate-machine annotation.
	MachineHealthCheckHasRemediateAnnotationV1Beta2Reason = "HasRemediateAnnotation"

	// MachineOwnerRemediatedV1Beta2Condition is False while a Machine that failed its health check waits
	// for its owner to remediate it.
	MachineOwnerRemediatedV1Beta2Condition = "OwnerRemediated"
	// MachineOwnerRemediatedWaitingForRemediationV1Beta2Reason: the Machine waits for its owner.
	MachineOwnerRemediatedWaitingForRemediationV1Beta2Reason = "WaitingForRemediation"

	// MachineExternallyRemediatedV1Beta2Condition is False while a Machine that failed its health check
	// waits for an external remediation provider.
	MachineExternallyRemediatedV1Beta2Condition = "ExternallyRemediated"
	// MachineExternallyRemediatedWaitingForRemediationV1Beta2Reason: the remediation request was created.
	MachineExternallyRemediatedWaitingForRemediationV1Beta2Reason = "WaitingForRemediation"
	// MachineExternallyRemediatedRemediationTemplateNotFoundV1Beta2Reason: the remediation template is missing.
	MachineExternallyRemediatedRemediationTemplateNotFoundV1Beta2Reason = "RemediationTemplateNotFound"
	// MachineExternallyRemediatedRemediationRequestCreationFailedV1Beta2Reason: the request could not be created.
	MachineExternallyRemediatedRemediationRequestCreationFailedV1Beta2Reason = "RemediationRequestCreationFailed"

	// MachineHealthCheckRemediationAllowedV1Beta2Condition says on a MachineHealthCheck whether it may
	// remediate Machines now.
	MachineHealthCheckRemediationAllowedV1Beta2Condition = "RemediationAllowed"
	// MachineHealthCheckTooManyUnhealthyV1Beta2Reason: too many Machines are unhealthy.
	MachineHealthCheckTooManyUnhealthyV1Beta2Reason = "TooManyUnhealthy"
	// MachineHealthCheckRemediationAllowedV1Beta2Reason: remediation may go on.
	MachineHealthCheckRemediationAllowedV1Beta2Reason = "RemediationAllowed"

	// MachineSetRemediatingV1Beta2Condition says whether a MachineSet remediates some of its Machines.
	MachineSetRemediatingV1Beta2Condition = "Remediating"
	// MachineSetRemediatingV1Beta2Reason: at least one Machine waits for or undergoes remediation.
	MachineSetRemediatingV1Beta2Reason = "Remediating"
	// MachineSetNotRemediatingV1Beta2Reason: no Machine needs remediation.
	MachineSetNotRemediatingV1Beta2Reason = "NotRemediating"
	// MachineSetMachineCannotBeRemediatedV1Beta2Reason: the Machine belongs to an old MachineSet of a
	// rollout, which replaces it anyway.
	MachineSetMachineCannotBeRemediatedV1Beta2Reason = "CannotBeRemediated"
	// MachineSetMachineRemediationDeferredV1Beta2Reason: remediation waits (maxInFlight, preflight checks).
	MachineSetMachineRemediationDeferredV1Beta2Reason = "RemediationDeferred"
	// MachineSetMachineRemediationMachineDeletingV1Beta2Reason: the MachineSet deletes the Machine to
	// remediate it.
	MachineSetMachineRemediationMachineDeletingV1Beta2Reason = "MachineDeleting"
)

// MachineSetPreflightCheck is a check a MachineSet runs before creating Machines or remediating them; the
// machineset.cluster.x-k8s.io/skip-preflight-checks annotation lists those to skip.
type MachineSetPreflightCheck string

// The MachineSet preflight checks.
const (
	// MachineSetPreflightCheckAll stands for every check.
	MachineSetPreflightCheckAll MachineSetPreflightCheck = "All"
	// MachineSetPreflightCheckKubeadmVersionSkew: with the kubeadm bootstrap provider, the Machines' minor
	// version must be the control plane's.
	MachineSetPreflightCheckKubeadmVersionSkew MachineSetPreflightCheck = "KubeadmVersionSkew"
	// MachineSetPreflightCheckKubernetesVersionSkew: the Machines' version must not be newer than the control
	// plane's, nor more than 3 (2 before v1.28) minor versions older.
	MachineSetPreflightCheckKubernetesVersionSkew MachineSetPreflightCheck = "KubernetesVersionSkew"
	// MachineSetPreflightCheckControlPlaneIsStable: the control plane is neither provisioning nor upgrading.
	MachineSetPreflightCheckControlPlaneIsStable MachineSetPreflightCheck = "ControlPlaneIsStable"
	// MachineSetPreflightCheckControlPlaneVersionSkew: with a managed topology, the Machines' version is the
	// control plane's.
	MachineSetPreflightCheckControlPlaneVersionSkew MachineSetPreflightCheck = "ControlPlaneVersionSkew"
)

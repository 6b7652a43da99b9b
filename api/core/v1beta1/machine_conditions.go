package v1beta1

// Annotations and labels the Machine controller reads besides those in common_types.go.
const (
	// MachineCertificatesExpiryDateAnnotation, on a control plane Machine or on its bootstrap config, holds
	// the RFC 3339 date when the Machine's certificates expire; it is copied to
	// status.certificatesExpiryDate.
	MachineCertificatesExpiryDateAnnotation = "machine.cluster.x-k8s.io/certificates-expiry"

	// PodDrainLabel on a Pod of a workload cluster set to "skip" keeps the Machine controller from evicting
	// it when draining its Node.
	PodDrainLabel = "cluster.x-k8s.io/drain"

	// PodDrainLabelSkip is the value of PodDrainLabel that skips a Pod.
	PodDrainLabelSkip = "skip"

	// NodeUninitializedTaintKey is the key of the NoSchedule taint that a node may be created with and that
	// the Machine controller removes once it has synced the Machine's labels to the Node.
	NodeUninitializedTaintKey = "node.cluster.x-k8s.io/uninitialized"
)

// The v1beta1 conditions of a Machine (status.conditions) besides Ready and InfrastructureReady, and their
// reasons.
const (
	// BootstrapReadyCondition mirrors the Ready condition of the Machine's bootstrap config; True once the
	// bootstrap data secret exists.
	BootstrapReadyCondition ConditionType = "BootstrapReady"

	// WaitingForDataSecretFallbackReason is used while the bootstrap config reports no Ready condition and
	// has not created its data secret.
	WaitingForDataSecretFallbackReason = "WaitingForDataSecret"

	// MachineNodeHealthyCondition reports whether the Machine's Node is healthy.
	MachineNodeHealthyCondition ConditionType = "NodeHealthy"

	// WaitingForNodeRefReason is used while the infrastructure has not reported a providerID yet.
	WaitingForNodeRefReason = "WaitingForNodeRef"

	// NodeProvisioningReason is used while no Node with the Machine's providerID exists yet.
	NodeProvisioningReason = "NodeProvisioning"

	// NodeNotFoundReason is used when the Machine's Node has disappeared.
	NodeNotFoundReason = "NodeNotFound"

	// NodeConditionsFailedReason is used when the Node reports a condition that is not healthy.
	NodeConditionsFailedReason = "NodeConditionsFailed"

	// NodeInspectionFailedReason is used when the Node cannot be inspected, for example because the workload
	// cluster cannot be reached.
	NodeInspectionFailedReason = "NodeInspectionFailed"

	// PreDrainDeleteHookSucceededCondition reports whether the pre-drain delete hooks let the deletion go on.
	PreDrainDeleteHookSucceededCondition ConditionType = "PreDrainDeleteHookSucceeded"

	// PreTerminateDeleteHookSucceededCondition reports whether the pre-terminate delete hooks let the
	// deletion go on.
	PreTerminateDeleteHookSucceededCondition ConditionType = "PreTerminateDeleteHookSucceeded"

	// WaitingExternalHookReason is used while a delete hook annotation holds the deletion.
	WaitingExternalHookReason = "WaitingExternalHook"

	// DrainingSucceededCondition reports whether the Machine's Node has been drained.
	DrainingSucceededCondition ConditionType = "DrainingSucceeded"

	// DrainingReason is used while the Node is being drained.
	DrainingReason = "Draining"

	// DrainingFailedReason is used when draining the Node failed.
	DrainingFailedReason = "DrainingFailed"

	// VolumeDetachSucceededCondition reports whether the Node's volumes have been detached.
	VolumeDetachSucceededCondition ConditionType = "VolumeDetachSucceeded"

	// WaitingForVolumeDetachReason is used while volumes are still attached to the Node.
	WaitingForVolumeDetachReason = "WaitingForVolumeDetach"
)

// The v1beta2 conditions of a Machine (status.v1beta2.conditions) and their reasons. The MachineSet,
// MachineDeployment and Cluster controllers count a Machine as ready, available and up to date from
// Ready, Available and UpToDate.
const (
	// MachineAvailableV1Beta2Condition is true once the Machine has been Ready for minReadySeconds (0 for a
	// v1beta1 Machine, which has no minReadySeconds; MachineSets apply theirs to Ready's lastTransitionTime).
	MachineAvailableV1Beta2Condition = "Available"
	// MachineAvailableV1Beta2Reason is the reason of a True Available condition.
	MachineAvailableV1Beta2Reason = "Available"
	// MachineNotReadyV1Beta2Reason is used for Ready when a summarised condition reports an issue, and for
	// Available while the Machine is not Ready.
	MachineNotReadyV1Beta2Reason = "NotReady"
	// MachineAvailableInternalErrorV1Beta2Reason is used when availability cannot be determined.
	MachineAvailableInternalErrorV1Beta2Reason = "InternalError"

	// MachineReadyV1Beta2Condition summarises BootstrapConfigReady, InfrastructureReady, NodeHealthy,
	// HealthCheckSucceeded, Deleting and the readiness gates.
	MachineReadyV1Beta2Condition = "Ready"
	// MachineReadyV1Beta2Reason is the reason of a True Ready condition.
	MachineReadyV1Beta2Reason = "Ready"
	// MachineReadyUnknownV1Beta2Reason is used for Ready when a summarised condition is Unknown.
	MachineReadyUnknownV1Beta2Reason = "ReadyUnknown"

	// MachineUpToDateV1Beta2Condition says whether the Machine matches its owner's desired spec. The owner
	// (a MachineSet) sets it; the Machine controller only sets it True when it is missing.
	MachineUpToDateV1Beta2Condition = "UpToDate"
	// MachineUpToDateV1Beta2Reason is the reason of a True UpToDate condition.
	MachineUpToDateV1Beta2Reason = "UpToDate"
	// MachineNotUpToDateV1Beta2Reason is the reason of a False UpToDate condition.
	MachineNotUpToDateV1Beta2Reason = "NotUpToDate"
	// MachineUpToDateUpdatingV1Beta2Reason is the reason of a False UpToDate condition while the Machine's
	// spec matches its owner's and an in-place update is still bringing the machine there.
	MachineUpToDateUpdatingV1Beta2Reason = "Updating"

	// MachineUpdatingV1Beta2Condition is true while an in-place update of the Machine is in progress
	// (upstream v1.12); with it True, a v1beta2 client sees the phase Updating.
	MachineUpdatingV1Beta2Condition = "Updating"
	// MachineNotUpdatingV1Beta2Reason is the reason of a False Updating condition.
	MachineNotUpdatingV1Beta2Reason = "NotUpdating"
	// MachineInPlaceUpdatingV1Beta2Reason is used while the Machine waits for its in-place update to
	// complete.
	MachineInPlaceUpdatingV1Beta2Reason = "InPlaceUpdating"
	// MachineInPlaceUpdateFailedV1Beta2Reason is used when the in-place update failed.
	MachineInPlaceUpdateFailedV1Beta2Reason = "InPlaceUpdateFailed"

	// MachineBootstrapConfigReadyV1Beta2Condition mirrors the Ready condition of the bootstrap config.
	MachineBootstrapConfigReadyV1Beta2Condition = "BootstrapConfigReady"
	// MachineBootstrapConfigReadyV1Beta2Reason is used when the bootstrap config is ready but reports no
	// Ready condition (or one without a reason).
	MachineBootstrapConfigReadyV1Beta2Reason = "Ready"
	// MachineBootstrapConfigNotReadyV1Beta2Reason is used when the bootstrap config is not ready and reports
	// no Ready condition.
	MachineBootstrapConfigNotReadyV1Beta2Reason = "NotReady"
	// MachineBootstrapConfigInvalidConditionReportedV1Beta2Reason is used when the bootstrap config's Ready
	// condition cannot be read.
	MachineBootstrapConfigInvalidConditionReportedV1Beta2Reason = "InvalidConditionReported"
	// MachineBootstrapConfigInternalErrorV1Beta2Reason is used when the bootstrap config cannot be read.
	MachineBootstrapConfigInternalErrorV1Beta2Reason = "InternalError"
	// MachineBootstrapConfigDoesNotExistV1Beta2Reason is used when the bootstrap config does not exist.
	MachineBootstrapConfigDoesNotExistV1Beta2Reason = "DoesNotExist"
	// MachineBootstrapConfigDeletedV1Beta2Reason is used when the bootstrap config has been deleted.
	MachineBootstrapConfigDeletedV1Beta2Reason = "Deleted"
	// MachineBootstrapDataSecretProvidedV1Beta2Reason is used when the Machine has no bootstrap config
	// because spec.bootstrap.dataSecretName is given.
	MachineBootstrapDataSecretProvidedV1Beta2Reason = "DataSecretProvided"

	// MachineInfrastructureReadyV1Beta2Condition mirrors the Ready condition of the InfraMachine.
	MachineInfrastructureReadyV1Beta2Condition = "InfrastructureReady"
	// MachineInfrastructureReadyV1Beta2Reason is used when the InfraMachine is ready but reports no Ready
	// condition (or one without a reason).
	MachineInfrastructureReadyV1Beta2Reason = "Ready"
	// MachineInfrastructureNotReadyV1Beta2Reason is used when the InfraMachine is not ready and reports no
	// Ready condition.
	MachineInfrastructureNotReadyV1Beta2Reason = "NotReady"
	// MachineInfrastructureInvalidConditionReportedV1Beta2Reason is used when the InfraMachine's Ready
	// condition cannot be read.
	MachineInfrastructureInvalidConditionReportedV1Beta2Reason = "InvalidConditionReported"
	// MachineInfrastructureInternalErrorV1Beta2Reason is used when the InfraMachine cannot be read.
	MachineInfrastructureInternalErrorV1Beta2Reason = "InternalError"
	// MachineInfrastructureDoesNotExistV1Beta2Reason is used when the InfraMachine does not exist.
	MachineInfrastructureDoesNotExistV1Beta2Reason = "DoesNotExist"
	// MachineInfrastructureDeletedV1Beta2Reason is used when the InfraMachine has been deleted.
	MachineInfrastructureDeletedV1Beta2Reason = "Deleted"

	// MachineNodeHealthyV1Beta2Condition summarises the Node's Ready, MemoryPressure, DiskPressure and
	// PIDPressure conditions.
	MachineNodeHealthyV1Beta2Condition = "NodeHealthy"
	// MachineNodeReadyV1Beta2Condition mirrors the Node's Ready condition.
	MachineNodeReadyV1Beta2Condition = "NodeReady"
	// MachineNodeHealthyV1Beta2Reason is used when every Node condition is healthy.
	MachineNodeHealthyV1Beta2Reason = "NodeHealthy"
	// MachineNodeNotHealthyV1Beta2Reason is used when a Node condition is not healthy.
	MachineNodeNotHealthyV1Beta2Reason = "NodeNotHealthy"
	// MachineNodeHealthUnknownV1Beta2Reason is used when a Node condition is unknown and none is unhealthy.
	MachineNodeHealthUnknownV1Beta2Reason = "NodeHealthUnknown"
	// MachineNodeInternalErrorV1Beta2Reason is used when the Node cannot be read.
	MachineNodeInternalErrorV1Beta2Reason = "InternalError"
	// MachineNodeDoesNotExistV1Beta2Reason is used when the Node does not exist.
	MachineNodeDoesNotExistV1Beta2Reason = "NodeDoesNotExist"
	// MachineNodeDeletedV1Beta2Reason is used when the Node has been deleted.
	MachineNodeDeletedV1Beta2Reason = "NodeDeleted"
	// MachineNodeInspectionFailedV1Beta2Reason is used while the Node cannot be looked for yet.
	MachineNodeInspectionFailedV1Beta2Reason = "InspectionFailed"
	// MachineNodeConnectionDownV1Beta2Reason is used when the workload cluster cannot be reached.
	MachineNodeConnectionDownV1Beta2Reason = "ConnectionDown"
	// MachineNodeRemoteConnectionFailedV1Beta2Reason is used when the workload cluster has not answered for
	// longer than the remote conditions grace period.
	MachineNodeRemoteConnectionFailedV1Beta2Reason = "RemoteConnectionFailed"

	// MachineDeletingV1Beta2Condition is true while the Machine is being deleted; its reason says which step
	// the deletion is at.
	MachineDeletingV1Beta2Condition = "Deleting"
	// MachineNotDeletingV1Beta2Reason is the reason of a False Deleting condition.
	MachineNotDeletingV1Beta2Reason = "NotDeleting"
	// MachineDeletingWaitingForPreDrainHookV1Beta2Reason is used while pre-drain hooks hold the deletion.
	MachineDeletingWaitingForPreDrainHookV1Beta2Reason = "WaitingForPreDrainHook"
	// MachineDeletingDrainingNodeV1Beta2Reason is used while the Node is being drained.
	MachineDeletingDrainingNodeV1Beta2Reason = "DrainingNode"
	// MachineDeletingWaitingForVolumeDetachV1Beta2Reason is used while volumes are attached to the Node.
	MachineDeletingWaitingForVolumeDetachV1Beta2Reason = "WaitingForVolumeDetach"
	// MachineDeletingWaitingForPreTerminateHookV1Beta2Reason is used while pre-terminate hooks hold the
	// deletion.
	MachineDeletingWaitingForPreTerminateHookV1Beta2Reason = "WaitingForPreTerminateHook"
	// MachineDeletingWaitingForInfrastructureDeletionV1Beta2Reason is used while the InfraMachine is being
	// deleted.
	MachineDeletingWaitingForInfrastructureDeletionV1Beta2Reason = "WaitingForInfrastructureDeletion"
	// MachineDeletingWaitingForBootstrapDeletionV1Beta2Reason is used while the bootstrap config is being
	// deleted.
	MachineDeletingWaitingForBootstrapDeletionV1Beta2Reason = "WaitingForBootstrapDeletion"
	// MachineDeletingDeletingNodeV1Beta2Reason is used while the Node is being deleted.
	MachineDeletingDeletingNodeV1Beta2Reason = "DeletingNode"
	// MachineDeletingDeletionCompletedV1Beta2Reason is used once every step of the deletion is done.
	MachineDeletingDeletionCompletedV1Beta2Reason = "DeletionCompleted"
	// MachineDeletingInternalErrorV1Beta2Reason is used when a step of the deletion failed unexpectedly.
	MachineDeletingInternalErrorV1Beta2Reason = "InternalError"
)

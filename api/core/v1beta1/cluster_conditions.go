package v1beta1

// The v1beta1 conditions of a Cluster (status.conditions) besides Ready and InfrastructureReady, and their
// reasons.
const (
	// ControlPlaneReadyCondition mirrors the Ready condition of the Cluster's control plane object.
	ControlPlaneReadyCondition ConditionType = "ControlPlaneReady"

	// WaitingForControlPlaneFallbackReason is used while the control plane object reports no Ready condition
	// and is not ready.
	WaitingForControlPlaneFallbackReason = "WaitingForControlPlane"

	// ControlPlaneInitializedCondition is true once the control plane accepts requests: the control plane
	// object says it is initialized or, without one, a control plane Machine has a Node.
	ControlPlaneInitializedCondition ConditionType = "ControlPlaneInitialized"

	// WaitingForControlPlaneProviderInitializedReason is used while the control plane object is not
	// initialized.
	WaitingForControlPlaneProviderInitializedReason = "WaitingForControlPlaneProviderInitialized"

	// MissingNodeRefReason is used while no control plane Machine of a Cluster without control plane object
	// has a Node.
	MissingNodeRefReason = "MissingNodeRef"
)

// The v1beta2 conditions of a Cluster (status.v1beta2.conditions) and their reasons.
const (
	// ClusterAvailableV1Beta2Condition summarises InfrastructureReady, ControlPlaneAvailable,
	// WorkersAvailable, TopologyReconciled (for Clusters with a topology), Deleting and the availability gates.
	ClusterAvailableV1Beta2Condition = "Available"
	// ClusterAvailableV1Beta2Reason is the reason of a True Available condition.
	ClusterAvailableV1Beta2Reason = "Available"
	// ClusterNotAvailableV1Beta2Reason is used when a condition that Available summarises reports an issue.
	ClusterNotAvailableV1Beta2Reason = "NotAvailable"
	// ClusterAvailableUnknownV1Beta2Reason is used when a condition that Available summarises is unknown.
	ClusterAvailableUnknownV1Beta2Reason = "AvailableUnknown"

	// ClusterInfrastructureReadyV1Beta2Condition mirrors the Ready condition of the InfraCluster.
	ClusterInfrastructureReadyV1Beta2Condition = "InfrastructureReady"
	// ClusterInfrastructureReadyV1Beta2Reason is used when the InfraCluster is ready but reports no reason.
	ClusterInfrastructureReadyV1Beta2Reason = "Ready"
	// ClusterInfrastructureNotReadyV1Beta2Reason is used when the InfraCluster is not ready and reports no
	// Ready condition.
	ClusterInfrastructureNotReadyV1Beta2Reason = "NotReady"
	// ClusterInfrastructureInvalidConditionReportedV1Beta2Reason is used when the InfraCluster's Ready
	// condition cannot be read.
	ClusterInfrastructureInvalidConditionReportedV1Beta2Reason = "InvalidConditionReported"
	// ClusterInfrastructureInternalErrorV1Beta2Reason is used when the InfraCluster cannot be read.
	ClusterInfrastructureInternalErrorV1Beta2Reason = "InternalError"
	// ClusterInfrastructureDoesNotExistV1Beta2Reason is used when the Cluster has no InfraCluster, or when it
	// does not exist (yet).
	ClusterInfrastructureDoesNotExistV1Beta2Reason = "DoesNotExist"
	// ClusterInfrastructureDeletedV1Beta2Reason is used when the InfraCluster has been deleted.
	ClusterInfrastructureDeletedV1Beta2Reason = "Deleted"

	// ClusterControlPlaneInitializedV1Beta2Condition is true once the control plane accepts requests.
	ClusterControlPlaneInitializedV1Beta2Condition = "ControlPlaneInitialized"
	// ClusterControlPlaneInitializedV1Beta2Reason is the reason of a True ControlPlaneInitialized condition.
	ClusterControlPlaneInitializedV1Beta2Reason = "Initialized"
	// ClusterControlPlaneNotInitializedV1Beta2Reason is used while the control plane is not initialized.
	ClusterControlPlaneNotInitializedV1Beta2Reason = "NotInitialized"
	// ClusterControlPlaneInitializedInternalErrorV1Beta2Reason is used when initialization cannot be determined.
	ClusterControlPlaneInitializedInternalErrorV1Beta2Reason = "InternalError"

	// ClusterControlPlaneAvailableV1Beta2Condition mirrors the Available condition of the control plane object.
	ClusterControlPlaneAvailableV1Beta2Condition = "ControlPlaneAvailable"
	// ClusterControlPlaneAvailableV1Beta2Reason is used when the control plane is available but reports no reason.
	ClusterControlPlaneAvailableV1Beta2Reason = "Available"
	// ClusterControlPlaneNotAvailableV1Beta2Reason is used when the control plane is not available and
	// reports no Available condition.
	ClusterControlPlaneNotAvailableV1Beta2Reason = "NotAvailable"
	// ClusterControlPlaneInvalidConditionReportedV1Beta2Reason is used when the control plane's Available
	// condition cannot be read.
	ClusterControlPlaneInvalidConditionReportedV1Beta2Reason = "InvalidConditionReported"
	// ClusterControlPlaneAvailableInternalErrorV1Beta2Reason is used when the control plane cannot be read.
	ClusterControlPlaneAvailableInternalErrorV1Beta2Reason = "InternalError"
	// ClusterControlPlaneDoesNotExistV1Beta2Reason is used when the Cluster has no control plane object, or
	// when it does not exist (yet).
	ClusterControlPlaneDoesNotExistV1Beta2Reason = "DoesNotExist"
	// ClusterControlPlaneDeletedV1Beta2Reason is used when the control plane object has been deleted.
	ClusterControlPlaneDeletedV1Beta2Reason = "Deleted"

	// ClusterWorkersAvailableV1Beta2Condition aggregates the Available conditions of the Cluster's
	// MachineDeployments.
	ClusterWorkersAvailableV1Beta2Condition = "WorkersAvailable"
	// ClusterWorkersAvailableV1Beta2Reason is used when every MachineDeployment is available.
	ClusterWorkersAvailableV1Beta2Reason = "Available"
	// ClusterWorkersNotAvailableV1Beta2Reason is used when a MachineDeployment is not available.
	ClusterWorkersNotAvailableV1Beta2Reason = "NotAvailable"
	// ClusterWorkersAvailableUnknownV1Beta2Reason is used when the availability of a MachineDeployment is unknown.
	ClusterWorkersAvailableUnknownV1Beta2Reason = "AvailableUnknown"
	// ClusterWorkersAvailableNoWorkersV1Beta2Reason is used when the Cluster has no MachineDeployments.
	ClusterWorkersAvailableNoWorkersV1Beta2Reason = "NoWorkers"
	// ClusterWorkersAvailableInternalErrorV1Beta2Reason is used when the MachineDeployments cannot be listed.
	ClusterWorkersAvailableInternalErrorV1Beta2Reason = "InternalError"

	// ClusterRemoteConnectionProbeV1Beta2Condition reports whether the workload cluster's API server answers.
	ClusterRemoteConnectionProbeV1Beta2Condition = "RemoteConnectionProbe"

	// ClusterTopologyReconciledV1Beta2Condition reports whether the topology of a Cluster with a ClusterClass
	// has been applied.
	ClusterTopologyReconciledV1Beta2Condition = "TopologyReconciled"

	// ClusterDeletingV1Beta2Condition is true while the Cluster is being deleted; its message says what the
	// deletion waits for.
	ClusterDeletingV1Beta2Condition = "Deleting"
	// ClusterNotDeletingV1Beta2Reason is the reason of a False Deleting condition.
	ClusterNotDeletingV1Beta2Reason = "NotDeleting"
	// ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason is used while the BeforeClusterDelete hook of
	// the Runtime SDK holds the deletion of a Cluster with a managed topology.
	ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason = "WaitingForBeforeDeleteHook"
	// ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason is used while MachineDeployments, MachineSets or
	// worker Machines are being deleted.
	ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason = "WaitingForWorkersDeletion"
	// ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason is used while the control plane is being deleted.
	ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason = "WaitingForControlPlaneDeletion"
	// ClusterDeletingWaitingForInfrastructureDeletionV1Beta2Reason is used while the InfraCluster is being deleted.
	ClusterDeletingWaitingForInfrastructureDeletionV1Beta2Reason = "WaitingForInfrastructureDeletion"
	// ClusterDeletingDeletionCompletedV1Beta2Reason is used once every descendant is gone.
	ClusterDeletingDeletionCompletedV1Beta2Reason = "DeletionCompleted"
	// ClusterDeletingInternalErrorV1Beta2Reason is used when what the deletion waits for cannot be determined.
	ClusterDeletingInternalErrorV1Beta2Reason = "InternalError"
)

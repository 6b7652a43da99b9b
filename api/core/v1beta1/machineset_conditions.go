package v1beta1

// MachineSetFinalizer keeps a MachineSet until its Machines are deleted, so that a deleting MachineSet is
// visible for as long as any of its Machines is.
const MachineSetFinalizer = "cluster.x-k8s.io/machineset"

// The v1beta1 conditions of a MachineSet (status.conditions) besides Ready, and their reasons.
const (
	// MachineSetMachinesCreatedCondition is false when the MachineSet could not create the Machines it needs.
	MachineSetMachinesCreatedCondition ConditionType = "MachinesCreated"

	// MachineSetMachineCreationFailedReason is used when creating a Machine failed.
	MachineSetMachineCreationFailedReason = "MachineCreationFailed"

	// MachineSetBootstrapTemplateCloningFailedReason is used when cloning the bootstrap template failed.
	MachineSetBootstrapTemplateCloningFailedReason = "BootstrapTemplateCloningFailed"

	// MachineSetInfrastructureTemplateCloningFailedReason is used when cloning the infrastructure template failed.
	MachineSetInfrastructureTemplateCloningFailedReason = "InfrastructureTemplateCloningFailed"

	// MachineSetInvalidConfigurationReason is used when the MachineSet's spec cannot work, for example when
	// its selector does not match the labels of its template.
	MachineSetInvalidConfigurationReason = "InvalidConfiguration"

	// MachineSetResizedCondition is false while the MachineSet has more or fewer Machines than it wants, or
	// while some of its Machines are not ready.
	MachineSetResizedCondition ConditionType = "Resized"

	// MachineSetScalingUpReason is used while the MachineSet has fewer Machines than it wants.
	MachineSetScalingUpReason = "ScalingUp"

	// MachineSetScalingDownReason is used while the MachineSet has more Machines than it wants.
	MachineSetScalingDownReason = "ScalingDown"

	// MachineSetMachinesReadyCondition aggregates the v1beta1 Ready conditions of the MachineSet's Machines.
	MachineSetMachinesReadyCondition ConditionType = "MachinesReady"
)

// The v1beta2 conditions of a MachineSet (status.v1beta2.conditions) besides Paused, and their reasons.
const (
	// MachineSetScalingUpV1Beta2Condition is true while the MachineSet has fewer Machines than spec.replicas;
	// its message says when scaling up is blocked.
	MachineSetScalingUpV1Beta2Condition = "ScalingUp"
	// MachineSetScalingUpV1Beta2Reason is the reason of a True ScalingUp condition.
	MachineSetScalingUpV1Beta2Reason = "ScalingUp"
	// MachineSetNotScalingUpV1Beta2Reason is the reason of a False ScalingUp condition.
	MachineSetNotScalingUpV1Beta2Reason = "NotScalingUp"
	// MachineSetScalingUpInternalErrorV1Beta2Reason is used when the Machines cannot be listed.
	MachineSetScalingUpInternalErrorV1Beta2Reason = "InternalError"

	// MachineSetScalingDownV1Beta2Condition is true while the MachineSet has more Machines than spec.replicas.
	MachineSetScalingDownV1Beta2Condition = "ScalingDown"
	// MachineSetScalingDownV1Beta2Reason is the reason of a True ScalingDown condition.
	MachineSetScalingDownV1Beta2Reason = "ScalingDown"
	// MachineSetNotScalingDownV1Beta2Reason is the reason of a False ScalingDown condition.
	MachineSetNotScalingDownV1Beta2Reason = "NotScalingDown"
	// MachineSetScalingDownInternalErrorV1Beta2Reason is used when the Machines cannot be listed.
	MachineSetScalingDownInternalErrorV1Beta2Reason = "InternalError"

	// MachineSetMachinesReadyV1Beta2Condition aggregates the Ready conditions of the MachineSet's Machines.
	MachineSetMachinesReadyV1Beta2Condition = "MachinesReady"
	// MachineSetMachinesReadyV1Beta2Reason is used when every Machine is Ready.
	MachineSetMachinesReadyV1Beta2Reason = "Ready"
	// MachineSetMachinesNotReadyV1Beta2Reason is used when a Machine is not Ready.
	MachineSetMachinesNotReadyV1Beta2Reason = "NotReady"
	// MachineSetMachinesReadyUnknownV1Beta2Reason is used when no Machine is not Ready but one is unknown.
	MachineSetMachinesReadyUnknownV1Beta2Reason = "ReadyUnknown"
	// MachineSetMachinesReadyNoReplicasV1Beta2Reason is used when the MachineSet has no Machines.
	MachineSetMachinesReadyNoReplicasV1Beta2Reason = "NoReplicas"
	// MachineSetMachinesReadyInternalErrorV1Beta2Reason is used when the Machines cannot be listed.
	MachineSetMachinesReadyInternalErrorV1Beta2Reason = "InternalError"

	// MachineSetMachinesUpToDateV1Beta2Condition aggregates the UpToDate conditions of the MachineSet's
	// Machines. Machines created less than 10s ago without an UpToDate condition are not counted, to give
	// their controller time to set it.
	MachineSetMachinesUpToDateV1Beta2Condition = "MachinesUpToDate"
	// MachineSetMachinesUpToDateV1Beta2Reason is used when every Machine is up to date.
	MachineSetMachinesUpToDateV1Beta2Reason = "UpToDate"
	// MachineSetMachinesNotUpToDateV1Beta2Reason is used when a Machine is not up to date.
	MachineSetMachinesNotUpToDateV1Beta2Reason = "NotUpToDate"
	// MachineSetMachinesUpToDateUnknownV1Beta2Reason is used when no Machine is out of date but one is unknown.
	MachineSetMachinesUpToDateUnknownV1Beta2Reason = "UpToDateUnknown"
	// MachineSetMachinesUpToDateNoReplicasV1Beta2Reason is used when the MachineSet has no Machines.
	MachineSetMachinesUpToDateNoReplicasV1Beta2Reason = "NoReplicas"
	// MachineSetMachinesUpToDateInternalErrorV1Beta2Reason is used when the Machines cannot be listed.
	MachineSetMachinesUpToDateInternalErrorV1Beta2Reason = "InternalError"

	// MachineSetDeletingV1Beta2Condition is true while the MachineSet is being deleted; its message says how
	// many Machines are left.
	MachineSetDeletingV1Beta2Condition = "Deleting"
	// MachineSetDeletingV1Beta2Reason is the reason of a True Deleting condition.
	MachineSetDeletingV1Beta2Reason = "Deleting"
	// MachineSetNotDeletingV1Beta2Reason is the reason of a False Deleting condition.
	MachineSetNotDeletingV1Beta2Reason = "NotDeleting"
	// MachineSetDeletingInternalErrorV1Beta2Reason is used when the Machines cannot be listed.
	MachineSetDeletingInternalErrorV1Beta2Reason = "InternalError"
)

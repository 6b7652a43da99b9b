package v1beta1

// MachineDeploymentFinalizer keeps a MachineDeployment until its MachineSets are deleted, so that a deleting
// MachineDeployment is visible for as long as any of its Machines is.
const MachineDeploymentFinalizer = "cluster.x-k8s.io/machinedeployment"

// The v1beta1 conditions of a MachineDeployment (status.conditions) besides Ready, and their reasons.
const (
	// MachineDeploymentAvailableCondition is true when at least spec.replicas minus maxUnavailable Machines
	// are available.
	MachineDeploymentAvailableCondition ConditionType = "Available"

	// MachineDeploymentWaitingForAvailableMachinesReason is used while fewer Machines than needed are available.
	MachineDeploymentWaitingForAvailableMachinesReason = "WaitingForAvailableMachines"

	// MachineDeploymentMachineSetReadyCondition mirrors the Ready condition of the newest MachineSet.
	MachineDeploymentMachineSetReadyCondition ConditionType = "MachineSetReady"

	// MachineDeploymentWaitingForMachineSetFallbackReason is used while the newest MachineSet does not exist
	// or reports no Ready condition.
	MachineDeploymentWaitingForMachineSetFallbackReason = "WaitingForMachineSet"

	// MachineDeploymentInvalidConfigurationReason is used when the MachineDeployment's spec cannot work, for
	// example when its selector does not match the labels of its template, or when maxSurge and
	// maxUnavailable are both 0.
	MachineDeploymentInvalidConfigurationReason = "InvalidConfiguration"
)

// The v1beta2 conditions of a MachineDeployment (status.v1beta2.conditions) besides Paused, and their
// reasons.
const (
	// MachineDeploymentAvailableV1Beta2Condition is true when the MachineDeployment is not being deleted and
	// at least spec.replicas minus maxUnavailable Machines are available.
	MachineDeploymentAvailableV1Beta2Condition = "Available"
	// MachineDeploymentAvailableV1Beta2Reason is the reason of a True Available condition.
	MachineDeploymentAvailableV1Beta2Reason = "Available"
	// MachineDeploymentNotAvailableV1Beta2Reason is used when too few Machines are available.
	MachineDeploymentNotAvailableV1Beta2Reason = "NotAvailable"
	// MachineDeploymentAvailableDeletingV1Beta2Reason is used while the MachineDeployment is being deleted.
	MachineDeploymentAvailableDeletingV1Beta2Reason = "Deleting"
	// MachineDeploymentAvailableInternalErrorV1Beta2Reason is used when the MachineSets cannot be listed.
	MachineDeploymentAvailableInternalErrorV1Beta2Reason = "InternalError"

	// MachineDeploymentMachinesReadyV1Beta2Condition aggregates the Ready conditions of the Machines.
	MachineDeploymentMachinesReadyV1Beta2Condition = "MachinesReady"
	// MachineDeploymentMachinesUpToDateV1Beta2Condition aggregates the UpToDate conditions of the Machines.
	MachineDeploymentMachinesUpToDateV1Beta2Condition = "MachinesUpToDate"

	// MachineDeploymentRollingOutV1Beta2Condition is true while Machines of older MachineSets remain.
	MachineDeploymentRollingOutV1Beta2Condition = "RollingOut"
	// MachineDeploymentRollingOutV1Beta2Reason is the reason of a True RollingOut condition.
	MachineDeploymentRollingOutV1Beta2Reason = "RollingOut"
	// MachineDeploymentNotRollingOutV1Beta2Reason is the reason of a False RollingOut condition.
	MachineDeploymentNotRollingOutV1Beta2Reason = "NotRollingOut"
	// MachineDeploymentRollingOutInternalErrorV1Beta2Reason is used when the MachineSets cannot be listed.
	MachineDeploymentRollingOutInternalErrorV1Beta2Reason = "InternalError"

	// MachineDeploymentScalingUpV1Beta2Condition is true while the MachineDeployment has fewer Machines than
	// spec.replicas; its message says when scaling up is blocked.
	MachineDeploymentScalingUpV1Beta2Condition = "ScalingUp"
	// MachineDeploymentScalingUpV1Beta2Reason is the reason of a True ScalingUp condition.
	MachineDeploymentScalingUpV1Beta2Reason = "ScalingUp"
	// MachineDeploymentNotScalingUpV1Beta2Reason is the reason of a False ScalingUp condition.
	MachineDeploymentNotScalingUpV1Beta2Reason = "NotScalingUp"
	// MachineDeploymentScalingUpInternalErrorV1Beta2Reason is used when the MachineSets cannot be listed.
	MachineDeploymentScalingUpInternalErrorV1Beta2Reason = "InternalError"

	// MachineDeploymentScalingDownV1Beta2Condition is true while the MachineDeployment has more Machines than
	// spec.replicas.
	MachineDeploymentScalingDownV1Beta2Condition = "ScalingDown"
	// MachineDeploymentScalingDownV1Beta2Reason is the reason of a True ScalingDown condition.
	MachineDeploymentScalingDownV1Beta2Reason = "ScalingDown"
	// MachineDeploymentNotScalingDownV1Beta2Reason is the reason of a False ScalingDown condition.
	MachineDeploymentNotScalingDownV1Beta2Reason = "NotScalingDown"
	// MachineDeploymentScalingDownInternalErrorV1Beta2Reason is used when the MachineSets cannot be listed.
	MachineDeploymentScalingDownInternalErrorV1Beta2Reason = "InternalError"

	// MachineDeploymentDeletingV1Beta2Condition is true while the MachineDeployment is being deleted; its
	// message says how many MachineSets and Machines are left.
	MachineDeploymentDeletingV1Beta2Condition = "Deleting"
	// MachineDeploymentDeletingV1Beta2Reason is the reason of a True Deleting condition.
	MachineDeploymentDeletingV1Beta2Reason = "Deleting"
	// MachineDeploymentNotDeletingV1Beta2Reason is the reason of a False Deleting condition.
	MachineDeploymentNotDeletingV1Beta2Reason = "NotDeleting"
	// MachineDeploymentDeletingInternalErrorV1Beta2Reason is used when the MachineSets cannot be listed.
	MachineDeploymentDeletingInternalErrorV1Beta2Reason = "InternalError"
)

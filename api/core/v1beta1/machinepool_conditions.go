package v1beta1

// The v1beta1 conditions of a MachinePool (status.conditions) besides Ready, BootstrapReady and
// InfrastructureReady, and their reasons.
const (
	// ReplicasReadyCondition is true when every replica the InfraMachinePool reports has a Ready Node.
	ReplicasReadyCondition ConditionType = "ReplicasReady"

	// WaitingForReplicasReadyReason is used while some replicas have no Ready Node.
	WaitingForReplicasReadyReason = "WaitingForReplicasReady"

	// IncorrectExternalRefReason is used when a reference of the MachinePool points at nothing.
	IncorrectExternalRefReason = "IncorrectExternalRef"
)

// The v1beta2 conditions of a MachinePool (status.v1beta2.conditions) besides Paused, and their reasons.
const (
	// MachinePoolAvailableV1Beta2Condition is true when the InfraMachinePool is ready and at least
	// spec.replicas Nodes are available.
	MachinePoolAvailableV1Beta2Condition = "Available"
	// MachinePoolAvailableV1Beta2Reason is the reason of a True Available condition.
	MachinePoolAvailableV1Beta2Reason = "Available"
	// MachinePoolNotAvailableV1Beta2Reason is used when the infrastructure is not ready or too few Nodes
	// are available.
	MachinePoolNotAvailableV1Beta2Reason = "NotAvailable"
	// MachinePoolAvailableDeletingV1Beta2Reason is used while the MachinePool is being deleted.
	MachinePoolAvailableDeletingV1Beta2Reason = "Deleting"

	// MachinePoolBootstrapConfigReadyV1Beta2Condition mirrors the readiness of the bootstrap config.
	MachinePoolBootstrapConfigReadyV1Beta2Condition = "BootstrapConfigReady"
	// MachinePoolInfrastructureReadyV1Beta2Condition mirrors the readiness of the InfraMachinePool.
	MachinePoolInfrastructureReadyV1Beta2Condition = "InfrastructureReady"

	// MachinePoolScalingUpV1Beta2Condition is true while fewer replicas are ready than spec.replicas.
	MachinePoolScalingUpV1Beta2Condition = "ScalingUp"
	// MachinePoolScalingUpV1Beta2Reason is the reason of a True ScalingUp condition.
	MachinePoolScalingUpV1Beta2Reason = "ScalingUp"
	// MachinePoolNotScalingUpV1Beta2Reason is the reason of a False ScalingUp condition.
	MachinePoolNotScalingUpV1Beta2Reason = "NotScalingUp"

	// MachinePoolScalingDownV1Beta2Condition is true while the pool has more replicas than spec.replicas.
	MachinePoolScalingDownV1Beta2Condition = "ScalingDown"
	// MachinePoolScalingDownV1Beta2Reason is the reason of a True ScalingDown condition.
	MachinePoolScalingDownV1Beta2Reason = "ScalingDown"
	// MachinePoolNotScalingDownV1Beta2Reason is the reason of a False ScalingDown condition.
	MachinePoolNotScalingDownV1Beta2Reason = "NotScalingDown"

	// MachinePoolDeletingV1Beta2Condition is true while the MachinePool is being deleted; its message says
	// what it waits for.
	MachinePoolDeletingV1Beta2Condition = "Deleting"
	// MachinePoolDeletingV1Beta2Reason is the reason of a True Deleting condition.
	MachinePoolDeletingV1Beta2Reason = "Deleting"
	// MachinePoolNotDeletingV1Beta2Reason is the reason of a False Deleting condition.
	MachinePoolNotDeletingV1Beta2Reason = "NotDeleting"
)

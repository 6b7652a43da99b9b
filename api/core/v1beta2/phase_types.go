package v1beta2

// ClusterPhase is a high-level summary of where a Cluster is in its lifecycle (status.phase).
type ClusterPhase string

const (
	// ClusterPhasePending is the first phase, before the infrastructure is provisioned.
	ClusterPhasePending = ClusterPhase("Pending")
	// ClusterPhaseProvisioning means the infrastructure is being provisioned.
	ClusterPhaseProvisioning = ClusterPhase("Provisioning")
	// ClusterPhaseProvisioned means the infrastructure is provisioned and the control plane endpoint known.
	ClusterPhaseProvisioned = ClusterPhase("Provisioned")
	// ClusterPhaseDeleting means the Cluster and its descendants are being deleted.
	ClusterPhaseDeleting = ClusterPhase("Deleting")
	// ClusterPhaseFailed means the Cluster hit a terminal failure.
	ClusterPhaseFailed = ClusterPhase("Failed")
	// ClusterPhaseUnknown means the phase cannot be determined.
	ClusterPhaseUnknown = ClusterPhase("Unknown")
)

// SetTypedPhase sets the phase.
func (c *ClusterStatus) SetTypedPhase(p ClusterPhase) { c.Phase = string(p) }

// GetTypedPhase returns the phase, Unknown when it is not one of the known phases.
func (c *ClusterStatus) GetTypedPhase() ClusterPhase {
	switch p := ClusterPhase(c.Phase); p {
	case ClusterPhasePending, ClusterPhaseProvisioning, ClusterPhaseProvisioned, ClusterPhaseDeleting, ClusterPhaseFailed:
		return p
	default:
		return ClusterPhaseUnknown
	}
}

// MachinePhase is a high-level summary of where a Machine is in its lifecycle (status.phase).
type MachinePhase string

const (
	// MachinePhasePending is the first phase, before the bootstrap data is ready.
	MachinePhasePending = MachinePhase("Pending")
	// MachinePhaseProvisioning means the infrastructure is being provisioned.
	MachinePhaseProvisioning = MachinePhase("Provisioning")
	// MachinePhaseProvisioned means the infrastructure is ready but no Node is linked yet.
	MachinePhaseProvisioned = MachinePhase("Provisioned")
	// MachinePhaseRunning means the Machine's Node exists and is linked through status.nodeRef.
	MachinePhaseRunning = MachinePhase("Running")
	// MachinePhaseUpdating means the Machine is being updated in place.
	MachinePhaseUpdating = MachinePhase("Updating")
	// MachinePhaseDeleting means the Machine is being deleted.
	MachinePhaseDeleting = MachinePhase("Deleting")
	// MachinePhaseDeleted means the Machine's infrastructure and bootstrap objects are gone.
	MachinePhaseDeleted = MachinePhase("Deleted")
	// MachinePhaseFailed means the Machine hit a terminal failure.
	MachinePhaseFailed = MachinePhase("Failed")
	// MachinePhaseUnknown means the phase cannot be determined.
	MachinePhaseUnknown = MachinePhase("Unknown")
)

// SetTypedPhase sets the phase.
func (m *MachineStatus) SetTypedPhase(p MachinePhase) { m.Phase = string(p) }

// GetTypedPhase returns the phase, Unknown when it is not one of the known phases.
func (m *MachineStatus) GetTypedPhase() MachinePhase {
	switch p := MachinePhase(m.Phase); p {
	case MachinePhasePending, MachinePhaseProvisioning, MachinePhaseProvisioned, MachinePhaseRunning,
		MachinePhaseUpdating, MachinePhaseDeleting, MachinePhaseDeleted, MachinePhaseFailed:
		return p
	default:
		return MachinePhaseUnknown
	}
}

// MachineDeploymentPhase is a high-level summary of a MachineDeployment (status.phase).
type MachineDeploymentPhase string

const (
	// MachineDeploymentPhaseScalingUp means Machines are being added.
	MachineDeploymentPhaseScalingUp = MachineDeploymentPhase("ScalingUp")
	// MachineDeploymentPhaseScalingDown means Machines are being removed.
	MachineDeploymentPhaseScalingDown = MachineDeploymentPhase("ScalingDown")
	// MachineDeploymentPhaseRunning means the MachineDeployment has its replicas.
	MachineDeploymentPhaseRunning = MachineDeploymentPhase("Running")
	// MachineDeploymentPhaseFailed means the MachineDeployment hit a terminal failure.
	MachineDeploymentPhaseFailed = MachineDeploymentPhase("Failed")
	// MachineDeploymentPhaseUnknown means the phase cannot be determined.
	MachineDeploymentPhaseUnknown = MachineDeploymentPhase("Unknown")
)

// SetTypedPhase sets the phase.
func (md *MachineDeploymentStatus) SetTypedPhase(p MachineDeploymentPhase) { md.Phase = string(p) }

// GetTypedPhase returns the phase, Unknown when it is not one of the known phases.
func (md *MachineDeploymentStatus) GetTypedPhase() MachineDeploymentPhase {
	switch p := MachineDeploymentPhase(md.Phase); p {
	case MachineDeploymentPhaseScalingUp, MachineDeploymentPhaseScalingDown, MachineDeploymentPhaseRunning,
		MachineDeploymentPhaseFailed:
		return p
	default:
		return MachineDeploymentPhaseUnknown
	}
}

// MachinePoolPhase is a high-level summary of where a MachinePool is in its lifecycle (status.phase).
type MachinePoolPhase string

const (
	// MachinePoolPhasePending is the first phase, before the bootstrap data is ready.
	MachinePoolPhasePending = MachinePoolPhase("Pending")
	// MachinePoolPhaseProvisioning means the infrastructure is being provisioned.
	MachinePoolPhaseProvisioning = MachinePoolPhase("Provisioning")
	// MachinePoolPhaseProvisioned means the infrastructure is ready but not every Node is linked.
	MachinePoolPhaseProvisioned = MachinePoolPhase("Provisioned")
	// MachinePoolPhaseRunning means every instance has a Node.
	MachinePoolPhaseRunning = MachinePoolPhase("Running")
	// MachinePoolPhaseScalingUp means instances are being added.
	MachinePoolPhaseScalingUp = MachinePoolPhase("ScalingUp")
	// MachinePoolPhaseScalingDown means instances are being removed.
	MachinePoolPhaseScalingDown = MachinePoolPhase("ScalingDown")
	// MachinePoolPhaseScaling means the pool is scaling in a direction the provider does not say.
	MachinePoolPhaseScaling = MachinePoolPhase("Scaling")
	// MachinePoolPhaseDeleting means the pool is being deleted.
	MachinePoolPhaseDeleting = MachinePoolPhase("Deleting")
	// MachinePoolPhaseFailed means the pool hit a terminal failure.
	MachinePoolPhaseFailed = MachinePoolPhase("Failed")
	// MachinePoolPhaseUnknown means the phase cannot be determined.
	MachinePoolPhaseUnknown = MachinePoolPhase("Unknown")
)

// SetTypedPhase sets the phase.
func (m *MachinePoolStatus) SetTypedPhase(p MachinePoolPhase) { m.Phase = string(p) }

// GetTypedPhase returns the phase, Unknown when it is not one of the known phases.
func (m *MachinePoolStatus) GetTypedPhase() MachinePoolPhase {
	switch p := MachinePoolPhase(m.Phase); p {
	case MachinePoolPhasePending, MachinePoolPhaseProvisioning, MachinePoolPhaseProvisioned, MachinePoolPhaseRunning,
		MachinePoolPhaseScalingUp, MachinePoolPhaseScalingDown, MachinePoolPhaseScaling, MachinePoolPhaseDeleting,
		MachinePoolPhaseFailed:
		return p
	default:
		return MachinePoolPhaseUnknown
	}
}

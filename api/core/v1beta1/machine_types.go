package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePhase is a simple, high-level summary of where a Machine is in its lifecycle.
type MachinePhase string

// The phases of a Machine.
const (
	// MachinePhasePending is the first state of a Machine, before its bootstrap data is ready.
	MachinePhasePending = MachinePhase("Pending")
	// MachinePhaseProvisioning means the bootstrap data is ready and the infrastructure is being provisioned.
	MachinePhaseProvisioning = MachinePhase("Provisioning")
	// MachinePhaseProvisioned means the infrastructure is ready but no Node has been linked yet.
	MachinePhaseProvisioned = MachinePhase("Provisioned")
	// MachinePhaseRunning means the Machine's Node exists and is linked through status.nodeRef.
	MachinePhaseRunning = MachinePhase("Running")
	// MachinePhaseDeleting means the Machine is being deleted.
	MachinePhaseDeleting = MachinePhase("Deleting")
	// MachinePhaseDeleted means the Machine's infrastructure and bootstrap objects are gone.
	MachinePhaseDeleted = MachinePhase("Deleted")
	// MachinePhaseFailed means the Machine hit a terminal failure that needs a user.
	MachinePhaseFailed = MachinePhase("Failed")
	// MachinePhaseUnknown means the phase cannot be determined.
	MachinePhaseUnknown = MachinePhase("Unknown")
)

// MachineSpec is the desired state of a Machine.
// +kubebuilder:validation:XValidation:rule=`!has(self.version) || self.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$")`,message="version must be a valid semantic version, for example v1.31.0",fieldPath=".version"
type MachineSpec struct {
	// clusterName is the name of the Cluster this Machine belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// bootstrap says where the Machine's bootstrap data comes from.
	// +required
	Bootstrap Bootstrap `json:"bootstrap"`

	// infrastructureRef is a reference to the provider-specific object that holds the Machine's infrastructure.
	// +required
	InfrastructureRef corev1.ObjectReference `json:"infrastructureRef"`

	// version is the Kubernetes version of the Machine's node.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version *string `json:"version,omitempty"`

	// providerID is the identifier of the machine at its infrastructure provider; it matches the Node's spec.providerID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID *string `json:"providerID,omitempty"`

	// failureDomain is the failure domain the Machine is placed in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain *string `json:"failureDomain,omitempty"`

	// readinessGates names extra conditions that must be true before the Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// taints are put on the Machine's Node: Always ones are kept there (and removed when they leave this
	// list), OnInitialization ones are put once, when the Node is first synced. They change in place,
	// without replacing Machines. Upstream v1.14's v1beta1 field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`

	// nodeDrainTimeout is the longest time to spend draining the node; no limit when empty.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time to wait for the node's volumes to detach; no limit when empty.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long to keep trying to delete the node once the Machine is deleting; 10s when empty.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
}

// Bootstrap says where a Machine's bootstrap data comes from: a bootstrap provider's config object, or a
// Secret given directly.
type Bootstrap struct {
	// configRef is a reference to the bootstrap provider's object that produces the bootstrap data.
	// +optional
	ConfigRef *corev1.ObjectReference `json:"configRef,omitempty"`

	// dataSecretName is the name of the Secret that holds the bootstrap data.
	// +optional
	// +kubebuilder:validation:MinLength=0
	// +kubebuilder:validation:MaxLength=253
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// MachineStatus is the observed state of a Machine.
type MachineStatus struct {
	// nodeRef is a reference to the Machine's Node in the workload cluster.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`

	// nodeInfo is a copy of the Node's system information.
	// +optional
	NodeInfo *corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`

	// lastUpdated is when the phase last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// failureReason says why the Machine hit a terminal failure. Deprecated by the v1beta2 contract.
	// +optional
	FailureReason *MachineStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure of the Machine. Deprecated by the v1beta2 contract.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// addresses are the addresses the infrastructure provider reports for the Machine.
	// +optional
	Addresses MachineAddresses `json:"addresses,omitempty"`

	// phase is a simple summary of where the Machine is in its lifecycle.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Running;Deleting;Deleted;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// certificatesExpiryDate is when the Machine's certificates expire, for control plane Machines.
	// +optional
	CertificatesExpiryDate *metav1.Time `json:"certificatesExpiryDate,omitempty"`

	// bootstrapReady says whether the bootstrap data is ready.
	// +optional
	BootstrapReady bool `json:"bootstrapReady"`

	// infrastructureReady says whether the infrastructure is ready.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the v1beta1 conditions of the Machine.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// deletion records the progress of the Machine's deletion.
	// +optional
	Deletion *MachineDeletionStatus `json:"deletion,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *MachineV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachineV1Beta2Status is the part of a Machine's status that the v1beta2 API adds.
type MachineV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the Machine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineDeletionStatus records when the steps of a Machine's deletion started.
type MachineDeletionStatus struct {
	// nodeDrainStartTime is when draining the node started.
	// +optional
	NodeDrainStartTime *metav1.Time `json:"nodeDrainStartTime,omitempty"`

	// waitForNodeVolumeDetachStartTime is when waiting for the node's volumes to detach started.
	// +optional
	WaitForNodeVolumeDetachStartTime *metav1.Time `json:"waitForNodeVolumeDetachStartTime,omitempty"`

	// waitForPreDrainHookStartTime is when waiting for the pre-drain hooks started.
	// Only present when the Machine has a deletionTimestamp and waiting for pre-drain hooks had been started.
	// +optional
	WaitForPreDrainHookStartTime *metav1.Time `json:"waitForPreDrainHookStartTime,omitempty"`

	// waitForPreTerminateHookStartTime is when waiting for the pre-terminate hooks started.
	// Only present when the Machine has a deletionTimestamp and waiting for pre-terminate hooks had been started.
	// +optional
	WaitForPreTerminateHookStartTime *metav1.Time `json:"waitForPreTerminateHookStartTime,omitempty"`
}

// MachineStatusError is the kind of a Machine's terminal failure.
type MachineStatusError string

// The kinds of terminal Machine failure.
const (
	// InvalidConfigurationMachineError means the Machine's configuration cannot work.
	InvalidConfigurationMachineError MachineStatusError = "InvalidConfiguration"
	// UnsupportedChangeMachineError means a change to the Machine's spec is not supported.
	UnsupportedChangeMachineError MachineStatusError = "UnsupportedChange"
	// InsufficientResourcesMachineError means the provider lacks the resources to create the machine.
	InsufficientResourcesMachineError MachineStatusError = "InsufficientResources"
	// CreateMachineError means creating the machine failed.
	CreateMachineError MachineStatusError = "CreateError"
	// UpdateMachineError means updating the machine failed.
	UpdateMachineError MachineStatusError = "UpdateError"
	// DeleteMachineError means deleting the machine failed.
	DeleteMachineError MachineStatusError = "DeleteError"
	// JoinClusterTimeoutMachineError means the machine did not join the cluster in time.
	JoinClusterTimeoutMachineError MachineStatusError = "JoinClusterTimeoutError"
)

// SetTypedPhase sets the phase.
func (m *MachineStatus) SetTypedPhase(p MachinePhase) { m.Phase = string(p) }

// GetTypedPhase returns the phase, Unknown when it is not one of the known phases.
func (m *MachineStatus) GetTypedPhase() MachinePhase {
	switch p := MachinePhase(m.Phase); p {
	case MachinePhasePending, MachinePhaseProvisioning, MachinePhaseProvisioned, MachinePhaseRunning,
		MachinePhaseDeleting, MachinePhaseDeleted, MachinePhaseFailed:
		return p
	default:
		return MachinePhaseUnknown
	}
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machines,shortName=ma,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="NodeName",type="string",JSONPath=".status.nodeRef.name",description="Node name associated with this machine"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Machine status such as Terminating/Pending/Running/Failed etc"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Machine"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version",description="Kubernetes version associated with this Machine"

// Machine is one node of a workload cluster, with its bootstrap data and infrastructure.
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Machine.
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
	// status is the observed state of the Machine.
	// +optional
	Status MachineStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (m *Machine) GetConditions() Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *Machine) SetConditions(conditions Conditions) { m.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *Machine) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *Machine) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &MachineV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// MachineList is a list of Machines.
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

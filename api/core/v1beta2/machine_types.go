package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineSpec is the desired state of a Machine.
// +kubebuilder:validation:XValidation:rule=`!has(self.version) || self.version.matches(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")`,message="version must be a valid semantic version, for example v1.31.0",fieldPath=".version"
type MachineSpec struct {
	// clusterName is the name of the Cluster the Machine belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName,omitempty"`

	// bootstrap says where the Machine's bootstrap data comes from.
	// +required
	Bootstrap Bootstrap `json:"bootstrap,omitempty,omitzero"`

	// infrastructureRef references the Machine's infrastructure object.
	// +required
	InfrastructureRef ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`

	// version is the Kubernetes version of the Machine's Node.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// providerID is the provider's identifier of the Machine, equal to the Node's spec.providerID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// failureDomain is the failure domain the Machine is placed in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// minReadySeconds is how long the Node must be Ready before the Machine is Available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates are extra conditions that must hold before the Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// deletion holds the timeouts of the Machine's deletion.
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the Machine's Node.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachineDeletionSpec holds the timeouts of a Machine's deletion.
// +kubebuilder:validation:MinProperties=1
type MachineDeletionSpec struct {
	// nodeDrainTimeoutSeconds bounds the drain of the Node; 0 or unset waits forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds bounds the wait for the Node's volumes to detach; 0 or unset waits
	// forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds bounds the retries of deleting the Node; 0 retries forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// MachineReadinessGate names an extra condition that must hold before a Machine is Ready.
type MachineReadinessGate struct {
	// conditionType is the type of a condition in the Machine's status.conditions.
	// +required
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType,omitempty"`

	// polarity of the condition: Positive (the default) or Negative.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// MachineStatus is the observed state of a Machine.
// +kubebuilder:validation:MinProperties=1
type MachineStatus struct {
	// conditions of the Machine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization says what of the Machine's initial provisioning is done.
	// +optional
	Initialization MachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// nodeRef names the Machine's Node.
	// +optional
	NodeRef MachineNodeReference `json:"nodeRef,omitempty,omitzero"`

	// nodeInfo is the Node's system information.
	// +optional
	NodeInfo *corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`

	// lastUpdated is when the phase last changed.
	// +optional
	LastUpdated metav1.Time `json:"lastUpdated,omitempty,omitzero"`

	// addresses of the Machine.
	// +optional
	Addresses MachineAddresses `json:"addresses,omitempty"`

	// failureDomain is the failure domain the Machine runs in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// phase of the Machine.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Running;Updating;Deleting;Deleted;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// certificatesExpiryDate is when the Machine's certificates expire.
	// +optional
	CertificatesExpiryDate metav1.Time `json:"certificatesExpiryDate,omitempty,omitzero"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deletion holds the progress of the Machine's deletion.
	// +optional
	Deletion *MachineDeletionStatus `json:"deletion,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *MachineDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachineNodeReference names a Machine's Node.
type MachineNodeReference struct {
	// name of the Node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
}

// MachineInitializationStatus says what of a Machine's initial provisioning is done.
// +kubebuilder:validation:MinProperties=1
type MachineInitializationStatus struct {
	// infrastructureProvisioned is true once the infrastructure is provisioned.
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`

	// bootstrapDataSecretCreated is true once the bootstrap data secret exists.
	// +optional
	BootstrapDataSecretCreated *bool `json:"bootstrapDataSecretCreated,omitempty"`
}

// MachineDeprecatedStatus groups the status fields that go away with v1beta1.
type MachineDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *MachineV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachineStatusError is the kind of a Machine's terminal failure (v1beta1).
type MachineStatusError string

// MachineV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type MachineV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	FailureReason *MachineStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// MachineDeletionStatus holds the progress of a Machine's deletion.
type MachineDeletionStatus struct {
	// nodeDrainStartTime is when the drain of the Node started.
	// +optional
	NodeDrainStartTime metav1.Time `json:"nodeDrainStartTime,omitempty,omitzero"`

	// waitForNodeVolumeDetachStartTime is when the wait for volumes to detach started.
	// +optional
	WaitForNodeVolumeDetachStartTime metav1.Time `json:"waitForNodeVolumeDetachStartTime,omitempty,omitzero"`

	// waitForPreDrainHookStartTime is when the wait for pre-drain hooks started.
	// +optional
	WaitForPreDrainHookStartTime metav1.Time `json:"waitForPreDrainHookStartTime,omitempty,omitzero"`

	// waitForPreTerminateHookStartTime is when the wait for pre-terminate hooks started.
	// +optional
	WaitForPreTerminateHookStartTime metav1.Time `json:"waitForPreTerminateHookStartTime,omitempty,omitzero"`
}

// Bootstrap says where a Machine's bootstrap data comes from: a bootstrap provider's config, or a Secret.
type Bootstrap struct {
	// configRef references the bootstrap provider's config object.
	// +optional
	ConfigRef ContractVersionedObjectReference `json:"configRef,omitempty,omitzero"`

	// dataSecretName is the name of the Secret holding the bootstrap data.
	// +optional
	// +kubebuilder:validation:MinLength=0
	// +kubebuilder:validation:MaxLength=253
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machines,shortName=ma,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Node Name",type="string",JSONPath=".status.nodeRef.name",description="Node name associated with this machine"
// +kubebuilder:printcolumn:name="Provider ID",type="string",JSONPath=".spec.providerID",description="Provider ID",priority=10
// +kubebuilder:printcolumn:name="Failure domain",type="string",JSONPath=".status.failureDomain",description="The failure domain where the Machine has been scheduled"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Machine pass all readiness checks"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Machine is Ready for at least MinReadySeconds"
// +kubebuilder:printcolumn:name="Up-to-date",type="string",JSONPath=`.status.conditions[?(@.type=="UpToDate")].status`,description=" Machine spec matches the spec of the Machine's owner resource, e.g. MachineDeployment"
// +kubebuilder:printcolumn:name="Internal-IP",type="string",JSONPath=`.status.addresses[?(@.type=="InternalIP")].address`,description="Internal IP of the machine",priority=10
// +kubebuilder:printcolumn:name="External-IP",type="string",JSONPath=`.status.addresses[?(@.type=="ExternalIP")].address`,description="External IP of the machine",priority=10
// +kubebuilder:printcolumn:name="OS-Image",type="string",JSONPath=`.status.nodeInfo.osImage`,description="OS Image reported by the node",priority=10
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Machine status such as Terminating/Pending/Running/Failed etc"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Machine"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version",description="Kubernetes version associated with this Machine"

// Machine is one host (a VM, a bare-metal server, a container) that runs a Kubernetes Node.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.minReadySeconds)",message="minReadySeconds of a Machine is not supported by capstan yet: remove it (a MachineSet's, MachineDeployment's or MachinePool's template can set it)",fieldPath=".spec.minReadySeconds"
type Machine struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the Machine.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the Machine.
	// +required
	Spec MachineSpec `json:"spec,omitempty,omitzero"`

	// status of the Machine.
	// +optional
	Status MachineStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachineList is a list of Machines.
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

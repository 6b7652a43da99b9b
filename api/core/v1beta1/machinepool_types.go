package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePoolFinalizer keeps a MachinePool until its bootstrap config, its InfraMachinePool and its Nodes
// are deleted.
const MachinePoolFinalizer = "machinepool.cluster.x-k8s.io"

// MachinePoolSpec is the desired state of a MachinePool.
// +kubebuilder:validation:XValidation:rule="has(self.template.spec.bootstrap.configRef) || has(self.template.spec.bootstrap.dataSecretName)",message="expected either spec.template.spec.bootstrap.dataSecretName or spec.template.spec.bootstrap.configRef to be populated",fieldPath=".template.spec.bootstrap"
type MachinePoolSpec struct {
	// clusterName is the name of the Cluster this MachinePool belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// replicas is the number of machines the pool should have; 1 when not set (or the cluster autoscaler's
	// min-size annotation on a new MachinePool).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// template describes the machines of the pool: their bootstrap config, their InfraMachinePool, their
	// version.
	// +required
	Template MachineTemplateSpec `json:"template"`

	// minReadySeconds is how long a new machine's Node must be Ready before the machine counts as available.
	// 0 when not set.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// providerIDList holds the provider IDs of the pool's machine instances, copied from the
	// InfraMachinePool; they match the Nodes' spec.providerID.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// failureDomains are the failure domains the pool's machines may be placed in.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`
}

// MachinePoolStatus is the observed state of a MachinePool.
type MachinePoolStatus struct {
	// nodeRefs are the Nodes of the pool's machines, found by provider ID.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	NodeRefs []corev1.ObjectReference `json:"nodeRefs,omitempty"`

	// replicas is the number of machine instances the InfraMachinePool reports.
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas is the number of the pool's Nodes that are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of the pool's Nodes Ready for at least minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// unavailableReplicas is replicas minus availableReplicas. Upstream removes this field in the next
	// apiVersion.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`

	// failureReason is set when the MachinePool or one of its provider objects hit a terminal problem.
	// Deprecated by the v1beta2 contract: upstream removes this field in the next apiVersion.
	// +optional
	FailureReason *MachinePoolStatusFailure `json:"failureReason,omitempty"`

	// failureMessage describes the terminal problem of failureReason. Deprecated by the v1beta2 contract:
	// upstream removes this field in the next apiVersion.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// phase is a summary of the MachinePool's state, for people.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Running;ScalingUp;ScalingDown;Scaling;Deleting;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// bootstrapReady says that the bootstrap data secret is known.
	// +optional
	BootstrapReady bool `json:"bootstrapReady"`

	// infrastructureReady is the InfraMachinePool's readiness.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the v1beta1 conditions: Ready, BootstrapReady, InfrastructureReady, ReplicasReady.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// versions is the aggregated Kubernetes versions in this MachinePool.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// v1beta2 holds the fields of the v1beta2 API.
	// +optional
	V1Beta2 *MachinePoolV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachinePoolV1Beta2Status holds the status fields of the v1beta2 API.
type MachinePoolV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the MachinePool: Available, BootstrapConfigReady,
	// InfrastructureReady, ScalingUp, ScalingDown, Deleting and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// readyReplicas is the number of the pool's Machines whose Ready condition is true (the instances the
	// InfraMachinePool reports when it creates no Machines).
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of the pool's Machines whose Available condition is true (the
	// instances the InfraMachinePool reports when it creates no Machines).
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of the pool's Machines whose UpToDate condition is true (spec.replicas
	// when the InfraMachinePool creates no Machines).
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
}

// MachinePoolStatusFailure is the kind of a MachinePool's terminal failure.
type MachinePoolStatusFailure string

// The kinds of terminal MachinePool failure.
const (
	// InvalidConfigurationMachinePoolError means the MachinePool's configuration cannot work, for example
	// its InfraMachinePool was deleted after it was ready.
	InvalidConfigurationMachinePoolError MachinePoolStatusFailure = "InvalidConfiguration"
)

// MachinePoolPhase is a summary of a MachinePool's state.
type MachinePoolPhase string

// The phases of a MachinePool.
const (
	// MachinePoolPhasePending is the phase of a new MachinePool.
	MachinePoolPhasePending = MachinePoolPhase("Pending")
	// MachinePoolPhaseProvisioning means the bootstrap data is ready and the infrastructure is not.
	MachinePoolPhaseProvisioning = MachinePoolPhase("Provisioning")
	// MachinePoolPhaseProvisioned means some of the pool's Nodes exist.
	MachinePoolPhaseProvisioned = MachinePoolPhase("Provisioned")
	// MachinePoolPhaseRunning means the pool has spec.replicas Ready Nodes.
	MachinePoolPhaseRunning = MachinePoolPhase("Running")
	// MachinePoolPhaseScalingUp means the pool has fewer Ready Nodes than spec.replicas.
	MachinePoolPhaseScalingUp = MachinePoolPhase("ScalingUp")
	// MachinePoolPhaseScalingDown means the pool has more Ready Nodes than spec.replicas.
	MachinePoolPhaseScalingDown = MachinePoolPhase("ScalingDown")
	// MachinePoolPhaseScaling means the pool is resized by an external autoscaler (the
	// cluster.x-k8s.io/replicas-managed-by annotation) and not at its size.
	MachinePoolPhaseScaling = MachinePoolPhase("Scaling")
	// MachinePoolPhaseDeleting means the MachinePool is being deleted.
	MachinePoolPhaseDeleting = MachinePoolPhase("Deleting")
	// MachinePoolPhaseFailed means the MachinePool hit a terminal failure that needs a user.
	MachinePoolPhaseFailed = MachinePoolPhase("Failed")
	// MachinePoolPhaseUnknown means the phase cannot be determined.
	MachinePoolPhaseUnknown = MachinePoolPhase("Unknown")
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinepools,shortName=mp,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="Total number of machines desired by this MachinePool",priority=10
// +kubebuilder:printcolumn:name="Replicas",type="string",JSONPath=".status.replicas",description="MachinePool replicas count"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachinePool status such as Terminating/Pending/Provisioning/Running/Failed etc"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachinePool"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachinePool"

// MachinePool is a set of machines that an infrastructure provider manages as one (a cloud's scale set or
// auto scaling group), with one bootstrap config for all of them.
type MachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachinePool.
	// +optional
	Spec MachinePoolSpec `json:"spec,omitempty"`
	// status is the observed state of the MachinePool.
	// +optional
	Status MachinePoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MachinePoolList is a list of MachinePools.
type MachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MachinePools.
	Items []MachinePool `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (m *MachinePool) GetConditions() Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *MachinePool) SetConditions(conditions Conditions) { m.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *MachinePool) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *MachinePool) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &MachinePoolV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePoolSpec is the desired state of a MachinePool.
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.template.spec) || !has(self.template.spec.bootstrap) || has(self.template.spec.bootstrap.configRef) || has(self.template.spec.bootstrap.dataSecretName)",message="expected either spec.template.spec.bootstrap.dataSecretName or spec.template.spec.bootstrap.configRef to be populated",fieldPath=".template.spec.bootstrap"
type MachinePoolSpec struct {
	// clusterName is the name of the Cluster the MachinePool belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName,omitempty"`

	// replicas is the number of machines wanted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// template is the machine of the pool, which the infrastructure provider scales as a group.
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`

	// providerIDList are the provider IDs of the pool's instances, which the infrastructure provider reports.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// failureDomains are the failure domains the instances may be placed in.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`
}

// MachinePoolStatus is the observed state of a MachinePool.
// +kubebuilder:validation:MinProperties=1
type MachinePoolStatus struct {
	// conditions of the MachinePool.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization says what of the pool's initial provisioning is done.
	// +optional
	Initialization MachinePoolInitializationStatus `json:"initialization,omitempty,omitzero"`

	// nodeRefs reference the Nodes of the pool's instances.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	NodeRefs []corev1.ObjectReference `json:"nodeRefs,omitempty"`

	// replicas is the number of instances.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of Ready instances.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Available instances.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of up-to-date instances.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// versions are the Kubernetes versions of the instances, with their counts.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// phase of the MachinePool.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Running;ScalingUp;ScalingDown;Scaling;Deleting;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *MachinePoolDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachinePoolInitializationStatus says what of a MachinePool's initial provisioning is done.
// +kubebuilder:validation:MinProperties=1
type MachinePoolInitializationStatus struct {
	// infrastructureProvisioned is true once the infrastructure is provisioned.
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`

	// bootstrapDataSecretCreated is true once the bootstrap data secret exists.
	// +optional
	BootstrapDataSecretCreated *bool `json:"bootstrapDataSecretCreated,omitempty"`
}

// MachinePoolDeprecatedStatus groups the status fields that go away with v1beta1.
type MachinePoolDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *MachinePoolV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachinePoolStatusFailure is the kind of a MachinePool's terminal failure (v1beta1).
type MachinePoolStatusFailure string

// MachinePoolV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type MachinePoolV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	FailureReason *MachinePoolStatusFailure `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// readyReplicas is the number of Ready instances (v1beta1 meaning).
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of available instances (v1beta1 meaning).
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// unavailableReplicas is the number of unavailable instances (v1beta1 meaning).
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinepools,shortName=mp,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="The desired number of machines"
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.replicas",description="The number of machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="The number of machines with Ready condition true"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas",description="The number of machines with Available condition true"
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=".status.upToDateReplicas",description="The number of machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachinePool status such as Terminating/Pending/Provisioning/Running/Failed etc"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachinePool"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachinePool"

// MachinePool is a group of machines that the infrastructure provider scales as one.
type MachinePool struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the MachinePool.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the MachinePool.
	// +required
	Spec MachinePoolSpec `json:"spec,omitempty,omitzero"`

	// status of the MachinePool.
	// +optional
	Status MachinePoolStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachinePoolList is a list of MachinePools.
type MachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachinePool `json:"items"`
}

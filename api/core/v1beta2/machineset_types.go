package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineSetSpec is the desired state of a MachineSet.
type MachineSetSpec struct {
	// clusterName is the name of the Cluster the MachineSet belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName,omitempty"`

	// replicas is the number of Machines wanted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// selector selects the Machines of the MachineSet; it must match the template's labels.
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`

	// template is the Machine the MachineSet creates.
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`

	// machineNaming says how the Machines are named.
	// +optional
	MachineNaming MachineNamingSpec `json:"machineNaming,omitempty,omitzero"`

	// deletion says which Machines go first when scaling down.
	// +optional
	Deletion MachineSetDeletionSpec `json:"deletion,omitempty,omitzero"`
}

// MachineSetDeletionSpec says which Machines go first when a MachineSet scales down.
// +kubebuilder:validation:MinProperties=1
type MachineSetDeletionSpec struct {
	// order is Random (the default), Newest or Oldest.
	// +optional
	Order MachineSetDeletionOrder `json:"order,omitempty"`
}

// MachineTemplateSpec is the template of the Machines a MachineSet creates.
type MachineTemplateSpec struct {
	// metadata of the Machines.
	// +optional
	ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of the Machines.
	// +required
	Spec MachineSpec `json:"spec,omitempty,omitzero"`
}

// MachineSetDeletionOrder says which Machines go first when scaling down.
// +kubebuilder:validation:Enum=Random;Newest;Oldest
type MachineSetDeletionOrder string

const (
	// RandomMachineSetDeletionOrder deletes Machines in random order, unhealthy ones first.
	RandomMachineSetDeletionOrder MachineSetDeletionOrder = "Random"
	// NewestMachineSetDeletionOrder deletes the newest Machines first.
	NewestMachineSetDeletionOrder MachineSetDeletionOrder = "Newest"
	// OldestMachineSetDeletionOrder deletes the oldest Machines first.
	OldestMachineSetDeletionOrder MachineSetDeletionOrder = "Oldest"
)

// MachineSetStatus is the observed state of a MachineSet.
// +kubebuilder:validation:MinProperties=1
type MachineSetStatus struct {
	// conditions of the MachineSet.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// selector is the label selector of the Machines, in string form, for the scale subresource.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of Machines whose Ready condition is True.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Available condition is True.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of Machines whose UpToDate condition is True.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// versions are the Kubernetes versions of the Machines, with their counts.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *MachineSetDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachineSetDeprecatedStatus groups the status fields that go away with v1beta1.
type MachineSetDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *MachineSetV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachineSetStatusError is the kind of a MachineSet's terminal failure (v1beta1).
type MachineSetStatusError string

// MachineSetV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type MachineSetV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	FailureReason *MachineSetStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// fullyLabeledReplicas is the number of Machines whose labels match the template's.
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas"`

	// readyReplicas is the number of Machines whose Node is Ready (v1beta1 meaning).
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// availableReplicas is the number of Machines available (v1beta1 meaning).
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinesets,shortName=ms,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="The desired number of machines"
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.replicas",description="The number of machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="The number of machines with Ready condition true"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas",description="The number of machines with Available condition true"
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=".status.upToDateReplicas",description="The number of machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineSet"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachineSet"

// MachineSet keeps a number of Machines of one template.
type MachineSet struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the MachineSet.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the MachineSet.
	// +required
	Spec MachineSetSpec `json:"spec,omitempty,omitzero"`

	// status of the MachineSet.
	// +optional
	Status MachineSetStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachineSetList is a list of MachineSets.
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}

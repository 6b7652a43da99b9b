package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineSetDeletePolicy chooses which Machines a MachineSet deletes first when it scales down.
// +kubebuilder:validation:Enum=Random;Newest;Oldest
type MachineSetDeletePolicy string

// The delete policies. Machines marked with the delete-machine annotation, unhealthy Machines and Machines
// without a Node always go first.
const (
	// RandomMachineSetDeletePolicy deletes Machines in no particular order.
	RandomMachineSetDeletePolicy MachineSetDeletePolicy = "Random"
	// NewestMachineSetDeletePolicy deletes the newest Machines first.
	NewestMachineSetDeletePolicy MachineSetDeletePolicy = "Newest"
	// OldestMachineSetDeletePolicy deletes the oldest Machines first.
	OldestMachineSetDeletePolicy MachineSetDeletePolicy = "Oldest"
)

// MachineSetSpec is the desired state of a MachineSet.
type MachineSetSpec struct {
	// clusterName is the name of the Cluster this MachineSet belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// replicas is the number of Machines wanted; 1 when empty (or the autoscaler's minimum size when its
	// annotations are set).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// minReadySeconds is how long a new Machine's Node must be Ready before the Machine counts as available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// deletePolicy chooses which Machines are deleted first when scaling down: Random (the default), Newest
	// or Oldest.
	// +optional
	// +kubebuilder:validation:Enum=Random;Newest;Oldest
	DeletePolicy string `json:"deletePolicy,omitempty"`

	// selector selects the Machines that belong to the MachineSet; it must match the template's labels.
	// +required
	Selector metav1.LabelSelector `json:"selector"`

	// template describes the Machines the MachineSet creates.
	// +optional
	Template MachineTemplateSpec `json:"template,omitempty"`

	// machineNamingStrategy sets how the names of new Machines are built.
	// +optional
	MachineNamingStrategy *MachineNamingStrategy `json:"machineNamingStrategy,omitempty"`
}

// MachineNamingStrategy sets how the names of new Machines are built.
type MachineNamingStrategy struct {
	// template is a Go template for Machine names. It may use {{ .machineSet.name }} and {{ .random }}
	// (a random 5 character suffix, which must be present); "{{ .machineSet.name }}-{{ .random }}" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template,omitempty"`
}

// MachineTemplateSpec describes the Machines a MachineSet or MachineDeployment creates.
type MachineTemplateSpec struct {
	// metadata is added to every Machine created from the template.
	// +optional
	ObjectMeta `json:"metadata,omitempty"`

	// spec is the spec of every Machine created from the template.
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
}

// MachineSetStatus is the observed state of a MachineSet.
type MachineSetStatus struct {
	// selector is the label selector in string form, for the scale subresource.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of Machines that the MachineSet has.
	// +optional
	Replicas int32 `json:"replicas"`

	// fullyLabeledReplicas is the number of Machines whose labels match the template's.
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`

	// readyReplicas is the number of Machines whose Node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Node has been Ready for minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// failureReason says why the MachineSet hit a terminal failure. Deprecated by the v1beta2 contract.
	// +optional
	FailureReason *MachineSetStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure of the MachineSet. Deprecated by the v1beta2 contract.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions are the v1beta1 conditions of the MachineSet.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// versions is the aggregated Kubernetes versions in this MachineSet.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *MachineSetV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachineSetV1Beta2Status is the part of a MachineSet's status that the v1beta2 API adds.
type MachineSetV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the MachineSet.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// readyReplicas is the number of Machines whose Ready condition is true.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Available condition is true.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of Machines whose UpToDate condition is true.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
}

// MachineSetStatusError is the kind of a MachineSet's terminal failure.
type MachineSetStatusError string

// The kinds of terminal MachineSet failure.
const (
	// InvalidConfigurationMachineSetError means the MachineSet's configuration cannot work.
	InvalidConfigurationMachineSetError MachineSetStatusError = "InvalidConfiguration"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinesets,shortName=ms,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas",description="Total number of machines desired by this machineset",priority=10
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Total number of non-terminated machines targeted by this machineset"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Total number of ready machines targeted by this machineset."
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas",description="Total number of available machines (ready for at least minReadySeconds)"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineSet"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachineSet"

// MachineSet keeps a number of identical Machines.
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachineSet.
	// +optional
	Spec MachineSetSpec `json:"spec,omitempty"`
	// status is the observed state of the MachineSet.
	// +optional
	Status MachineSetStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (m *MachineSet) GetConditions() Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *MachineSet) SetConditions(conditions Conditions) { m.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *MachineSet) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *MachineSet) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &MachineSetV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// MachineSetList is a list of MachineSets.
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}

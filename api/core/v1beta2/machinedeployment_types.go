package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineDeploymentRolloutStrategyType is how a MachineDeployment replaces its Machines.
// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
type MachineDeploymentRolloutStrategyType string

const (
	// RollingUpdateMachineDeploymentStrategyType replaces Machines within maxSurge and maxUnavailable.
	RollingUpdateMachineDeploymentStrategyType MachineDeploymentRolloutStrategyType = "RollingUpdate"
	// OnDeleteMachineDeploymentStrategyType replaces a Machine only once a user deleted it.
	OnDeleteMachineDeploymentStrategyType MachineDeploymentRolloutStrategyType = "OnDelete"
)

// MachineDeploymentSpec is the desired state of a MachineDeployment.
type MachineDeploymentSpec struct {
	// clusterName is the name of the Cluster the MachineDeployment belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName,omitempty"`

	// replicas is the number of Machines wanted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// rollout says how and when Machines are replaced.
	// +optional
	Rollout MachineDeploymentRolloutSpec `json:"rollout,omitempty,omitzero"`

	// selector selects the Machines of the MachineDeployment; it must match the template's labels.
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`

	// template is the Machine the MachineDeployment creates.
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`

	// machineNaming says how the Machines are named.
	// +optional
	MachineNaming MachineNamingSpec `json:"machineNaming,omitempty,omitzero"`

	// remediation bounds the remediation of unhealthy Machines.
	// +optional
	Remediation MachineDeploymentRemediationSpec `json:"remediation,omitempty,omitzero"`

	// deletion says which Machines go first when scaling down.
	// +optional
	Deletion MachineDeploymentDeletionSpec `json:"deletion,omitempty,omitzero"`

	// paused stops the reconciliation of the MachineDeployment.
	// +optional
	Paused *bool `json:"paused,omitempty"`
}

// MachineDeploymentRolloutSpec says how and when a MachineDeployment replaces its Machines.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentRolloutSpec struct {
	// after replaces every Machine created before this time.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`

	// strategy of the rollout.
	// +optional
	Strategy MachineDeploymentRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// MachineDeploymentRolloutStrategy is the strategy of a rollout.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentRolloutStrategy struct {
	// type is RollingUpdate or OnDelete.
	// +required
	Type MachineDeploymentRolloutStrategyType `json:"type,omitempty"`

	// rollingUpdate bounds a RollingUpdate.
	// +optional
	RollingUpdate MachineDeploymentRolloutStrategyRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// MachineDeploymentRolloutStrategyRollingUpdate bounds a RollingUpdate.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentRolloutStrategyRollingUpdate struct {
	// maxUnavailable is how many Machines (or what percentage) may be unavailable during the rollout.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxSurge is how many Machines (or what percentage) may exist beyond replicas during the rollout.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// MachineDeploymentRemediationSpec bounds the remediation of unhealthy Machines.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentRemediationSpec struct {
	// maxInFlight is how many Machines (or what percentage) may be remediated at once.
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
}

// MachineNamingSpec says how Machines are named.
// +kubebuilder:validation:MinProperties=1
type MachineNamingSpec struct {
	// template of the names, with .cluster.name, .machineSet.name and .random; "{{ .machineSet.name }}-{{ .random }}"
	// when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template,omitempty"`
}

// MachineDeploymentDeletionSpec says which Machines go first when a MachineDeployment scales down.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentDeletionSpec struct {
	// order is Random (the default), Newest or Oldest.
	// +optional
	Order MachineSetDeletionOrder `json:"order,omitempty"`
}

// MachineDeploymentStatus is the observed state of a MachineDeployment.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentStatus struct {
	// conditions of the MachineDeployment.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

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

	// phase of the MachineDeployment.
	// +optional
	// +kubebuilder:validation:Enum=ScalingUp;ScalingDown;Running;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *MachineDeploymentDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachineDeploymentDeprecatedStatus groups the status fields that go away with v1beta1.
type MachineDeploymentDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *MachineDeploymentV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachineDeploymentV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type MachineDeploymentV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// updatedReplicas is the number of Machines of the latest template (v1beta1 meaning).
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of Machines whose Node is Ready (v1beta1 meaning).
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// availableReplicas is the number of Machines available (v1beta1 meaning).
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// unavailableReplicas is the number of Machines not available (v1beta1 meaning).
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinedeployments,shortName=md,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Cluster pass all availability checks"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="The desired number of machines"
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.replicas",description="The number of machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="The number of machines with Ready condition true"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas",description="The number of machines with Available condition true"
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=".status.upToDateReplicas",description="The number of machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineDeployment"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachineDeployment"

// MachineDeployment rolls out Machines of one template through MachineSets.
type MachineDeployment struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the MachineDeployment.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the MachineDeployment.
	// +required
	Spec MachineDeploymentSpec `json:"spec,omitempty,omitzero"`

	// status of the MachineDeployment.
	// +optional
	Status MachineDeploymentStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachineDeploymentList is a list of MachineDeployments.
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineDeploymentStrategyType is how a MachineDeployment replaces old Machines with new ones.
// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
type MachineDeploymentStrategyType string

const (
	// RollingUpdateMachineDeploymentStrategyType replaces old MachineSets by new ones gradually, within
	// maxSurge and maxUnavailable.
	RollingUpdateMachineDeploymentStrategyType MachineDeploymentStrategyType = "RollingUpdate"

	// OnDeleteMachineDeploymentStrategyType creates a new Machine only when the user deletes an old one.
	OnDeleteMachineDeploymentStrategyType MachineDeploymentStrategyType = "OnDelete"
)

// MachineDeploymentPhase is a simple, high-level summary of a MachineDeployment's state.
type MachineDeploymentPhase string

// The phases of a MachineDeployment.
const (
	// MachineDeploymentPhaseScalingUp means there are fewer Machines than wanted.
	MachineDeploymentPhaseScalingUp = MachineDeploymentPhase("ScalingUp")
	// MachineDeploymentPhaseScalingDown means there are more Machines than wanted.
	MachineDeploymentPhaseScalingDown = MachineDeploymentPhase("ScalingDown")
	// MachineDeploymentPhaseRunning means every wanted Machine is Ready.
	MachineDeploymentPhaseRunning = MachineDeploymentPhase("Running")
	// MachineDeploymentPhaseFailed means the MachineDeployment hit a terminal failure.
	MachineDeploymentPhaseFailed = MachineDeploymentPhase("Failed")
	// MachineDeploymentPhaseUnknown means the phase cannot be determined.
	MachineDeploymentPhaseUnknown = MachineDeploymentPhase("Unknown")
)

// MachineDeploymentSpec is the desired state of a MachineDeployment.
type MachineDeploymentSpec struct {
	// clusterName is the name of the Cluster this MachineDeployment belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// replicas is the number of Machines wanted; 1 when empty (or the autoscaler's minimum size when its
	// annotations are set).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// rolloutAfter asks for a rollout of every Machine created before this time.
	// +optional
	RolloutAfter *metav1.Time `json:"rolloutAfter,omitempty"`

	// selector selects the Machines that belong to the MachineDeployment; it must match the template's labels.
	// +required
	Selector metav1.LabelSelector `json:"selector"`

	// template describes the Machines the MachineDeployment creates.
	// +required
	Template MachineTemplateSpec `json:"template"`

	// strategy is how old Machines are replaced by new ones; RollingUpdate with maxSurge 1 and
	// maxUnavailable 0 when empty.
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`

	// machineNamingStrategy sets how the names of new Machines are built.
	// +optional
	MachineNamingStrategy *MachineNamingStrategy `json:"machineNamingStrategy,omitempty"`

	// minReadySeconds is how long a new Machine's Node must be Ready before the Machine counts as available.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// revisionHistoryLimit is how many old MachineSets to keep for rollback; 1 when empty. Deprecated.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// paused stops rollouts of the MachineDeployment.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// progressDeadlineSeconds is not used. Deprecated.
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// MachineDeploymentStrategy is how old Machines are replaced by new ones.
type MachineDeploymentStrategy struct {
	// type is RollingUpdate (the default) or OnDelete.
	// +optional
	Type MachineDeploymentStrategyType `json:"type,omitempty"`

	// rollingUpdate tunes a RollingUpdate.
	// +optional
	RollingUpdate *MachineRollingUpdateDeployment `json:"rollingUpdate,omitempty"`

	// remediation tunes how MachineHealthCheck remediation of this MachineDeployment's Machines proceeds.
	// +optional
	Remediation *RemediationStrategy `json:"remediation,omitempty"`
}

// RemediationStrategy tunes how remediation of a MachineDeployment's Machines proceeds.
type RemediationStrategy struct {
	// maxInFlight is the most Machines remediated at the same time, a number or a percentage of replicas;
	// no limit when empty.
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
}

// MachineRollingUpdateDeployment tunes a RollingUpdate.
type MachineRollingUpdateDeployment struct {
	// maxUnavailable is how many Machines may be unavailable during the update, a number or a percentage
	// of replicas rounded down; 0 when empty. It may not be 0 when maxSurge is 0.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxSurge is how many Machines may be created above the wanted number, a number or a percentage of
	// replicas rounded up; 1 when empty. It may not be 0 when maxUnavailable is 0.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// deletePolicy chooses which Machines are deleted first when scaling down: Random (the default), Newest
	// or Oldest.
	// +optional
	// +kubebuilder:validation:Enum=Random;Newest;Oldest
	DeletePolicy *string `json:"deletePolicy,omitempty"`
}

// MachineDeploymentStatus is the observed state of a MachineDeployment.
type MachineDeploymentStatus struct {
	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// selector is the label selector in string form, for the scale subresource.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of Machines of the MachineDeployment's MachineSets.
	// +optional
	Replicas int32 `json:"replicas"`

	// updatedReplicas is the number of Machines that have the current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of Machines whose Node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// availableReplicas is the number of Machines whose Node has been Ready for minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// unavailableReplicas is the number of Machines still needed for the MachineDeployment to be fully
	// available.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`

	// phase is a simple summary of the MachineDeployment's state.
	// +optional
	// +kubebuilder:validation:Enum=ScalingUp;ScalingDown;Running;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// conditions are the v1beta1 conditions of the MachineDeployment.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// versions is the aggregated Kubernetes versions in this MachineDeployment.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []StatusVersion `json:"versions,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *MachineDeploymentV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachineDeploymentV1Beta2Status is the part of a MachineDeployment's status that the v1beta2 API adds.
type MachineDeploymentV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the MachineDeployment.
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

// SetTypedPhase sets the phase.
func (md *MachineDeploymentStatus) SetTypedPhase(p MachineDeploymentPhase) { md.Phase = string(p) }

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinedeployments,shortName=md,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas",description="Total number of machines desired by this MachineDeployment",priority=10
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Total number of non-terminated machines targeted by this MachineDeployment"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Total number of ready machines targeted by this MachineDeployment"
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=".status.updatedReplicas",description="Total number of non-terminated machines targeted by this deployment that have the desired template spec"
// +kubebuilder:printcolumn:name="Unavailable",type=integer,JSONPath=".status.unavailableReplicas",description="Total number of unavailable machines targeted by this MachineDeployment"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineDeployment"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachineDeployment"

// MachineDeployment rolls out Machines declaratively through MachineSets.
type MachineDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachineDeployment.
	// +optional
	Spec MachineDeploymentSpec `json:"spec,omitempty"`
	// status is the observed state of the MachineDeployment.
	// +optional
	Status MachineDeploymentStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (m *MachineDeployment) GetConditions() Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *MachineDeployment) SetConditions(conditions Conditions) { m.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *MachineDeployment) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *MachineDeployment) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &MachineDeploymentV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// MachineDeploymentList is a list of MachineDeployments.
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSeverity says how serious a False condition is: Error, Warning or Info.
// It is empty when the condition is True.
type ConditionSeverity string

const (
	// ConditionSeverityError means the condition blocks progress and needs attention.
	ConditionSeverityError ConditionSeverity = "Error"
	// ConditionSeverityWarning means the condition is not blocking but may need attention.
	ConditionSeverityWarning ConditionSeverity = "Warning"
	// ConditionSeverityInfo means the condition is expected to resolve itself (for example while provisioning).
	ConditionSeverityInfo ConditionSeverity = "Info"
	// ConditionSeverityNone is the severity of a True condition.
	ConditionSeverityNone ConditionSeverity = ""
)

// ConditionType names a condition, in CamelCase.
type ConditionType string

// Condition is a v1beta1 Cluster API condition: an observation of one aspect of an object's state.
type Condition struct {
	// type of condition in CamelCase or in foo.example.com/CamelCase.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Type ConditionType `json:"type"`

	// status of the condition, one of True, False, Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`

	// severity provides an explicit classification of Reason code, so users or machines can immediately
	// understand the current situation and act accordingly. Set only when Status is False.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Severity ConditionSeverity `json:"severity,omitempty"`

	// lastTransitionTime is the last time the condition changed from one status to another.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// reason is a CamelCase word explaining the last transition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason,omitempty"`

	// message is a human readable explanation of the last transition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Message string `json:"message,omitempty"`
}

// Conditions is the list of v1beta1 conditions of an object.
type Conditions []Condition

// Well-known v1beta1 condition types and reasons shared by several kinds.
const (
	// ReadyCondition summarises the state of an object; every Cluster API object reports it.
	ReadyCondition ConditionType = "Ready"

	// PausedV1Beta2Condition is true while reconciliation of an object is paused.
	PausedV1Beta2Condition = "Paused"

	// PausedV1Beta2Reason is the reason of a True Paused condition.
	PausedV1Beta2Reason = "Paused"

	// NotPausedV1Beta2Reason is the reason of a False Paused condition.
	NotPausedV1Beta2Reason = "NotPaused"

	// DeletingReason is used while an object is being deleted.
	DeletingReason = "Deleting"

	// DeletionFailedReason is used when deleting an object failed.
	DeletionFailedReason = "DeletionFailed"

	// DeletedReason is used when an object has been deleted.
	DeletedReason = "Deleted"

	// InfrastructureReadyCondition reports whether the infrastructure of a Cluster or Machine is ready.
	InfrastructureReadyCondition ConditionType = "InfrastructureReady"

	// WaitingForInfrastructureFallbackReason is used while the infrastructure object reports no Ready condition.
	WaitingForInfrastructureFallbackReason = "WaitingForInfrastructure"
)

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSeverity is the severity of a v1beta1 condition that is not True.
// +kubebuilder:validation:MaxLength=32
type ConditionSeverity string

const (
	// ConditionSeverityError says the condition's state is an error.
	ConditionSeverityError ConditionSeverity = "Error"
	// ConditionSeverityWarning says the condition's state is a warning.
	ConditionSeverityWarning ConditionSeverity = "Warning"
	// ConditionSeverityInfo says the condition's state is informational.
	ConditionSeverityInfo ConditionSeverity = "Info"
	// ConditionSeverityNone is the severity of a True condition.
	ConditionSeverityNone ConditionSeverity = ""
)

// ConditionType is the type of a v1beta1 condition.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=256
type ConditionType string

// Condition is a v1beta1 condition, which v1beta2 objects keep under status.deprecated.v1beta1.conditions
// while v1beta1 is served.
type Condition struct {
	// type of the condition.
	// +required
	Type ConditionType `json:"type"`

	// status of the condition: True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`

	// severity of a condition that is not True.
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`

	// lastTransitionTime is when the condition last changed status.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// reason is a CamelCase reason for the last transition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason,omitempty"`

	// message is a human readable message about the last transition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Message string `json:"message,omitempty"`
}

// Conditions is a list of v1beta1 conditions.
type Conditions []Condition

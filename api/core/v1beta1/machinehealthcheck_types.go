package v1beta1

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineHealthCheckSpec is the desired state of a MachineHealthCheck.
// +kubebuilder:validation:XValidation:rule="(has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0)",message="selector must not be empty: an empty selector would check every Machine of the Cluster",fieldPath=".selector"
type MachineHealthCheckSpec struct {
	// clusterName is the name of the Cluster whose Machines are checked.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// selector selects the Machines to check.
	// +required
	Selector metav1.LabelSelector `json:"selector"`

	// unhealthyConditions are Node conditions that, held for their timeout, make a Machine unhealthy.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	UnhealthyConditions []UnhealthyCondition `json:"unhealthyConditions,omitempty"`

	// unhealthyMachineConditions are Machine conditions that, held for their timeout, make a Machine
	// unhealthy (any one of them). Upstream v1.14's v1beta1 field.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`

	// maxUnhealthy stops remediation when more Machines than this (a number or a percentage) are unhealthy;
	// 100% when empty.
	// +optional
	MaxUnhealthy *intstr.IntOrString `json:"maxUnhealthy,omitempty"`

	// unhealthyRange allows remediation only while the number of unhealthy Machines is in this range, such
	// as "[3-5]"; it takes precedence over maxUnhealthy.
	// +optional
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	UnhealthyRange *string `json:"unhealthyRange,omitempty"`

	// nodeStartupTimeout is how long a Machine may go without a Node before it is unhealthy; 10m when empty,
	// 0 to disable.
	// +optional
	NodeStartupTimeout *metav1.Duration `json:"nodeStartupTimeout,omitempty"`

	// remediationTemplate is a reference to an external remediation template; when set, remediation is
	// left to the external remediation provider.
	// +optional
	RemediationTemplate *corev1.ObjectReference `json:"remediationTemplate,omitempty"`
}

// UnhealthyMachineCondition is a Machine condition that, held for its timeout, makes a Machine unhealthy.
type UnhealthyMachineCondition struct {
	// type of the Machine condition (one of its v1beta2 conditions, status.v1beta2.conditions).
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!(self in ['Ready','Available','HealthCheckSucceeded','OwnerRemediated','ExternallyRemediated'])",message="type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated"
	// +required
	Type string `json:"type,omitempty"`

	// status of the condition: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status,omitempty"`

	// timeout is how long the condition must hold, for example "1h".
	// +required
	Timeout metav1.Duration `json:"timeout"`
}

// UnhealthyCondition is a Node condition that, held for its timeout, makes a Machine unhealthy.
type UnhealthyCondition struct {
	// type of the Node condition.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	Type corev1.NodeConditionType `json:"type"`

	// status of the condition: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	Status corev1.ConditionStatus `json:"status"`

	// timeout is how long the condition must hold.
	// +required
	Timeout metav1.Duration `json:"timeout"`
}

// MachineHealthCheckClass is the health check settings that a ClusterClass or a topology gives.
type MachineHealthCheckClass struct {
	// unhealthyConditions are Node conditions that, held for their timeout, make a Machine unhealthy.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	UnhealthyConditions []UnhealthyCondition `json:"unhealthyConditions,omitempty"`

	// unhealthyMachineConditions are Machine conditions that, held for their timeout, make a Machine
	// unhealthy (any one of them). Upstream v1.14's v1beta1 field.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`

	// maxUnhealthy stops remediation when more Machines than this (a number or a percentage) are unhealthy.
	// +optional
	MaxUnhealthy *intstr.IntOrString `json:"maxUnhealthy,omitempty"`

	// unhealthyRange allows remediation only while the number of unhealthy Machines is in this range.
	// +optional
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	UnhealthyRange *string `json:"unhealthyRange,omitempty"`

	// nodeStartupTimeout is how long a Machine may go without a Node before it is unhealthy.
	// +optional
	NodeStartupTimeout *metav1.Duration `json:"nodeStartupTimeout,omitempty"`

	// remediationTemplate is a reference to an external remediation template.
	// +optional
	RemediationTemplate *corev1.ObjectReference `json:"remediationTemplate,omitempty"`
}

// IsZero reports whether the health check sets no field (a topology's then defers to its class's).
func (c MachineHealthCheckClass) IsZero() bool { return reflect.ValueOf(c).IsZero() }

// MachineHealthCheckStatus is the observed state of a MachineHealthCheck.
type MachineHealthCheckStatus struct {
	// expectedMachines is the number of Machines the check selects.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ExpectedMachines int32 `json:"expectedMachines"`

	// currentHealthy is the number of healthy Machines.
	// +optional
	// +kubebuilder:validation:Minimum=0
	CurrentHealthy int32 `json:"currentHealthy"`

	// remediationsAllowed is how many more Machines may be remediated before maxUnhealthy stops remediation.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RemediationsAllowed int32 `json:"remediationsAllowed"`

	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// targets are the names of the Machines the check selects.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Targets []string `json:"targets,omitempty"`

	// conditions are the v1beta1 conditions of the MachineHealthCheck.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *MachineHealthCheckV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachineHealthCheckV1Beta2Status is the part of a MachineHealthCheck's status that the v1beta2 API adds.
type MachineHealthCheckV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the MachineHealthCheck.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinehealthchecks,shortName=mhc;mhcs,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="ExpectedMachines",type="integer",JSONPath=".status.expectedMachines",description="Number of machines currently monitored"
// +kubebuilder:printcolumn:name="MaxUnhealthy",type="string",JSONPath=".spec.maxUnhealthy",description="Maximum number of unhealthy machines allowed"
// +kubebuilder:printcolumn:name="CurrentHealthy",type="integer",JSONPath=".status.currentHealthy",description="Current observed healthy machines"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineHealthCheck"

// MachineHealthCheck watches a set of Machines and remediates those that become unhealthy.
type MachineHealthCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MachineHealthCheck.
	// +optional
	Spec MachineHealthCheckSpec `json:"spec,omitempty"`
	// status is the observed state of the MachineHealthCheck.
	// +optional
	Status MachineHealthCheckStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (m *MachineHealthCheck) GetConditions() Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *MachineHealthCheck) SetConditions(conditions Conditions) { m.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *MachineHealthCheck) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *MachineHealthCheck) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &MachineHealthCheckV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// MachineHealthCheckList is a list of MachineHealthChecks.
type MachineHealthCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineHealthCheck `json:"items"`
}

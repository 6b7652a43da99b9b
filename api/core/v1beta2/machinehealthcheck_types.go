package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineHealthCheckSpec is the desired state of a MachineHealthCheck.
// +kubebuilder:validation:XValidation:rule="has(self.selector) && ((has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0))",message="selector must not be empty: an empty selector would check every Machine of the Cluster",fieldPath=".selector"
type MachineHealthCheckSpec struct {
	// clusterName is the name of the Cluster the checked Machines belong to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName,omitempty"`

	// selector selects the Machines to check.
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`

	// checks are the checks that find a Machine unhealthy.
	// +optional
	Checks MachineHealthCheckChecks `json:"checks,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation MachineHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineHealthCheckChecks are the checks that find a Machine unhealthy.
// +kubebuilder:validation:MinProperties=1
type MachineHealthCheckChecks struct {
	// nodeStartupTimeoutSeconds is how long a Machine may take to get a Node; 0 disables the check.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeStartupTimeoutSeconds *int32 `json:"nodeStartupTimeoutSeconds,omitempty"`

	// unhealthyNodeConditions are Node conditions that make the Machine unhealthy when they last long enough.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyNodeConditions []UnhealthyNodeCondition `json:"unhealthyNodeConditions,omitempty"`

	// unhealthyMachineConditions are Machine conditions that make the Machine unhealthy when they last long
	// enough.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
}

// MachineHealthCheckRemediation says when and how unhealthy Machines are remediated.
// +kubebuilder:validation:MinProperties=1
type MachineHealthCheckRemediation struct {
	// triggerIf limits remediation to when the number of unhealthy Machines is in bounds.
	// +optional
	TriggerIf MachineHealthCheckRemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`

	// templateRef is a remediation template of an external remediation provider.
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineHealthCheckRemediationTriggerIf limits remediation to when the number of unhealthy Machines is in
// bounds.
// +kubebuilder:validation:MinProperties=1
type MachineHealthCheckRemediationTriggerIf struct {
	// unhealthyLessThanOrEqualTo remediates only while at most this many (or this percentage of) Machines are
	// unhealthy.
	// +optional
	UnhealthyLessThanOrEqualTo *intstr.IntOrString `json:"unhealthyLessThanOrEqualTo,omitempty"`

	// unhealthyInRange remediates only while the number of unhealthy Machines is in this range, "[a-b]".
	// +optional
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	UnhealthyInRange string `json:"unhealthyInRange,omitempty"`
}

// MachineHealthCheckRemediationTemplateReference references a remediation template.
type MachineHealthCheckRemediationTemplateReference struct {
	// kind of the template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind,omitempty"`

	// name of the template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// apiVersion of the template, group/version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[a-z]([-a-z0-9]*[a-z0-9])?$`
	APIVersion string `json:"apiVersion,omitempty"`
}

// UnhealthyNodeCondition is a Node condition that makes a Machine unhealthy when it lasts timeoutSeconds.
type UnhealthyNodeCondition struct {
	// type of the Node condition.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +required
	Type corev1.NodeConditionType `json:"type,omitempty"`

	// status of the Node condition.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +required
	Status corev1.ConditionStatus `json:"status,omitempty"`

	// timeoutSeconds is how long the condition must last.
	// +required
	// +kubebuilder:validation:Minimum=0
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// UnhealthyMachineCondition is a Machine condition that makes a Machine unhealthy when it lasts
// timeoutSeconds.
type UnhealthyMachineCondition struct {
	// type of the Machine condition.
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!(self in ['Ready','Available','HealthCheckSucceeded','OwnerRemediated','ExternallyRemediated'])",message="type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated"
	// +required
	Type string `json:"type,omitempty"`

	// status of the Machine condition.
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status,omitempty"`

	// timeoutSeconds is how long the condition must last.
	// +required
	// +kubebuilder:validation:Minimum=0
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// MachineHealthCheckStatus is the observed state of a MachineHealthCheck.
// +kubebuilder:validation:MinProperties=1
type MachineHealthCheckStatus struct {
	// conditions of the MachineHealthCheck.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// expectedMachines is the number of Machines the selector selects.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ExpectedMachines *int32 `json:"expectedMachines,omitempty"`

	// currentHealthy is the number of healthy Machines.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CurrentHealthy *int32 `json:"currentHealthy,omitempty"`

	// remediationsAllowed is how many more Machines may be remediated.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RemediationsAllowed *int32 `json:"remediationsAllowed,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// targets are the names of the Machines checked.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Targets []string `json:"targets,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *MachineHealthCheckDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachineHealthCheckDeprecatedStatus groups the status fields that go away with v1beta1.
type MachineHealthCheckDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *MachineHealthCheckV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachineHealthCheckV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type MachineHealthCheckV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinehealthchecks,shortName=mhc;mhcs,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.expectedMachines",description="Number of machines currently monitored"
// +kubebuilder:printcolumn:name="Healthy",type="integer",JSONPath=".status.currentHealthy",description="Current observed healthy machines"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineHealthCheck"

// MachineHealthCheck remediates the unhealthy Machines it selects.
type MachineHealthCheck struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the MachineHealthCheck.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the MachineHealthCheck.
	// +required
	Spec MachineHealthCheckSpec `json:"spec,omitempty,omitzero"`

	// status of the MachineHealthCheck.
	// +optional
	Status MachineHealthCheckStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachineHealthCheckList is a list of MachineHealthChecks.
type MachineHealthCheckList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineHealthCheck `json:"items"`
}

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineDrainRuleDrainBehavior says how the Pods a MachineDrainRule selects are drained.
// +kubebuilder:validation:Enum=Drain;Skip;WaitCompleted
type MachineDrainRuleDrainBehavior string

const (
	// MachineDrainRuleDrainBehaviorDrain evicts the Pods, in the order of spec.drain.order.
	MachineDrainRuleDrainBehaviorDrain MachineDrainRuleDrainBehavior = "Drain"
	// MachineDrainRuleDrainBehaviorSkip leaves the Pods alone.
	MachineDrainRuleDrainBehaviorSkip MachineDrainRuleDrainBehavior = "Skip"
	// MachineDrainRuleDrainBehaviorWaitCompleted does not evict the Pods but waits for them to complete.
	MachineDrainRuleDrainBehaviorWaitCompleted MachineDrainRuleDrainBehavior = "WaitCompleted"
)

// MachineDrainRuleSpec is the desired state of a MachineDrainRule.
type MachineDrainRuleSpec struct {
	// drain says how the selected Pods are drained.
	// +required
	Drain MachineDrainRuleDrainConfig `json:"drain,omitempty,omitzero"`

	// machines selects the Machines whose drain the rule applies to (any entry matching is enough); every
	// Machine of the namespace when empty.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="entries in machines must be unique"
	Machines []MachineDrainRuleMachineSelector `json:"machines,omitempty"`

	// pods selects the Pods the rule applies to (any entry matching is enough); every Pod when empty.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="entries in pods must be unique"
	Pods []MachineDrainRulePodSelector `json:"pods,omitempty"`
}

// MachineDrainRuleDrainConfig is the drain behavior and order of the selected Pods.
type MachineDrainRuleDrainConfig struct {
	// behavior is Drain, Skip or WaitCompleted.
	// +required
	Behavior MachineDrainRuleDrainBehavior `json:"behavior,omitempty"`

	// order orders the eviction of Pods with behavior Drain: lower orders are evicted first; 0 when empty.
	// +optional
	Order *int32 `json:"order,omitempty"`
}

// MachineDrainRuleMachineSelector selects Machines by their labels and their Cluster's labels.
// +kubebuilder:validation:MinProperties=1
type MachineDrainRuleMachineSelector struct {
	// selector is a label selector of Machines; every Machine when empty.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// clusterSelector is a label selector of the Machines' Clusters; every Cluster when empty.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
}

// MachineDrainRulePodSelector selects Pods by their labels and their namespace's labels.
// +kubebuilder:validation:MinProperties=1
type MachineDrainRulePodSelector struct {
	// selector is a label selector of Pods; every Pod when empty.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// namespaceSelector is a label selector of the Pods' namespaces; every namespace when empty.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinedrainrules,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="Behavior",type="string",JSONPath=".spec.drain.behavior",description="Drain behavior"
// +kubebuilder:printcolumn:name="Order",type="string",JSONPath=".spec.drain.order",description="Drain order"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of the MachineDrainRule"

// MachineDrainRule tells the drain of the Machines it selects what to do with the Pods it selects.
type MachineDrainRule struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the MachineDrainRule.
	// +required
	metav1.ObjectMeta `json:"metadata"`

	// spec of the MachineDrainRule.
	// +required
	Spec MachineDrainRuleSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// MachineDrainRuleList is a list of MachineDrainRules.
type MachineDrainRuleList struct {
	metav1.TypeMeta `json:",inline"`
	// +required
	metav1.ListMeta `json:"metadata"`
	Items           []MachineDrainRule `json:"items"`
}

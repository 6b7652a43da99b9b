package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// LocalMachinePoolFinalizer keeps a LocalMachinePool until the Nodes of its instances are removed from the
// workload cluster.
const LocalMachinePoolFinalizer = "localmachinepool.infrastructure.cluster.x-k8s.io"

// LocalMachinePoolSpec is the desired state of a LocalMachinePool. The number of instances is the owning
// MachinePool's spec.replicas.
type LocalMachinePoolSpec struct {
	// providerIDList are the provider IDs of the pool's instances whose Nodes are registered
	// (local://<namespace>/<cluster>/<instance>); the provider sets it, and the MachinePool copies it.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`
}

// LocalMachinePoolStatus is the observed state of a LocalMachinePool.
type LocalMachinePoolStatus struct {
	// ready says that the pool's instances were all registered as Nodes once (v1beta1 contract); it is never
	// reset afterwards: replicas and conditions report the current state.
	// +optional
	Ready bool `json:"ready"`

	// initialization reports the v1beta2 contract's initialization fields.
	// +optional
	Initialization *LocalMachinePoolInitializationStatus `json:"initialization,omitempty"`

	// replicas is how many instances of the pool have a registered Node.
	// +optional
	Replicas int32 `json:"replicas"`

	// conditions are the v1beta1 conditions of the LocalMachinePool: Ready and NodesRegistered.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 groups the v1beta2 conditions: Ready, NodesRegistered and Paused.
	// +optional
	V1Beta2 *LocalMachinePoolV1Beta2Status `json:"v1beta2,omitempty"`
}

// LocalMachinePoolInitializationStatus is the initialization block of the v1beta2 InfraMachinePool contract.
type LocalMachinePoolInitializationStatus struct {
	// provisioned is true once the pool's instances were all registered; it is never reset afterwards.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// LocalMachinePoolV1Beta2Status holds the v1beta2 conditions of a LocalMachinePool.
type LocalMachinePoolV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the LocalMachinePool.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localmachinepools,shortName=lmp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this LocalMachinePool belongs"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Instances with a registered Node"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Whether the pool's Nodes have been registered"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalMachinePool was created"

// LocalMachinePool is the infrastructure of a MachinePool with the local provider: one simulated Node per
// replica of the MachinePool, in the workload cluster of its LocalCluster.
type LocalMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalMachinePool.
	// +optional
	Spec LocalMachinePoolSpec `json:"spec,omitempty"`
	// status is the observed state of the LocalMachinePool.
	// +optional
	Status LocalMachinePoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LocalMachinePoolList is a list of LocalMachinePools.
type LocalMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachinePool `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (m *LocalMachinePool) GetConditions() clusterv1.Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *LocalMachinePool) SetConditions(conditions clusterv1.Conditions) {
	m.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *LocalMachinePool) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *LocalMachinePool) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &LocalMachinePoolV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// LocalMachinePoolTemplateSpec is the desired state of a LocalMachinePoolTemplate.
type LocalMachinePoolTemplateSpec struct {
	// template is what LocalMachinePools created from this template look like.
	Template LocalMachinePoolTemplateResource `json:"template"`
}

// LocalMachinePoolTemplateResource is the metadata and spec of the LocalMachinePools created from a template.
type LocalMachinePoolTemplateResource struct {
	// metadata holds the labels and annotations given to the LocalMachinePools created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the spec of the LocalMachinePools created from the template. Leave providerIDList empty.
	Spec LocalMachinePoolSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localmachinepooltemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalMachinePoolTemplate was created"

// LocalMachinePoolTemplate is a template for LocalMachinePools, used by ClusterClasses' machinePools.
type LocalMachinePoolTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalMachinePoolTemplate.
	// +optional
	Spec LocalMachinePoolTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// LocalMachinePoolTemplateList is a list of LocalMachinePoolTemplates.
type LocalMachinePoolTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachinePoolTemplate `json:"items"`
}

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// LocalMachineFinalizer keeps a LocalMachine until its Node is removed from the workload cluster.
const LocalMachineFinalizer = "localmachine.infrastructure.cluster.x-k8s.io"

// LeaveEndpointHookAnnotation is the pre-terminate hook the provider puts on the control plane Machines it
// runs. When such a Machine is deleted, the provider takes its kube-apiserver out of the cluster's
// endpoint and stops it gracefully, then removes the hook; the kubeadm control plane provider removes the
// Machine's etcd member after the other pre-terminate hooks are gone, so that no client of the endpoint
// has a request in flight on an API server whose etcd member is removed.
const LeaveEndpointHookAnnotation = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/local-leave-endpoint"

// ProviderIDPrefix starts the provider ID of every LocalMachine: local://<namespace>/<cluster>/<machine>.
const ProviderIDPrefix = "local://"

// NodeReadyAnnotation on a LocalMachine sets the Ready condition its simulated Node reports, to make the
// Node unhealthy in tests and demonstrations (for example of MachineHealthCheck): "False" makes the
// simulated kubelet report NotReady; "Unknown" makes it stop reporting (no status updates, no lease
// renewals) with Ready Unknown, as the node lifecycle controller marks a Node whose kubelet is gone.
// Without the annotation, or with "True", the Node is Ready.
const NodeReadyAnnotation = "local.infrastructure.cluster.x-k8s.io/node-ready"

// LocalMachineSpec is the desired state of a LocalMachine.
type LocalMachineSpec struct {
	// providerID is the ID of the machine's Node, local://<namespace>/<cluster>/<machine>; the provider sets
	// it once the Node is registered.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID *string `json:"providerID,omitempty"`

	// startupDelay is how long the simulated machine takes to boot: the Node registers this long after the
	// cluster infrastructure and the bootstrap data are ready. Zero (the default) registers it at once.
	// +optional
	StartupDelay *metav1.Duration `json:"startupDelay,omitempty"`
}

// LocalMachineStatus is the observed state of a LocalMachine.
type LocalMachineStatus struct {
	// ready says that the machine's Node has been registered in the workload cluster (v1beta1 contract). It
	// is never reset afterwards: conditions report the current state.
	// +optional
	Ready bool `json:"ready"`

	// initialization reports the v1beta2 contract's initialization fields.
	// +optional
	Initialization *LocalMachineInitializationStatus `json:"initialization,omitempty"`

	// startupStartTime is when the simulated start-up began: when the cluster infrastructure and the
	// bootstrap data were first seen ready. The Node registers spec.startupDelay later.
	// +optional
	StartupStartTime *metav1.Time `json:"startupStartTime,omitempty"`

	// failureDomain is the failure domain the machine was placed in: its Machine's spec.failureDomain (the
	// Node's topology.kubernetes.io/zone label).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain *string `json:"failureDomain,omitempty"`

	// addresses are the machine's addresses: InternalIP 127.0.0.1 and its Hostname.
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureReason is set when the LocalMachine hit a problem that cannot be fixed without recreating it,
	// for example a spec.providerID that is not this machine's.
	// +optional
	FailureReason *clusterv1.MachineStatusError `json:"failureReason,omitempty"`

	// failureMessage describes the terminal problem of failureReason.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions are the v1beta1 conditions of the LocalMachine: Ready and NodeRegistered.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 groups the v1beta2 conditions: Ready, NodeRegistered and Paused.
	// +optional
	V1Beta2 *LocalMachineV1Beta2Status `json:"v1beta2,omitempty"`
}

// LocalMachineInitializationStatus is the initialization block of the v1beta2 InfraMachine contract.
type LocalMachineInitializationStatus struct {
	// provisioned is true once the machine's Node has been registered; it is never reset afterwards.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// LocalMachineV1Beta2Status holds the v1beta2 conditions of a LocalMachine.
type LocalMachineV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the LocalMachine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localmachines,shortName=lma,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this LocalMachine belongs"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this LocalMachine"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID of the machine's Node"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Whether the machine's Node has been registered"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalMachine was created"

// LocalMachine is a simulated machine: a Node registered in its workload cluster, with a Ready condition,
// lease heartbeats and a simulated kubelet API, but no containers. A control plane LocalMachine also runs
// an etcd member and a kube-apiserver of the workload cluster, configured from its kubeadm bootstrap data.
type LocalMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalMachine.
	// +optional
	Spec LocalMachineSpec `json:"spec,omitempty"`
	// status is the observed state of the LocalMachine.
	// +optional
	Status LocalMachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LocalMachineList is a list of LocalMachines.
type LocalMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalMachine `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (m *LocalMachine) GetConditions() clusterv1.Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *LocalMachine) SetConditions(conditions clusterv1.Conditions) {
	m.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *LocalMachine) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *LocalMachine) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &LocalMachineV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

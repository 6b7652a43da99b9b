package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// LocalClusterFinalizer keeps a LocalCluster until its processes are stopped and its data is removed.
const LocalClusterFinalizer = "localcluster.infrastructure.cluster.x-k8s.io"

// DataDirAnnotation records on a LocalCluster the absolute path of the directory that holds its workload
// cluster's data (etcd's data, certificates, ports), on the machine of the provider that runs it. The
// provider writes it. Being metadata, it travels with the LocalCluster when `clusterctl move` moves it to
// another management cluster: the provider there, when it runs on the same machine, takes the data over
// from that directory, so the workload cluster keeps its objects, its Nodes and its endpoint.
const DataDirAnnotation = "local.infrastructure.cluster.x-k8s.io/data-dir"

// LocalClusterSpec is the desired state of a LocalCluster.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneEndpoint) || size(oldSelf.controlPlaneEndpoint.host) == 0 || oldSelf.controlPlaneEndpoint.port == 0 || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)",message="controlPlaneEndpoint cannot be changed once host and port are set"
type LocalClusterSpec struct {
	// controlPlaneEndpoint is where the workload cluster's API serves (a load balancer in front of the
	// control plane machines' kube-apiservers). The provider sets it to
	// 127.0.0.1 and a free port when it is empty; a port chosen here is used as it is. The host must be a
	// loopback address (127.0.0.1 or localhost): the API server listens only there.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// failureDomains are the failure domains the cluster offers to its Machines; they are reported as they
	// are in status.failureDomains. Every machine runs on the same host, so they only label Nodes
	// (topology.kubernetes.io/zone) and spread Machines the way a real provider would.
	// +optional
	FailureDomains clusterv1.FailureDomains `json:"failureDomains,omitempty"`
}

// LocalClusterStatus is the observed state of a LocalCluster.
type LocalClusterStatus struct {
	// ready says that the cluster's endpoint (the load balancer in front of its control plane machines' API
	// servers) has been started (v1beta1 contract). It is never reset afterwards: conditions report the
	// current state.
	// +optional
	Ready bool `json:"ready"`

	// initialization reports the v1beta2 contract's initialization fields.
	// +optional
	Initialization *LocalClusterInitializationStatus `json:"initialization,omitempty"`

	// failureDomains are the failure domains of spec.failureDomains, once the cluster is provisioned.
	// +optional
	FailureDomains clusterv1.FailureDomains `json:"failureDomains,omitempty"`

	// failureReason is set when the LocalCluster hit a problem that cannot be fixed without recreating it,
	// for example a control plane endpoint that is not a loopback address.
	// +optional
	FailureReason *clusterv1.ClusterStatusError `json:"failureReason,omitempty"`

	// failureMessage describes the terminal problem of failureReason.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions are the v1beta1 conditions of the LocalCluster: Ready and ProcessesRunning.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 groups the v1beta2 conditions: Ready, ProcessesRunning and Paused.
	// +optional
	V1Beta2 *LocalClusterV1Beta2Status `json:"v1beta2,omitempty"`
}

// LocalClusterInitializationStatus is the initialization block of the v1beta2 InfraCluster contract.
type LocalClusterInitializationStatus struct {
	// provisioned is true once the cluster's endpoint has been started; it is never reset afterwards.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// LocalClusterV1Beta2Status holds the v1beta2 conditions of a LocalCluster.
type LocalClusterV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the LocalCluster.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localclusters,shortName=lcl,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this LocalCluster belongs"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Whether the workload control plane has been provisioned"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Host of the workload kube-apiserver"
// +kubebuilder:printcolumn:name="Port",type="integer",JSONPath=".spec.controlPlaneEndpoint.port",description="Port of the workload kube-apiserver"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the LocalCluster was created"

// LocalCluster is the infrastructure of a workload cluster run on the provider's machine: its endpoint, a
// load balancer on a loopback port in front of the API servers of its control plane LocalMachines.
type LocalCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalCluster.
	// +optional
	Spec LocalClusterSpec `json:"spec,omitempty"`
	// status is the observed state of the LocalCluster.
	// +optional
	Status LocalClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LocalClusterList is a list of LocalClusters.
type LocalClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalCluster `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (c *LocalCluster) GetConditions() clusterv1.Conditions { return c.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (c *LocalCluster) SetConditions(conditions clusterv1.Conditions) {
	c.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (c *LocalCluster) GetV1Beta2Conditions() []metav1.Condition {
	if c.Status.V1Beta2 == nil {
		return nil
	}
	return c.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (c *LocalCluster) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &LocalClusterV1Beta2Status{}
	}
	c.Status.V1Beta2.Conditions = conditions
}

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterPhase is a simple, high-level summary of where a Cluster is in its lifecycle.
type ClusterPhase string

// The phases of a Cluster.
const (
	// ClusterPhasePending is the first state of a Cluster, before its infrastructure is provisioned.
	ClusterPhasePending = ClusterPhase("Pending")
	// ClusterPhaseProvisioning means the infrastructure has been created and is being provisioned.
	ClusterPhaseProvisioning = ClusterPhase("Provisioning")
	// ClusterPhaseProvisioned means the infrastructure is ready and the control plane endpoint is known.
	ClusterPhaseProvisioned = ClusterPhase("Provisioned")
	// ClusterPhaseDeleting means the Cluster and its descendants are being deleted.
	ClusterPhaseDeleting = ClusterPhase("Deleting")
	// ClusterPhaseFailed means the Cluster hit a terminal failure that needs a user.
	ClusterPhaseFailed = ClusterPhase("Failed")
	// ClusterPhaseUnknown means the phase cannot be determined.
	ClusterPhaseUnknown = ClusterPhase("Unknown")
)

// ClusterSpec is the desired state of a Cluster.
type ClusterSpec struct {
	// paused stops the reconciliation of the Cluster and of every object that belongs to it.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// clusterNetwork is the network configuration of the cluster.
	// +optional
	ClusterNetwork *ClusterNetwork `json:"clusterNetwork,omitempty"`

	// controlPlaneEndpoint is where the control plane's API server can be reached.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// controlPlaneRef is a reference to the provider-specific object that manages the control plane.
	// +optional
	ControlPlaneRef *corev1.ObjectReference `json:"controlPlaneRef,omitempty"`

	// infrastructureRef is a reference to the provider-specific object that holds the cluster's infrastructure.
	// +optional
	InfrastructureRef *corev1.ObjectReference `json:"infrastructureRef,omitempty"`

	// topology describes the cluster as a ClusterClass and its parameters; when set, the topology controller
	// creates and manages the cluster's objects.
	// +optional
	Topology *Topology `json:"topology,omitempty"`

	// availabilityGates names extra conditions that must be true before the Cluster is Available.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// Topology is a Cluster described by a ClusterClass and the values of its parameters.
// +kubebuilder:validation:XValidation:rule=`self.version.matches(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$")`,message="version must be a valid semantic version, for example v1.31.0",fieldPath=".version"
type Topology struct {
	// class is the name of the ClusterClass the Cluster is created from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Class string `json:"class"`

	// classNamespace is the namespace of the ClusterClass; the Cluster's namespace when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	ClassNamespace string `json:"classNamespace,omitempty"`

	// version is the Kubernetes version of the cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version"`

	// rolloutAfter is deprecated and has no effect.
	// +optional
	RolloutAfter *metav1.Time `json:"rolloutAfter,omitempty"`

	// controlPlane describes the cluster's control plane.
	// +optional
	ControlPlane ControlPlaneTopology `json:"controlPlane,omitempty"`

	// workers lists the cluster's groups of worker machines.
	// +optional
	Workers *WorkersTopology `json:"workers,omitempty"`

	// variables are values for the variables that the ClusterClass defines.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=definitionFrom
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterVariable `json:"variables,omitempty"`
}

// ControlPlaneTopology describes the control plane of a managed topology.
type ControlPlaneTopology struct {
	// metadata is added to the control plane object and its Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// replicas is the number of control plane nodes; left to the control plane provider when empty.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// rollout configures the rollouts of the control plane. Upstream v1.14's v1beta1 field.
	// +optional
	Rollout ControlPlaneTopologyRolloutSpec `json:"rollout,omitempty,omitzero"`

	// machineHealthCheck enables and tunes the health check of control plane Machines.
	// +optional
	MachineHealthCheck *MachineHealthCheckTopology `json:"machineHealthCheck,omitempty"`

	// nodeDrainTimeout is the longest time to spend draining a node; no limit when empty.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time to wait for a node's volumes to detach; no limit when empty.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long to keep trying to delete a node once its Machine is deleting; 10s when empty.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`

	// readinessGates names extra conditions that must be true before a control plane Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// variables overrides cluster variables for the control plane.
	// +optional
	Variables *ControlPlaneVariables `json:"variables,omitempty"`

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints); they replace the class's. Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// WorkersTopology lists the groups of worker machines of a managed topology.
type WorkersTopology struct {
	// machineDeployments is a list of MachineDeployments in the cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=2000
	MachineDeployments []MachineDeploymentTopology `json:"machineDeployments,omitempty"`

	// machinePools is a list of MachinePools in the cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=2000
	MachinePools []MachinePoolTopology `json:"machinePools,omitempty"`
}

// ControlPlaneTopologyRolloutSpec configures the rollouts of a topology's control plane.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyRolloutSpec struct {
	// after replaces every control plane Machine created before this time, even when nothing else changed
	// (the control plane's rolloutAfter), for example "2023-03-09T09:00:00Z".
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
}

// MachineDeploymentTopology is one MachineDeployment of a managed topology.
type MachineDeploymentTopology struct {
	// metadata is added to the MachineDeployment and its Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// class is the name of the MachineDeploymentClass in the ClusterClass.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class"`

	// name is unique within the topology and used to name the MachineDeployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// failureDomain is the failure domain the Machines are created in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain *string `json:"failureDomain,omitempty"`

	// replicas is the number of worker nodes; left to the MachineDeployment defaults when empty.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// rollout configures the rollouts of the MachineDeployment's Machines. Upstream v1.14's v1beta1 field.
	// +optional
	Rollout MachineDeploymentTopologyRolloutSpec `json:"rollout,omitempty,omitzero"`

	// machineHealthCheck enables and tunes the health check of this MachineDeployment's Machines.
	// +optional
	MachineHealthCheck *MachineHealthCheckTopology `json:"machineHealthCheck,omitempty"`

	// nodeDrainTimeout is the longest time to spend draining a node; no limit when empty.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time to wait for a node's volumes to detach; no limit when empty.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long to keep trying to delete a node once its Machine is deleting; 10s when empty.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`

	// minReadySeconds is how long a new node must be Ready before it counts as available.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates names extra conditions that must be true before a Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// strategy is how old Machines are replaced by new ones.
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`

	// variables overrides cluster variables for this MachineDeployment.
	// +optional
	Variables *MachineDeploymentVariables `json:"variables,omitempty"`

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints); they replace the class's. Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachineDeploymentTopologyRolloutSpec configures the rollouts of a topology's MachineDeployment.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyRolloutSpec struct {
	// after replaces every Machine created before this time, even when nothing else changed (the
	// MachineDeployment's rolloutAfter), for example "2023-03-09T09:00:00Z".
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
}

// MachineHealthCheckTopology enables and tunes a health check in a managed topology.
type MachineHealthCheckTopology struct {
	// enable turns the health check on or off; when empty it is on if the class defines one.
	// +optional
	Enable *bool `json:"enable,omitempty"`

	// MachineHealthCheckClass overrides the health check of the class.
	MachineHealthCheckClass `json:",inline"`
}

// MachinePoolTopology is one MachinePool of a managed topology.
type MachinePoolTopology struct {
	// metadata is added to the MachinePool.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// class is the name of the MachinePoolClass in the ClusterClass.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class"`

	// name is unique within the topology and used to name the MachinePool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// failureDomains are the failure domains the pool's machines may be placed in.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`

	// nodeDrainTimeout is the longest time to spend draining a node; no limit when empty.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time to wait for a node's volumes to detach; no limit when empty.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long to keep trying to delete a node once its machine is deleting; 10s when empty.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`

	// minReadySeconds is how long a new node must be Ready before it counts as available.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// replicas is the number of nodes in the pool.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// variables overrides cluster variables for this MachinePool.
	// +optional
	Variables *MachinePoolVariables `json:"variables,omitempty"`

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints); they replace the class's. Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// ClusterVariable is the value of one ClusterClass variable.
type ClusterVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// definitionFrom names the definition the value is for, when the ClusterClass's definitions of the
	// variable conflict (status.variables' definitionsConflict): "inline" for the class's own, or the name
	// of the external patch that defined it. Each definition then takes its own value (the book's
	// "Variable definition conflicts"); empty when the variable has one definition (or equal ones).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:default=""
	DefinitionFrom string `json:"definitionFrom,omitempty"`

	// value of the variable, validated against the schema the ClusterClass gives it.
	// +required
	Value apiextensionsv1.JSON `json:"value"`
}

// ControlPlaneVariables holds variable overrides for the control plane.
type ControlPlaneVariables struct {
	// overrides replace the values of cluster variables for the control plane.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=definitionFrom
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachineDeploymentVariables holds variable overrides for one MachineDeployment.
type MachineDeploymentVariables struct {
	// overrides replace the values of cluster variables for this MachineDeployment.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=definitionFrom
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachinePoolVariables holds variable overrides for one MachinePool.
type MachinePoolVariables struct {
	// overrides replace the values of cluster variables for this MachinePool.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=definitionFrom
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// ClusterNetwork is the network configuration of a cluster.
type ClusterNetwork struct {
	// apiServerPort is the port the API server binds to; 6443 when empty.
	// +optional
	APIServerPort *int32 `json:"apiServerPort,omitempty"`

	// services is the network range from which service VIPs are allocated.
	// +optional
	Services *NetworkRanges `json:"services,omitempty"`

	// pods is the network range from which pod IPs are allocated.
	// +optional
	Pods *NetworkRanges `json:"pods,omitempty"`

	// serviceDomain is the domain name of services.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ServiceDomain string `json:"serviceDomain,omitempty"`
}

// NetworkRanges is a list of CIDR blocks.
type NetworkRanges struct {
	// cidrBlocks is a list of CIDR blocks.
	// +required
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=43
	CIDRBlocks []string `json:"cidrBlocks"`
}

// String returns the CIDR blocks joined by commas.
func (n NetworkRanges) String() string {
	out := ""
	for i, b := range n.CIDRBlocks {
		if i > 0 {
			out += ","
		}
		out += b
	}
	return out
}

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// failureDomains are the failure domains that the infrastructure provider reports.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`

	// failureReason says why the Cluster hit a terminal failure. Deprecated by the v1beta2 contract.
	// +optional
	FailureReason *ClusterStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure of the Cluster. Deprecated by the v1beta2 contract.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`

	// phase is a simple summary of where the Cluster is in its lifecycle.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Deleting;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// infrastructureReady says whether the infrastructure is ready.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// controlPlaneReady says whether the control plane is initialized (the name is historical).
	// +optional
	ControlPlaneReady bool `json:"controlPlaneReady"`

	// conditions are the v1beta1 conditions of the Cluster.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *ClusterV1Beta2Status `json:"v1beta2,omitempty"`
}

// ClusterV1Beta2Status is the part of a Cluster's status that the v1beta2 API adds.
type ClusterV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the Cluster.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// controlPlane groups the replica counters of the control plane.
	// +optional
	ControlPlane *ClusterControlPlaneStatus `json:"controlPlane,omitempty"`

	// workers groups the replica counters of the worker Machines.
	// +optional
	Workers *WorkersStatus `json:"workers,omitempty"`
}

// ClusterControlPlaneStatus holds the replica counters of a Cluster's control plane.
type ClusterControlPlaneStatus struct {
	// desiredReplicas is the number of control plane Machines wanted.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// replicas is the number of control plane Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// upToDateReplicas is the number of control plane Machines that are up to date.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// readyReplicas is the number of control plane Machines that are Ready.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// availableReplicas is the number of control plane Machines that are Available.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// versions is the aggregated Kubernetes versions in this control plane.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// upgradePlan are the versions the control plane goes through to reach the topology's version.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	UpgradePlan []StatusUpgradePlanVersion `json:"upgradePlan,omitempty"`
}

// WorkersStatus holds the replica counters of a Cluster's worker Machines.
type WorkersStatus struct {
	// desiredReplicas is the number of worker Machines wanted.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// replicas is the number of worker Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// upToDateReplicas is the number of worker Machines that are up to date.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// readyReplicas is the number of worker Machines that are Ready.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// availableReplicas is the number of worker Machines that are Available.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// versions is the aggregated Kubernetes versions in cluster workers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// upgradePlan are the versions the workers go through to reach the topology's version.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	UpgradePlan []StatusUpgradePlanVersion `json:"upgradePlan,omitempty"`
}

// ClusterStatusError is the kind of a Cluster's terminal failure.
type ClusterStatusError string

// The kinds of terminal Cluster failure.
const (
	// InvalidConfigurationClusterError means the Cluster's configuration cannot work.
	InvalidConfigurationClusterError ClusterStatusError = "InvalidConfiguration"
	// UnsupportedChangeClusterError means a change to the Cluster's spec is not supported.
	UnsupportedChangeClusterError ClusterStatusError = "UnsupportedChange"
	// CreateClusterError means creating the cluster failed.
	CreateClusterError ClusterStatusError = "CreateError"
	// UpdateClusterError means updating the cluster failed.
	UpdateClusterError ClusterStatusError = "UpdateError"
	// DeleteClusterError means deleting the cluster failed.
	DeleteClusterError ClusterStatusError = "DeleteError"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,shortName=cl,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".spec.topology.class",description="ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Cluster"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.topology.version",description="Kubernetes version associated with this Cluster"

// Cluster is a Kubernetes cluster managed by Cluster API.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || !has(oldSelf.spec.topology) || has(self.spec.topology)",message="spec.topology cannot be removed from a Cluster that uses a ClusterClass"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Cluster.
	// +optional
	Spec ClusterSpec `json:"spec,omitempty"`
	// status is the observed state of the Cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (c *Cluster) GetConditions() Conditions { return c.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (c *Cluster) SetConditions(conditions Conditions) { c.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (c *Cluster) GetV1Beta2Conditions() []metav1.Condition {
	if c.Status.V1Beta2 == nil {
		return nil
	}
	return c.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (c *Cluster) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &ClusterV1Beta2Status{}
	}
	c.Status.V1Beta2.Conditions = conditions
}

// GetClassKey returns the namespace and name of the Cluster's ClusterClass, defaulting the namespace to the
// Cluster's own.
func (c *Cluster) GetClassKey() (namespace, name string) {
	if c.Spec.Topology == nil {
		return "", ""
	}
	namespace = c.Spec.Topology.ClassNamespace
	if namespace == "" {
		namespace = c.Namespace
	}
	return namespace, c.Spec.Topology.Class
}

// +kubebuilder:object:root=true

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterSpec is the desired state of a Cluster.
// +kubebuilder:validation:MinProperties=1
type ClusterSpec struct {
	// paused stops the reconciliation of the Cluster and its objects.
	// +optional
	Paused *bool `json:"paused,omitempty"`

	// clusterNetwork is the Cluster's network configuration.
	// +optional
	ClusterNetwork ClusterNetwork `json:"clusterNetwork,omitempty,omitzero"`

	// controlPlaneEndpoint is the endpoint of the Cluster's API server.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// controlPlaneRef references the control plane provider's object.
	// +optional
	ControlPlaneRef ContractVersionedObjectReference `json:"controlPlaneRef,omitempty,omitzero"`

	// infrastructureRef references the infrastructure provider's cluster object.
	// +optional
	InfrastructureRef ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`

	// topology makes a managed topology of the Cluster from a ClusterClass.
	// +optional
	Topology Topology `json:"topology,omitempty,omitzero"`

	// availabilityGates are extra conditions that must hold before the Cluster is Available.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// ClusterAvailabilityGate names an extra condition that must hold before a Cluster is Available.
type ClusterAvailabilityGate struct {
	// conditionType is the type of a condition in the Cluster's status.conditions.
	// +required
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType,omitempty"`

	// polarity of the condition: Positive (the default) or Negative.
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// Topology is the managed topology of a Cluster made from a ClusterClass.
// +kubebuilder:validation:XValidation:rule=`!has(self.version) || self.version.matches(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")`,message="version must be a valid semantic version, for example v1.31.0",fieldPath=".version"
type Topology struct {
	// classRef references the ClusterClass.
	// +required
	ClassRef ClusterClassRef `json:"classRef,omitempty,omitzero"`

	// version is the Kubernetes version of the Cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// controlPlane is the topology of the control plane.
	// +optional
	ControlPlane ControlPlaneTopology `json:"controlPlane,omitempty,omitzero"`

	// workers is the topology of the workers.
	// +optional
	Workers WorkersTopology `json:"workers,omitempty,omitzero"`

	// variables are the values of the ClusterClass's variables.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterVariable `json:"variables,omitempty"`
}

// ClusterClassRef references a ClusterClass.
type ClusterClassRef struct {
	// name of the ClusterClass.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// namespace of the ClusterClass; the Cluster's when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// ControlPlaneTopology is the topology of a Cluster's control plane.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopology struct {
	// metadata put on the control plane object and its Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// replicas is the number of control plane Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// rollout says when the control plane Machines are replaced.
	// +optional
	Rollout ControlPlaneTopologyRolloutSpec `json:"rollout,omitempty,omitzero"`

	// healthCheck overrides the ClusterClass's health check of the control plane.
	// +optional
	HealthCheck ControlPlaneTopologyHealthCheck `json:"healthCheck,omitempty,omitzero"`

	// deletion holds the timeouts of the control plane Machines' deletion.
	// +optional
	Deletion ControlPlaneTopologyMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the control plane Machines' Nodes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`

	// readinessGates are extra conditions of the control plane Machines.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// variables override the Cluster's variables for the control plane.
	// +optional
	Variables ControlPlaneVariables `json:"variables,omitempty,omitzero"`
}

// ControlPlaneTopologyRolloutSpec says when the control plane Machines are replaced.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyRolloutSpec struct {
	// after replaces every control plane Machine created before this time.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
}

// ControlPlaneTopologyHealthCheck is the health check of a topology's control plane.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyHealthCheck struct {
	// enabled turns the health check on or off; on when the ClusterClass defines one.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// checks are the checks that find a Machine unhealthy.
	// +optional
	Checks ControlPlaneTopologyHealthCheckChecks `json:"checks,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation ControlPlaneTopologyHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// ControlPlaneTopologyHealthCheckChecks are the checks that find a control plane Machine unhealthy.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyHealthCheckChecks struct {
	// nodeStartupTimeoutSeconds is how long a Machine may take to get a Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeStartupTimeoutSeconds *int32 `json:"nodeStartupTimeoutSeconds,omitempty"`

	// unhealthyNodeConditions are Node conditions that make the Machine unhealthy.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyNodeConditions []UnhealthyNodeCondition `json:"unhealthyNodeConditions,omitempty"`

	// unhealthyMachineConditions are Machine conditions that make the Machine unhealthy.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
}

// ControlPlaneTopologyHealthCheckRemediation says when and how unhealthy control plane Machines are
// remediated.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyHealthCheckRemediation struct {
	// triggerIf limits remediation to when the number of unhealthy Machines is in bounds.
	// +optional
	TriggerIf ControlPlaneTopologyHealthCheckRemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`

	// templateRef is a remediation template of an external remediation provider.
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// ControlPlaneTopologyHealthCheckRemediationTriggerIf limits remediation to when the number of unhealthy
// Machines is in bounds.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyHealthCheckRemediationTriggerIf struct {
	// unhealthyLessThanOrEqualTo remediates only while at most this many (or this percentage of) Machines
	// are unhealthy.
	// +optional
	UnhealthyLessThanOrEqualTo *intstr.IntOrString `json:"unhealthyLessThanOrEqualTo,omitempty"`

	// unhealthyInRange remediates only while the number of unhealthy Machines is in this range, "[a-b]".
	// +optional
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	UnhealthyInRange string `json:"unhealthyInRange,omitempty"`
}

// ControlPlaneTopologyMachineDeletionSpec holds the timeouts of the control plane Machines' deletion.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneTopologyMachineDeletionSpec struct {
	// nodeDrainTimeoutSeconds bounds the drain of the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds bounds the wait for the Node's volumes to detach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds bounds the retries of deleting the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// WorkersTopology is the topology of a Cluster's workers.
// +kubebuilder:validation:MinProperties=1
type WorkersTopology struct {
	// machineDeployments are the MachineDeployments of the topology.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2000
	MachineDeployments []MachineDeploymentTopology `json:"machineDeployments,omitempty"`

	// machinePools are the MachinePools of the topology.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2000
	MachinePools []MachinePoolTopology `json:"machinePools,omitempty"`
}

// MachineDeploymentTopology is one MachineDeployment of a topology.
type MachineDeploymentTopology struct {
	// metadata put on the MachineDeployment and its Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// class is the name of the ClusterClass's MachineDeployment class.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class,omitempty"`

	// name of the MachineDeployment in the topology, unique in the Cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// failureDomain the Machines are placed in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// replicas is the number of Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// healthCheck overrides the class's health check.
	// +optional
	HealthCheck MachineDeploymentTopologyHealthCheck `json:"healthCheck,omitempty,omitzero"`

	// deletion holds the deletion order and timeouts of the Machines.
	// +optional
	Deletion MachineDeploymentTopologyMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the Machines' Nodes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`

	// minReadySeconds is how long a Node must be Ready before its Machine is Available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates are extra conditions of the Machines.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// rollout says how and when the Machines are replaced.
	// +optional
	Rollout MachineDeploymentTopologyRolloutSpec `json:"rollout,omitempty,omitzero"`

	// variables override the Cluster's variables for this MachineDeployment.
	// +optional
	Variables MachineDeploymentVariables `json:"variables,omitempty,omitzero"`
}

// MachineDeploymentTopologyHealthCheck is the health check of a topology's MachineDeployment.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyHealthCheck struct {
	// enabled turns the health check on or off; on when the class defines one.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// checks are the checks that find a Machine unhealthy.
	// +optional
	Checks MachineDeploymentTopologyHealthCheckChecks `json:"checks,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation MachineDeploymentTopologyHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineDeploymentTopologyHealthCheckChecks are the checks that find a Machine unhealthy.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyHealthCheckChecks struct {
	// nodeStartupTimeoutSeconds is how long a Machine may take to get a Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeStartupTimeoutSeconds *int32 `json:"nodeStartupTimeoutSeconds,omitempty"`

	// unhealthyNodeConditions are Node conditions that make the Machine unhealthy.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyNodeConditions []UnhealthyNodeCondition `json:"unhealthyNodeConditions,omitempty"`

	// unhealthyMachineConditions are Machine conditions that make the Machine unhealthy.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
}

// MachineDeploymentTopologyHealthCheckRemediation says when and how unhealthy Machines are remediated.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyHealthCheckRemediation struct {
	// maxInFlight is how many Machines (or what percentage) may be remediated at once.
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`

	// triggerIf limits remediation to when the number of unhealthy Machines is in bounds.
	// +optional
	TriggerIf MachineDeploymentTopologyHealthCheckRemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`

	// templateRef is a remediation template of an external remediation provider.
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineDeploymentTopologyHealthCheckRemediationTriggerIf limits remediation to when the number of
// unhealthy Machines is in bounds.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyHealthCheckRemediationTriggerIf struct {
	// unhealthyLessThanOrEqualTo remediates only while at most this many (or this percentage of) Machines
	// are unhealthy.
	// +optional
	UnhealthyLessThanOrEqualTo *intstr.IntOrString `json:"unhealthyLessThanOrEqualTo,omitempty"`

	// unhealthyInRange remediates only while the number of unhealthy Machines is in this range, "[a-b]".
	// +optional
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	UnhealthyInRange string `json:"unhealthyInRange,omitempty"`
}

// MachineDeploymentTopologyMachineDeletionSpec holds the deletion order and timeouts of a topology
// MachineDeployment's Machines.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyMachineDeletionSpec struct {
	// order is Random (the default), Newest or Oldest.
	// +optional
	Order MachineSetDeletionOrder `json:"order,omitempty"`

	// nodeDrainTimeoutSeconds bounds the drain of the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds bounds the wait for the Node's volumes to detach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds bounds the retries of deleting the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// MachineDeploymentTopologyRolloutSpec says how and when a topology MachineDeployment's Machines are
// replaced.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyRolloutSpec struct {
	// after replaces every Machine created before this time.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`

	// strategy of the rollout.
	// +optional
	Strategy MachineDeploymentTopologyRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// MachineDeploymentTopologyRolloutStrategy is the strategy of a rollout.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyRolloutStrategy struct {
	// type is RollingUpdate or OnDelete.
	// +required
	Type MachineDeploymentRolloutStrategyType `json:"type,omitempty"`

	// rollingUpdate bounds a RollingUpdate.
	// +optional
	RollingUpdate MachineDeploymentTopologyRolloutStrategyRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// MachineDeploymentTopologyRolloutStrategyRollingUpdate bounds a RollingUpdate.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentTopologyRolloutStrategyRollingUpdate struct {
	// maxUnavailable is how many Machines (or what percentage) may be unavailable during the rollout.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxSurge is how many Machines (or what percentage) may exist beyond replicas during the rollout.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// MachinePoolTopology is one MachinePool of a topology.
type MachinePoolTopology struct {
	// metadata put on the MachinePool.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// class is the name of the ClusterClass's MachinePool class.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class,omitempty"`

	// name of the MachinePool in the topology, unique in the Cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// failureDomains the instances may be placed in.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`

	// deletion holds the timeouts of the instances' deletion.
	// +optional
	Deletion MachinePoolTopologyMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are put on the instances' Nodes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`

	// minReadySeconds is how long a Node must be Ready before its instance is Available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// replicas is the number of instances.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// variables override the Cluster's variables for this MachinePool.
	// +optional
	Variables MachinePoolVariables `json:"variables,omitempty,omitzero"`
}

// MachinePoolTopologyMachineDeletionSpec holds the timeouts of a topology MachinePool's deletion.
// +kubebuilder:validation:MinProperties=1
type MachinePoolTopologyMachineDeletionSpec struct {
	// nodeDrainTimeoutSeconds bounds the drain of a Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`

	// nodeVolumeDetachTimeoutSeconds bounds the wait for a Node's volumes to detach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`

	// nodeDeletionTimeoutSeconds bounds the retries of deleting a Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// ClusterVariable is the value of a ClusterClass variable.
type ClusterVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// value of the variable, any JSON that the variable's schema accepts.
	// +required
	Value apiextensionsv1.JSON `json:"value,omitempty,omitzero"`
}

// ControlPlaneVariables override the Cluster's variables for the control plane.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneVariables struct {
	// overrides are the values that replace the Cluster's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachineDeploymentVariables override the Cluster's variables for a MachineDeployment.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentVariables struct {
	// overrides are the values that replace the Cluster's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachinePoolVariables override the Cluster's variables for a MachinePool.
// +kubebuilder:validation:MinProperties=1
type MachinePoolVariables struct {
	// overrides are the values that replace the Cluster's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// ClusterNetwork is a Cluster's network configuration.
// +kubebuilder:validation:MinProperties=1
type ClusterNetwork struct {
	// apiServerPort is the port the API server listens on; 6443 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	APIServerPort int32 `json:"apiServerPort,omitempty"`

	// services are the CIDR blocks of Service IPs.
	// +optional
	Services NetworkRanges `json:"services,omitempty,omitzero"`

	// pods are the CIDR blocks of Pod IPs.
	// +optional
	Pods NetworkRanges `json:"pods,omitempty,omitzero"`

	// serviceDomain is the domain of Services; "cluster.local" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ServiceDomain string `json:"serviceDomain,omitempty"`
}

// NetworkRanges are CIDR blocks.
type NetworkRanges struct {
	// cidrBlocks are the CIDR blocks.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=43
	CIDRBlocks []string `json:"cidrBlocks,omitempty"`
}

// ClusterStatus is the observed state of a Cluster.
// +kubebuilder:validation:MinProperties=1
type ClusterStatus struct {
	// conditions of the Cluster.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization says what of the Cluster's initial provisioning is done.
	// +optional
	Initialization ClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// controlPlane summarizes the control plane's replicas.
	// +optional
	ControlPlane *ClusterControlPlaneStatus `json:"controlPlane,omitempty"`

	// workers summarizes the workers' replicas.
	// +optional
	Workers *WorkersStatus `json:"workers,omitempty"`

	// failureDomains are the failure domains the infrastructure provider reports.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []FailureDomain `json:"failureDomains,omitempty"`

	// phase of the Cluster.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Deleting;Failed;Unknown
	Phase string `json:"phase,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *ClusterDeprecatedStatus `json:"deprecated,omitempty"`
}

// ClusterInitializationStatus says what of a Cluster's initial provisioning is done.
// +kubebuilder:validation:MinProperties=1
type ClusterInitializationStatus struct {
	// infrastructureProvisioned is true once the infrastructure is provisioned.
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`

	// controlPlaneInitialized is true once the control plane can accept requests.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// ClusterDeprecatedStatus groups the status fields that go away with v1beta1.
type ClusterDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *ClusterV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// ClusterStatusError is the kind of a Cluster's terminal failure (v1beta1).
type ClusterStatusError string

// ClusterV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type ClusterV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	FailureReason *ClusterStatusError `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// ClusterControlPlaneStatus summarizes a Cluster's control plane replicas.
type ClusterControlPlaneStatus struct {
	// desiredReplicas is the number of control plane Machines wanted.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// replicas is the number of control plane Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// upToDateReplicas is the number of up-to-date control plane Machines.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// readyReplicas is the number of Ready control plane Machines.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Available control plane Machines.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// versions are the Kubernetes versions of the control plane Machines, with their counts.
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

// WorkersStatus summarizes a Cluster's worker replicas.
type WorkersStatus struct {
	// desiredReplicas is the number of worker Machines wanted.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// replicas is the number of worker Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// upToDateReplicas is the number of up-to-date worker Machines.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// readyReplicas is the number of Ready worker Machines.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Available worker Machines.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// versions are the Kubernetes versions of the worker Machines, with their counts.
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

// APIEndpoint is the endpoint of an API server.
// +kubebuilder:validation:MinProperties=1
type APIEndpoint struct {
	// host is the host name or IP address.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host,omitempty"`

	// port is the TCP port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,shortName=cl,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".spec.topology.classRef.name",description="ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Cluster pass all availability checks"
// +kubebuilder:printcolumn:name="CP Desired",type=integer,JSONPath=".status.controlPlane.desiredReplicas",description="The desired number of control plane machines"
// +kubebuilder:printcolumn:name="CP Current",type="integer",JSONPath=".status.controlPlane.replicas",description="The number of control plane machines",priority=10
// +kubebuilder:printcolumn:name="CP Ready",type="integer",JSONPath=".status.controlPlane.readyReplicas",description="The number of control plane machines with Ready condition true",priority=10
// +kubebuilder:printcolumn:name="CP Available",type=integer,JSONPath=".status.controlPlane.availableReplicas",description="The number of control plane machines with Available condition true"
// +kubebuilder:printcolumn:name="CP Up-to-date",type=integer,JSONPath=".status.controlPlane.upToDateReplicas",description="The number of control plane machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="W Desired",type=integer,JSONPath=".status.workers.desiredReplicas",description="The desired number of worker machines"
// +kubebuilder:printcolumn:name="W Current",type="integer",JSONPath=".status.workers.replicas",description="The number of worker machines",priority=10
// +kubebuilder:printcolumn:name="W Ready",type="integer",JSONPath=".status.workers.readyReplicas",description="The number of worker machines with Ready condition true",priority=10
// +kubebuilder:printcolumn:name="W Available",type=integer,JSONPath=".status.workers.availableReplicas",description="The number of worker machines with Available condition true"
// +kubebuilder:printcolumn:name="W Up-to-date",type=integer,JSONPath=".status.workers.upToDateReplicas",description="The number of worker machines with UpToDate condition true"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Cluster"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.topology.version",description="Kubernetes version associated with this Cluster"

// Cluster is a Kubernetes cluster: its infrastructure, its control plane and, with a topology, its workers.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || !has(oldSelf.spec.topology) || has(self.spec.topology)",message="spec.topology cannot be removed from a Cluster that uses a ClusterClass"
type Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the Cluster.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the Cluster.
	// +required
	Spec ClusterSpec `json:"spec,omitempty,omitzero"`

	// status of the Cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// FailureDomain is a failure domain of a Cluster's infrastructure.
type FailureDomain struct {
	// name of the failure domain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// controlPlane says whether control plane Machines may be placed in it.
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`

	// attributes are the provider's attributes of the failure domain.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

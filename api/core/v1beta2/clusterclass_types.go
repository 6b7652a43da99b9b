package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterclasses,shortName=cc,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Variables Ready",type="string",JSONPath=`.status.conditions[?(@.type=="VariablesReady")].status`,description="Variables ready"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterClass"

// ClusterClass is the shape of Clusters with a managed topology: their templates, variables and patches.
type ClusterClass struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the ClusterClass.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the ClusterClass.
	// +required
	Spec ClusterClassSpec `json:"spec,omitempty,omitzero"`

	// status of the ClusterClass.
	// +optional
	Status ClusterClassStatus `json:"status,omitempty,omitzero"`
}

// ClusterClassSpec is the desired state of a ClusterClass.
type ClusterClassSpec struct {
	// availabilityGates are extra conditions that must hold before a Cluster of the class is Available.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`

	// infrastructure is the template of the infrastructure cluster.
	// +required
	Infrastructure InfrastructureClass `json:"infrastructure,omitempty,omitzero"`

	// controlPlane is the class of the control plane.
	// +required
	ControlPlane ControlPlaneClass `json:"controlPlane,omitempty,omitzero"`

	// workers are the classes of the workers.
	// +optional
	Workers WorkersClass `json:"workers,omitempty,omitzero"`

	// variables are the variables a Cluster of the class sets.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterClassVariable `json:"variables,omitempty"`

	// patches change the templates' copies from the variables.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Patches []ClusterClassPatch `json:"patches,omitempty"`

	// upgrade says how Clusters of the class are upgraded.
	// +optional
	Upgrade ClusterClassUpgrade `json:"upgrade,omitempty,omitzero"`

	// kubernetesVersions are the Kubernetes versions Clusters of the class may run, in order; the upgrade
	// plan goes through them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	KubernetesVersions []string `json:"kubernetesVersions,omitempty"`
}

// InfrastructureClass is the template of a class's infrastructure cluster.
type InfrastructureClass struct {
	// templateRef references the infrastructure cluster template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`

	// naming says how the infrastructure cluster is named.
	// +optional
	Naming InfrastructureClassNamingSpec `json:"naming,omitempty,omitzero"`
}

// ControlPlaneClass is the class of a control plane.
type ControlPlaneClass struct {
	// metadata put on the control plane object and its Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// templateRef references the control plane template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`

	// machineInfrastructure is the infrastructure template of the control plane Machines, for control
	// planes that take one.
	// +optional
	MachineInfrastructure ControlPlaneClassMachineInfrastructureTemplate `json:"machineInfrastructure,omitempty,omitzero"`

	// healthCheck is the health check of the control plane Machines.
	// +optional
	HealthCheck ControlPlaneClassHealthCheck `json:"healthCheck,omitempty,omitzero"`

	// naming says how the control plane object is named.
	// +optional
	Naming ControlPlaneClassNamingSpec `json:"naming,omitempty,omitzero"`

	// deletion holds the timeouts of the control plane Machines' deletion.
	// +optional
	Deletion ControlPlaneClassMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

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
}

// ControlPlaneClassHealthCheck is the health check of a class's control plane Machines.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassHealthCheck struct {
	// checks are the checks that find a Machine unhealthy.
	// +optional
	Checks ControlPlaneClassHealthCheckChecks `json:"checks,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation ControlPlaneClassHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// ControlPlaneClassHealthCheckChecks are the checks that find a control plane Machine unhealthy.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassHealthCheckChecks struct {
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

// ControlPlaneClassHealthCheckRemediation says when and how unhealthy control plane Machines are remediated.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassHealthCheckRemediation struct {
	// triggerIf limits remediation to when the number of unhealthy Machines is in bounds.
	// +optional
	TriggerIf ControlPlaneClassHealthCheckRemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`

	// templateRef is a remediation template of an external remediation provider.
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// ControlPlaneClassHealthCheckRemediationTriggerIf limits remediation to when the number of unhealthy
// Machines is in bounds.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassHealthCheckRemediationTriggerIf struct {
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

// ControlPlaneClassMachineDeletionSpec holds the timeouts of a class's control plane Machines' deletion.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassMachineDeletionSpec struct {
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

// ControlPlaneClassNamingSpec says how a topology's control plane object is named.
// +kubebuilder:validation:MinProperties=1
type ControlPlaneClassNamingSpec struct {
	// template of the name, with .cluster.name and .random.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
}

// InfrastructureClassNamingSpec says how a topology's infrastructure cluster is named.
// +kubebuilder:validation:MinProperties=1
type InfrastructureClassNamingSpec struct {
	// template of the name, with .cluster.name and .random.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
}

// WorkersClass are the worker classes of a ClusterClass.
// +kubebuilder:validation:MinProperties=1
type WorkersClass struct {
	// machineDeployments are the MachineDeployment classes.
	// +optional
	// +listType=map
	// +listMapKey=class
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	MachineDeployments []MachineDeploymentClass `json:"machineDeployments,omitempty"`

	// machinePools are the MachinePool classes.
	// +optional
	// +listType=map
	// +listMapKey=class
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	MachinePools []MachinePoolClass `json:"machinePools,omitempty"`
}

// MachineDeploymentClass is the class of the MachineDeployments of a topology.
type MachineDeploymentClass struct {
	// metadata put on the MachineDeployments and their Machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// class is the name of the class, unique in the ClusterClass.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class,omitempty"`

	// bootstrap is the bootstrap config template of the Machines.
	// +required
	Bootstrap MachineDeploymentClassBootstrapTemplate `json:"bootstrap,omitempty,omitzero"`

	// infrastructure is the infrastructure machine template of the Machines.
	// +required
	Infrastructure MachineDeploymentClassInfrastructureTemplate `json:"infrastructure,omitempty,omitzero"`

	// healthCheck is the health check of the Machines.
	// +optional
	HealthCheck MachineDeploymentClassHealthCheck `json:"healthCheck,omitempty,omitzero"`

	// failureDomain the Machines are placed in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// naming says how the MachineDeployments are named.
	// +optional
	Naming MachineDeploymentClassNamingSpec `json:"naming,omitempty,omitzero"`

	// deletion holds the deletion order and timeouts of the Machines.
	// +optional
	Deletion MachineDeploymentClassMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

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

	// rollout says how the Machines are replaced.
	// +optional
	Rollout MachineDeploymentClassRolloutSpec `json:"rollout,omitempty,omitzero"`
}

// MachineDeploymentClassHealthCheck is the health check of a MachineDeployment class's Machines.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassHealthCheck struct {
	// checks are the checks that find a Machine unhealthy.
	// +optional
	Checks MachineDeploymentClassHealthCheckChecks `json:"checks,omitempty,omitzero"`

	// remediation says when and how unhealthy Machines are remediated.
	// +optional
	Remediation MachineDeploymentClassHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineDeploymentClassHealthCheckChecks are the checks that find a Machine unhealthy.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassHealthCheckChecks struct {
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

// MachineDeploymentClassHealthCheckRemediation says when and how unhealthy Machines are remediated.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassHealthCheckRemediation struct {
	// maxInFlight is how many Machines (or what percentage) may be remediated at once.
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`

	// triggerIf limits remediation to when the number of unhealthy Machines is in bounds.
	// +optional
	TriggerIf MachineDeploymentClassHealthCheckRemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`

	// templateRef is a remediation template of an external remediation provider.
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineDeploymentClassHealthCheckRemediationTriggerIf limits remediation to when the number of unhealthy
// Machines is in bounds.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassHealthCheckRemediationTriggerIf struct {
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

// MachineDeploymentClassMachineDeletionSpec holds the deletion order and timeouts of a MachineDeployment
// class's Machines.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassMachineDeletionSpec struct {
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

// MachineDeploymentClassNamingSpec says how a topology's MachineDeployments are named.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassNamingSpec struct {
	// template of the name, with .cluster.name, .machineDeployment.topologyName and .random.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
}

// MachineDeploymentClassRolloutSpec says how a MachineDeployment class's Machines are replaced.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassRolloutSpec struct {
	// strategy of the rollout.
	// +optional
	Strategy MachineDeploymentClassRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// MachineDeploymentClassRolloutStrategy is the strategy of a rollout.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassRolloutStrategy struct {
	// type is RollingUpdate or OnDelete.
	// +required
	Type MachineDeploymentRolloutStrategyType `json:"type,omitempty"`

	// rollingUpdate bounds a RollingUpdate.
	// +optional
	RollingUpdate MachineDeploymentClassRolloutStrategyRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// MachineDeploymentClassRolloutStrategyRollingUpdate bounds a RollingUpdate.
// +kubebuilder:validation:MinProperties=1
type MachineDeploymentClassRolloutStrategyRollingUpdate struct {
	// maxUnavailable is how many Machines (or what percentage) may be unavailable during the rollout.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxSurge is how many Machines (or what percentage) may exist beyond replicas during the rollout.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// MachinePoolClass is the class of the MachinePools of a topology.
type MachinePoolClass struct {
	// metadata put on the MachinePools.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`

	// class is the name of the class, unique in the ClusterClass.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class,omitempty"`

	// bootstrap is the bootstrap config template of the pools.
	// +required
	Bootstrap MachinePoolClassBootstrapTemplate `json:"bootstrap,omitempty,omitzero"`

	// infrastructure is the infrastructure machine pool template of the pools.
	// +required
	Infrastructure MachinePoolClassInfrastructureTemplate `json:"infrastructure,omitempty,omitzero"`

	// failureDomains the instances may be placed in.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`

	// naming says how the MachinePools are named.
	// +optional
	Naming MachinePoolClassNamingSpec `json:"naming,omitempty,omitzero"`

	// deletion holds the timeouts of the instances' deletion.
	// +optional
	Deletion MachinePoolClassMachineDeletionSpec `json:"deletion,omitempty,omitzero"`

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
}

// MachinePoolClassMachineDeletionSpec holds the timeouts of a MachinePool class's deletion.
// +kubebuilder:validation:MinProperties=1
type MachinePoolClassMachineDeletionSpec struct {
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

// MachinePoolClassNamingSpec says how a topology's MachinePools are named.
// +kubebuilder:validation:MinProperties=1
type MachinePoolClassNamingSpec struct {
	// template of the name, with .cluster.name, .machinePool.topologyName and .random.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
}

// ClusterClassVariable is a variable of a ClusterClass.
type ClusterClassVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// required says whether a Cluster must set the variable.
	// +required
	Required *bool `json:"required,omitempty"`

	// deprecatedV1Beta1Metadata is the v1beta1 metadata of the variable, kept while v1beta1 is served.
	// +optional
	DeprecatedV1Beta1Metadata ClusterClassVariableMetadata `json:"deprecatedV1Beta1Metadata,omitempty,omitzero"`

	// schema of the variable's values.
	// +required
	Schema VariableSchema `json:"schema,omitempty,omitzero"`
}

// ClusterClassVariableMetadata is the v1beta1 metadata of a variable.
// +kubebuilder:validation:MinProperties=1
type ClusterClassVariableMetadata struct {
	// labels of the variable.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations of the variable.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// VariableSchema is the schema of a variable's values.
type VariableSchema struct {
	// openAPIV3Schema is the OpenAPI v3 schema of the values, a subset of a CRD's schema.
	// +required
	OpenAPIV3Schema JSONSchemaProps `json:"openAPIV3Schema,omitempty,omitzero"`
}

// JSONSchemaProps is the subset of a CRD's OpenAPI v3 schema that variables may use.
// +kubebuilder:validation:MinProperties=1
type JSONSchemaProps struct {
	// description of the value.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// example of a value.
	// +optional
	Example *apiextensionsv1.JSON `json:"example,omitempty"`

	// type of the value.
	// +optional
	// +kubebuilder:validation:Enum=object;array;string;integer;number;boolean
	Type string `json:"type,omitempty"`

	// properties of an object.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Properties map[string]JSONSchemaProps `json:"properties,omitempty"`

	// additionalProperties is the schema of a map's values.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AdditionalProperties *JSONSchemaProps `json:"additionalProperties,omitempty"`

	// maxProperties bounds the properties of an object.
	// +optional
	MaxProperties *int64 `json:"maxProperties,omitempty"`

	// minProperties bounds the properties of an object.
	// +optional
	MinProperties *int64 `json:"minProperties,omitempty"`

	// required are the properties an object must have.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Required []string `json:"required,omitempty"`

	// items is the schema of an array's items.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Items *JSONSchemaProps `json:"items,omitempty"`

	// maxItems bounds the items of an array.
	// +optional
	MaxItems *int64 `json:"maxItems,omitempty"`

	// minItems bounds the items of an array.
	// +optional
	MinItems *int64 `json:"minItems,omitempty"`

	// uniqueItems requires the items of an array to differ.
	// +optional
	UniqueItems *bool `json:"uniqueItems,omitempty"`

	// format of a string.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Format string `json:"format,omitempty"`

	// maxLength bounds a string.
	// +optional
	MaxLength *int64 `json:"maxLength,omitempty"`

	// minLength bounds a string.
	// +optional
	MinLength *int64 `json:"minLength,omitempty"`

	// pattern a string must match.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Pattern string `json:"pattern,omitempty"`

	// maximum bounds a number.
	// +optional
	Maximum *int64 `json:"maximum,omitempty"`

	// exclusiveMaximum excludes the maximum.
	// +optional
	ExclusiveMaximum *bool `json:"exclusiveMaximum,omitempty"`

	// minimum bounds a number.
	// +optional
	Minimum *int64 `json:"minimum,omitempty"`

	// exclusiveMinimum excludes the minimum.
	// +optional
	ExclusiveMinimum *bool `json:"exclusiveMinimum,omitempty"`

	// x-kubernetes-preserve-unknown-fields keeps fields the schema does not name.
	// +optional
	XPreserveUnknownFields *bool `json:"x-kubernetes-preserve-unknown-fields,omitempty"`

	// enum are the values allowed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Enum []apiextensionsv1.JSON `json:"enum,omitempty"`

	// default is the value when none is set.
	// +optional
	Default *apiextensionsv1.JSON `json:"default,omitempty"`

	// x-kubernetes-validations are CEL rules the value must pass.
	// +optional
	// +listType=map
	// +listMapKey=rule
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	XValidations []ValidationRule `json:"x-kubernetes-validations,omitempty"`

	// x-metadata is metadata of the variable for tools; it does not validate.
	// +optional
	XMetadata VariableSchemaMetadata `json:"x-metadata,omitempty,omitzero"`

	// x-kubernetes-int-or-string accepts an integer or a string.
	// +optional
	XIntOrString *bool `json:"x-kubernetes-int-or-string,omitempty"`

	// allOf are schemas the value must all pass.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AllOf []JSONSchemaProps `json:"allOf,omitempty"`

	// oneOf are schemas of which the value must pass exactly one.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	OneOf []JSONSchemaProps `json:"oneOf,omitempty"`

	// anyOf are schemas of which the value must pass at least one.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AnyOf []JSONSchemaProps `json:"anyOf,omitempty"`

	// not is a schema the value must not pass.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Not *JSONSchemaProps `json:"not,omitempty"`
}

// VariableSchemaMetadata is metadata of a variable's schema for tools.
// +kubebuilder:validation:MinProperties=1
type VariableSchemaMetadata struct {
	// labels of the variable.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations of the variable.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ValidationRule is a CEL rule of a variable's schema.
type ValidationRule struct {
	// rule is the CEL expression; self is the value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Rule string `json:"rule,omitempty"`

	// message is the error when the rule fails.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// messageExpression is a CEL expression of the error when the rule fails.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	MessageExpression string `json:"messageExpression,omitempty"`

	// reason of the error when the rule fails.
	// +optional
	// +kubebuilder:validation:Enum=FieldValueInvalid;FieldValueForbidden;FieldValueRequired;FieldValueDuplicate
	// +kubebuilder:default=FieldValueInvalid
	Reason FieldValueErrorReason `json:"reason,omitempty"`

	// fieldPath is the path of the field the error names.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FieldPath string `json:"fieldPath,omitempty"`
}

// FieldValueErrorReason is the reason of a failed validation rule.
type FieldValueErrorReason string

const (
	// FieldValueRequired says a required field is missing.
	FieldValueRequired FieldValueErrorReason = "FieldValueRequired"
	// FieldValueDuplicate says a value is repeated.
	FieldValueDuplicate FieldValueErrorReason = "FieldValueDuplicate"
	// FieldValueInvalid says a value is invalid.
	FieldValueInvalid FieldValueErrorReason = "FieldValueInvalid"
	// FieldValueForbidden says a field may not be set.
	FieldValueForbidden FieldValueErrorReason = "FieldValueForbidden"
)

// ClusterClassPatch changes the copies of a ClusterClass's templates.
type ClusterClassPatch struct {
	// name of the patch.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// description of the patch.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// enabledIf is a Go template that enables the patch when it renders "true".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	EnabledIf string `json:"enabledIf,omitempty"`

	// definitions are the inline patches.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Definitions []PatchDefinition `json:"definitions,omitempty"`

	// external names the Runtime SDK extensions that compute patches.
	// +optional
	External *ExternalPatchDefinition `json:"external,omitempty"`
}

// ClusterClassUpgrade says how Clusters of a class are upgraded.
// +kubebuilder:validation:MinProperties=1
type ClusterClassUpgrade struct {
	// external names Runtime SDK extensions of the upgrade.
	// +optional
	External ClusterClassUpgradeExternal `json:"external,omitempty,omitzero"`
}

// ClusterClassUpgradeExternal names Runtime SDK extensions of the upgrade.
// +kubebuilder:validation:MinProperties=1
type ClusterClassUpgradeExternal struct {
	// generateUpgradePlanExtension is the extension that computes the upgrade plan.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	GenerateUpgradePlanExtension string `json:"generateUpgradePlanExtension,omitempty"`
}

// PatchDefinition is an inline patch: JSON patches applied to the templates the selector selects.
type PatchDefinition struct {
	// selector selects the templates.
	// +required
	Selector PatchSelector `json:"selector,omitempty,omitzero"`

	// jsonPatches are applied to the selected templates.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +required
	// +listType=atomic
	JSONPatches []JSONPatch `json:"jsonPatches,omitempty"`
}

// PatchSelector selects the templates a patch applies to.
type PatchSelector struct {
	// apiVersion of the templates.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[a-z]([-a-z0-9]*[a-z0-9])?$`
	APIVersion string `json:"apiVersion,omitempty"`

	// kind of the templates.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind,omitempty"`

	// matchResources says which of the class's templates of that kind match.
	// +required
	MatchResources PatchSelectorMatch `json:"matchResources,omitempty,omitzero"`
}

// PatchSelectorMatch says which of a class's templates a patch applies to.
// +kubebuilder:validation:MinProperties=1
type PatchSelectorMatch struct {
	// controlPlane selects the control plane template.
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`

	// infrastructureCluster selects the infrastructure cluster template.
	// +optional
	InfrastructureCluster *bool `json:"infrastructureCluster,omitempty"`

	// machineDeploymentClass selects templates of MachineDeployment classes.
	// +optional
	MachineDeploymentClass *PatchSelectorMatchMachineDeploymentClass `json:"machineDeploymentClass,omitempty"`

	// machinePoolClass selects templates of MachinePool classes.
	// +optional
	MachinePoolClass *PatchSelectorMatchMachinePoolClass `json:"machinePoolClass,omitempty"`
}

// PatchSelectorMatchMachineDeploymentClass selects MachineDeployment classes by name.
type PatchSelectorMatchMachineDeploymentClass struct {
	// names of the classes; "*" selects all, a prefix or suffix "*" matches.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Names []string `json:"names,omitempty"`
}

// PatchSelectorMatchMachinePoolClass selects MachinePool classes by name.
type PatchSelectorMatchMachinePoolClass struct {
	// names of the classes; "*" selects all, a prefix or suffix "*" matches.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Names []string `json:"names,omitempty"`
}

// JSONPatch is one JSON patch operation.
type JSONPatch struct {
	// op is add, replace or remove.
	// +required
	// +kubebuilder:validation:Enum=add;replace;remove
	Op string `json:"op,omitempty"`

	// path is the JSON pointer of the patched field.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path,omitempty"`

	// value to set.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`

	// valueFrom computes the value from a variable or a template.
	// +optional
	ValueFrom *JSONPatchValue `json:"valueFrom,omitempty"`
}

// JSONPatchValue computes a patch's value from a variable or a Go template.
type JSONPatchValue struct {
	// variable is the name of the variable whose value is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Variable string `json:"variable,omitempty"`

	// template is a Go template rendered with the variables.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Template string `json:"template,omitempty"`
}

// ExternalPatchDefinition names the Runtime SDK extensions that compute a class's patches.
type ExternalPatchDefinition struct {
	// generatePatchesExtension computes the patches.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	GeneratePatchesExtension string `json:"generatePatchesExtension,omitempty"`

	// validateTopologyExtension validates the topology.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ValidateTopologyExtension string `json:"validateTopologyExtension,omitempty"`

	// discoverVariablesExtension discovers the variables.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DiscoverVariablesExtension string `json:"discoverVariablesExtension,omitempty"`

	// settings are passed to the extensions.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ControlPlaneClassMachineInfrastructureTemplate is the infrastructure template of control plane Machines.
type ControlPlaneClassMachineInfrastructureTemplate struct {
	// templateRef references the template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineDeploymentClassBootstrapTemplate is the bootstrap template of a MachineDeployment class.
type MachineDeploymentClassBootstrapTemplate struct {
	// templateRef references the template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineDeploymentClassInfrastructureTemplate is the infrastructure template of a MachineDeployment class.
type MachineDeploymentClassInfrastructureTemplate struct {
	// templateRef references the template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachinePoolClassBootstrapTemplate is the bootstrap template of a MachinePool class.
type MachinePoolClassBootstrapTemplate struct {
	// templateRef references the template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachinePoolClassInfrastructureTemplate is the infrastructure template of a MachinePool class.
type MachinePoolClassInfrastructureTemplate struct {
	// templateRef references the template.
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// ClusterClassTemplateReference references a template in the ClusterClass's namespace.
type ClusterClassTemplateReference struct {
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

// ClusterClassStatus is the observed state of a ClusterClass.
// +kubebuilder:validation:MinProperties=1
type ClusterClassStatus struct {
	// conditions of the ClusterClass.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// variables are the class's variables with their definitions, inline and discovered.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterClassStatusVariable `json:"variables,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *ClusterClassDeprecatedStatus `json:"deprecated,omitempty"`
}

// ClusterClassDeprecatedStatus groups the status fields that go away with v1beta1.
type ClusterClassDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *ClusterClassV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// ClusterClassV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type ClusterClassV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// ClusterClassStatusVariable is a variable of a ClusterClass with its definitions.
type ClusterClassStatusVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// definitionsConflict says whether the definitions differ.
	// +optional
	DefinitionsConflict *bool `json:"definitionsConflict,omitempty"`

	// definitions of the variable, one per source.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Definitions []ClusterClassStatusVariableDefinition `json:"definitions,omitempty"`
}

// ClusterClassStatusVariableDefinition is one definition of a variable.
type ClusterClassStatusVariableDefinition struct {
	// from is the source of the definition: "inline" or the name of a patch.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	From string `json:"from,omitempty"`

	// required says whether a Cluster must set the variable.
	// +required
	Required *bool `json:"required,omitempty"`

	// deprecatedV1Beta1Metadata is the v1beta1 metadata of the variable.
	// +optional
	DeprecatedV1Beta1Metadata ClusterClassVariableMetadata `json:"deprecatedV1Beta1Metadata,omitempty,omitzero"`

	// schema of the variable's values.
	// +required
	Schema VariableSchema `json:"schema,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterClassList is a list of ClusterClasses.
type ClusterClassList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClass `json:"items"`
}

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterClass conditions and reasons.
const (
	// ClusterClassVariablesReconciledCondition is the v1beta1 condition that reports whether the variables
	// of a ClusterClass, including those discovered from runtime extensions, have been reconciled.
	ClusterClassVariablesReconciledCondition ConditionType = "VariablesReconciled"

	// VariableDiscoveryFailedReason is used when discovering variables from a runtime extension failed.
	VariableDiscoveryFailedReason = "VariableDiscoveryFailed"

	// ClusterClassVariablesReadyV1Beta2Condition is the v1beta2 condition that reports whether the variables
	// of a ClusterClass are ready to be used.
	ClusterClassVariablesReadyV1Beta2Condition = "VariablesReady"

	// ClusterClassVariablesReadyV1Beta2Reason is the reason of a True VariablesReady condition.
	ClusterClassVariablesReadyV1Beta2Reason = "VariablesReady"

	// ClusterClassVariablesReadyVariableDiscoveryFailedV1Beta2Reason is used when variable discovery failed.
	ClusterClassVariablesReadyVariableDiscoveryFailedV1Beta2Reason = "VariableDiscoveryFailed"

	// ClusterClassRefVersionsUpToDateV1Beta2Condition is the v1beta2 condition that reports whether the
	// templates a ClusterClass references use the latest apiVersion of their contract.
	ClusterClassRefVersionsUpToDateV1Beta2Condition = "RefVersionsUpToDate"

	// ClusterClassRefVersionsUpToDateV1Beta2Reason is the reason of a True RefVersionsUpToDate condition.
	ClusterClassRefVersionsUpToDateV1Beta2Reason = "RefVersionsUpToDate"

	// ClusterClassRefVersionsNotUpToDateV1Beta2Reason is used when some references are not up to date.
	ClusterClassRefVersionsNotUpToDateV1Beta2Reason = "RefVersionsNotUpToDate"

	// ClusterClassRefVersionsUpToDateInternalErrorV1Beta2Reason is used when the check itself failed.
	ClusterClassRefVersionsUpToDateInternalErrorV1Beta2Reason = "InternalError"
)

// ClusterClassSpec is the desired state of a ClusterClass.
type ClusterClassSpec struct {
	// availabilityGates names extra conditions that must be true before a Cluster of this class is Available.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`

	// infrastructure is the template of the infrastructure cluster object.
	// +optional
	Infrastructure LocalObjectTemplate `json:"infrastructure,omitempty"`

	// infrastructureNamingStrategy sets how the name of the infrastructure cluster object is built.
	// +optional
	InfrastructureNamingStrategy *InfrastructureNamingStrategy `json:"infrastructureNamingStrategy,omitempty"`

	// controlPlane is the template of the control plane and its machines.
	// +optional
	ControlPlane ControlPlaneClass `json:"controlPlane,omitempty"`

	// workers are the classes of worker machines that topologies may use.
	// +optional
	Workers WorkersClass `json:"workers,omitempty"`

	// variables are the variables a Cluster of this class may or must set.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterClassVariable `json:"variables,omitempty"`

	// patches change the templates of the class depending on variable values.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Patches []ClusterClassPatch `json:"patches,omitempty"`

	// upgrade says how Clusters of the class are upgraded.
	// +optional
	Upgrade ClusterClassUpgrade `json:"upgrade,omitempty,omitzero"`

	// kubernetesVersions are the Kubernetes versions Clusters of the class may run, from the oldest to the
	// newest, with at least one version of every minor between the first and the last; the upgrade plan
	// goes through them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	KubernetesVersions []string `json:"kubernetesVersions,omitempty"`
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

// InfrastructureNamingStrategy sets how the name of the infrastructure cluster object is built.
type InfrastructureNamingStrategy struct {
	// template is a Go template for the name. It may use {{ .cluster.name }} and {{ .random }};
	// "{{ .cluster.name }}-{{ .random }}" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template *string `json:"template,omitempty"`
}

// ControlPlaneClass is the template of a control plane.
type ControlPlaneClass struct {
	// metadata is added to the control plane object and, when it has machines, to them.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// LocalObjectTemplate references the control plane template.
	LocalObjectTemplate `json:",inline"`

	// machineInfrastructure is the template of the control plane machines' infrastructure, for control
	// plane providers that use machines.
	// +optional
	MachineInfrastructure *LocalObjectTemplate `json:"machineInfrastructure,omitempty"`

	// machineHealthCheck is the health check of the control plane machines.
	// +optional
	MachineHealthCheck *MachineHealthCheckClass `json:"machineHealthCheck,omitempty"`

	// namingStrategy sets how the name of the control plane object is built.
	// +optional
	NamingStrategy *ControlPlaneClassNamingStrategy `json:"namingStrategy,omitempty"`

	// nodeDrainTimeout is the longest time to spend draining a node; no limit when empty.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is the longest time to wait for a node's volumes to detach; no limit when empty.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long to keep trying to delete a node once its machine is deleting; 10s when empty.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`

	// readinessGates names extra conditions that must be true before a control plane Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints). Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// ControlPlaneClassNamingStrategy sets how the name of the control plane object is built.
type ControlPlaneClassNamingStrategy struct {
	// template is a Go template for the name. It may use {{ .cluster.name }} and {{ .random }};
	// "{{ .cluster.name }}-{{ .random }}" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template *string `json:"template,omitempty"`
}

// WorkersClass holds the classes of worker machines.
type WorkersClass struct {
	// machineDeployments are the MachineDeployment classes that topologies may use.
	// +optional
	// +listType=map
	// +listMapKey=class
	// +kubebuilder:validation:MaxItems=100
	MachineDeployments []MachineDeploymentClass `json:"machineDeployments,omitempty"`

	// machinePools are the MachinePool classes that topologies may use.
	// +optional
	// +listType=map
	// +listMapKey=class
	// +kubebuilder:validation:MaxItems=100
	MachinePools []MachinePoolClass `json:"machinePools,omitempty"`
}

// MachineDeploymentClass is the template of a MachineDeployment that a topology may instantiate.
type MachineDeploymentClass struct {
	// class names the class; topologies refer to it by this name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class"`

	// template holds the templates of the MachineDeployment's machines.
	// +required
	Template MachineDeploymentClassTemplate `json:"template"`

	// machineHealthCheck is the health check of the MachineDeployment's machines.
	// +optional
	MachineHealthCheck *MachineHealthCheckClass `json:"machineHealthCheck,omitempty"`

	// failureDomain is the failure domain the machines are created in; a topology may override it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain *string `json:"failureDomain,omitempty"`

	// namingStrategy sets how the name of the MachineDeployment is built.
	// +optional
	NamingStrategy *MachineDeploymentClassNamingStrategy `json:"namingStrategy,omitempty"`

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

	// readinessGates names extra conditions that must be true before a Machine is Ready.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// strategy is how old machines are replaced by new ones.
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints). Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachineDeploymentClassTemplate holds the templates of a MachineDeployment class's machines.
type MachineDeploymentClassTemplate struct {
	// metadata is added to the MachineDeployment and its machines.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// bootstrap is the template of the machines' bootstrap config.
	// +required
	Bootstrap LocalObjectTemplate `json:"bootstrap"`

	// infrastructure is the template of the machines' infrastructure.
	// +required
	Infrastructure LocalObjectTemplate `json:"infrastructure"`
}

// MachineDeploymentClassNamingStrategy sets how the name of a MachineDeployment is built.
type MachineDeploymentClassNamingStrategy struct {
	// template is a Go template for the name. It may use {{ .cluster.name }}, {{ .machineDeployment.topologyName }}
	// and {{ .random }}; "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template *string `json:"template,omitempty"`
}

// MachinePoolClass is the template of a MachinePool that a topology may instantiate.
type MachinePoolClass struct {
	// class names the class; topologies refer to it by this name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Class string `json:"class"`

	// template holds the templates of the MachinePool.
	// +required
	Template MachinePoolClassTemplate `json:"template"`

	// failureDomains are the failure domains the pool's machines may be placed in; a topology may override them.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`

	// namingStrategy sets how the name of the MachinePool is built.
	// +optional
	NamingStrategy *MachinePoolClassNamingStrategy `json:"namingStrategy,omitempty"`

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

	// taints are put on the Nodes of the Machines (see a Machine's spec.taints). Upstream v1.14's v1beta1
	// field.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachinePoolClassTemplate holds the templates of a MachinePool class.
type MachinePoolClassTemplate struct {
	// metadata is added to the MachinePool.
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`

	// bootstrap is the template of the pool's bootstrap config.
	// +required
	Bootstrap LocalObjectTemplate `json:"bootstrap"`

	// infrastructure is the template of the pool's infrastructure.
	// +required
	Infrastructure LocalObjectTemplate `json:"infrastructure"`
}

// MachinePoolClassNamingStrategy sets how the name of a MachinePool is built.
type MachinePoolClassNamingStrategy struct {
	// template is a Go template for the name. It may use {{ .cluster.name }}, {{ .machinePool.topologyName }}
	// and {{ .random }}; "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}" when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Template *string `json:"template,omitempty"`
}

// LocalObjectTemplate references a template in the namespace of the ClusterClass.
type LocalObjectTemplate struct {
	// ref is the reference to the template.
	// +required
	Ref *corev1.ObjectReference `json:"ref"`
}

// ClusterClassVariable is a variable that Clusters of a class may or must set.
type ClusterClassVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// required says whether a Cluster must set the variable.
	// +required
	Required bool `json:"required"`

	// metadata is deprecated; use x-metadata in the schema instead.
	// +optional
	Metadata ClusterClassVariableMetadata `json:"metadata,omitempty"`

	// schema is the schema that values of the variable must follow.
	// +required
	Schema VariableSchema `json:"schema"`
}

// ClusterClassVariableMetadata is metadata attached to a variable definition. Deprecated.
type ClusterClassVariableMetadata struct {
	// labels attached to the variable.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations attached to the variable.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// VariableSchema holds the schema of a variable.
type VariableSchema struct {
	// openAPIV3Schema is the schema of the variable as a subset of OpenAPI v3.
	// +required
	OpenAPIV3Schema JSONSchemaProps `json:"openAPIV3Schema"`
}

// JSONSchemaProps is the subset of OpenAPI v3 (plus some Kubernetes extensions) that variable schemas may use.
type JSONSchemaProps struct {
	// description of the variable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// example is an example value.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Example *apiextensionsv1.JSON `json:"example,omitempty"`

	// type of the value.
	// +optional
	// +kubebuilder:validation:Enum=object;array;string;integer;number;boolean
	Type string `json:"type,omitempty"`

	// properties are the schemas of an object's fields.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Properties map[string]JSONSchemaProps `json:"properties,omitempty"`

	// additionalProperties is the schema of the values of a map.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AdditionalProperties *JSONSchemaProps `json:"additionalProperties,omitempty"`

	// maxProperties is the most properties an object may have.
	// +optional
	MaxProperties *int64 `json:"maxProperties,omitempty"`

	// minProperties is the fewest properties an object may have.
	// +optional
	MinProperties *int64 `json:"minProperties,omitempty"`

	// required lists the properties an object must have.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Required []string `json:"required,omitempty"`

	// items is the schema of the elements of an array.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Items *JSONSchemaProps `json:"items,omitempty"`

	// maxItems is the most elements an array may have.
	// +optional
	MaxItems *int64 `json:"maxItems,omitempty"`

	// minItems is the fewest elements an array may have.
	// +optional
	MinItems *int64 `json:"minItems,omitempty"`

	// uniqueItems says whether the elements of an array must be unique.
	// +optional
	UniqueItems bool `json:"uniqueItems,omitempty"`

	// format of a string value, such as uri, email or date-time.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Format string `json:"format,omitempty"`

	// maxLength is the longest a string may be.
	// +optional
	MaxLength *int64 `json:"maxLength,omitempty"`

	// minLength is the shortest a string may be.
	// +optional
	MinLength *int64 `json:"minLength,omitempty"`

	// pattern is a regular expression a string must match.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Pattern string `json:"pattern,omitempty"`

	// maximum is the largest a number may be.
	// +optional
	Maximum *int64 `json:"maximum,omitempty"`

	// exclusiveMaximum makes maximum itself not allowed.
	// +optional
	ExclusiveMaximum bool `json:"exclusiveMaximum,omitempty"`

	// minimum is the smallest a number may be.
	// +optional
	Minimum *int64 `json:"minimum,omitempty"`

	// exclusiveMinimum makes minimum itself not allowed.
	// +optional
	ExclusiveMinimum bool `json:"exclusiveMinimum,omitempty"`

	// x-kubernetes-preserve-unknown-fields keeps fields that the schema does not list.
	// +optional
	XPreserveUnknownFields bool `json:"x-kubernetes-preserve-unknown-fields,omitempty"`

	// enum lists the allowed values.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Enum []apiextensionsv1.JSON `json:"enum,omitempty"`

	// default is the value used when none is given.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Default *apiextensionsv1.JSON `json:"default,omitempty"`

	// x-kubernetes-validations are CEL rules the value must pass.
	// +optional
	// +listType=map
	// +listMapKey=rule
	// +kubebuilder:validation:MaxItems=100
	XValidations []ValidationRule `json:"x-kubernetes-validations,omitempty"`

	// x-metadata is metadata attached to the variable or one of its fields.
	// +optional
	XMetadata *VariableSchemaMetadata `json:"x-metadata,omitempty"`

	// x-kubernetes-int-or-string allows either an integer or a string.
	// +optional
	XIntOrString bool `json:"x-kubernetes-int-or-string,omitempty"`

	// allOf requires the value to match all of these schemas.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AllOf []JSONSchemaProps `json:"allOf,omitempty"`

	// oneOf requires the value to match exactly one of these schemas.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	OneOf []JSONSchemaProps `json:"oneOf,omitempty"`

	// anyOf requires the value to match at least one of these schemas.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AnyOf []JSONSchemaProps `json:"anyOf,omitempty"`

	// not requires the value not to match this schema.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Not *JSONSchemaProps `json:"not,omitempty"`
}

// VariableSchemaMetadata is metadata attached to a variable or one of its fields.
type VariableSchemaMetadata struct {
	// labels attached to the variable.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations attached to the variable.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ValidationRuleReason is the machine readable reason reported when a validation rule fails.
// +kubebuilder:validation:Enum=FieldValueInvalid;FieldValueForbidden;FieldValueRequired;FieldValueDuplicate
type ValidationRuleReason string

// The reasons a validation rule may report.
const (
	// FieldValueInvalid means the value is not valid.
	FieldValueInvalid ValidationRuleReason = "FieldValueInvalid"
	// FieldValueForbidden means the value is forbidden.
	FieldValueForbidden ValidationRuleReason = "FieldValueForbidden"
	// FieldValueRequired means a value is required.
	FieldValueRequired ValidationRuleReason = "FieldValueRequired"
	// FieldValueDuplicate means the value duplicates another one.
	FieldValueDuplicate ValidationRuleReason = "FieldValueDuplicate"
)

// ValidationRule is a CEL rule that a variable value must pass.
type ValidationRule struct {
	// rule is the CEL expression; self is the value being validated.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Rule string `json:"rule"`

	// message is reported when the rule fails.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// messageExpression is a CEL expression that builds the message reported when the rule fails.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	MessageExpression string `json:"messageExpression,omitempty"`

	// reason is the machine readable reason reported when the rule fails; FieldValueInvalid when empty.
	// +optional
	// +kubebuilder:default=FieldValueInvalid
	Reason ValidationRuleReason `json:"reason,omitempty"`

	// fieldPath is the path of the field reported when the rule fails, relative to the value.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FieldPath string `json:"fieldPath,omitempty"`
}

// ClusterClassPatch changes the templates of a class depending on variable values.
type ClusterClassPatch struct {
	// name of the patch.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// description of the patch.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// enabledIf is a Go template that enables the patch when it renders "true"; always enabled when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	EnabledIf *string `json:"enabledIf,omitempty"`

	// definitions are inline patches; exactly one of definitions and external must be set.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Definitions []PatchDefinition `json:"definitions,omitempty"`

	// external names runtime extensions that compute the patches.
	// +optional
	External *ExternalPatchDefinition `json:"external,omitempty"`
}

// PatchDefinition applies JSON patches to the templates a selector matches.
type PatchDefinition struct {
	// selector chooses the templates to patch.
	// +required
	Selector PatchSelector `json:"selector"`

	// jsonPatches are the patches to apply.
	// +required
	// +kubebuilder:validation:MaxItems=100
	JSONPatches []JSONPatch `json:"jsonPatches"`
}

// PatchSelector chooses the templates a patch applies to.
type PatchSelector struct {
	// apiVersion of the templates.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIVersion string `json:"apiVersion"`

	// kind of the templates.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Kind string `json:"kind"`

	// matchResources says where in the class the templates must be referenced.
	// +required
	MatchResources PatchSelectorMatch `json:"matchResources"`
}

// PatchSelectorMatch says where in the class a patched template must be referenced.
type PatchSelectorMatch struct {
	// controlPlane selects the control plane template.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`

	// infrastructureCluster selects the infrastructure cluster template.
	// +optional
	InfrastructureCluster bool `json:"infrastructureCluster,omitempty"`

	// machineDeploymentClass selects templates of some MachineDeployment classes.
	// +optional
	MachineDeploymentClass *PatchSelectorMatchMachineDeploymentClass `json:"machineDeploymentClass,omitempty"`

	// machinePoolClass selects templates of some MachinePool classes.
	// +optional
	MachinePoolClass *PatchSelectorMatchMachinePoolClass `json:"machinePoolClass,omitempty"`
}

// PatchSelectorMatchMachineDeploymentClass selects MachineDeployment classes by name.
type PatchSelectorMatchMachineDeploymentClass struct {
	// names of the classes; "*" matches all, and a leading or trailing "*" matches a suffix or prefix.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Names []string `json:"names,omitempty"`
}

// PatchSelectorMatchMachinePoolClass selects MachinePool classes by name.
type PatchSelectorMatchMachinePoolClass struct {
	// names of the classes; "*" matches all, and a leading or trailing "*" matches a suffix or prefix.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Names []string `json:"names,omitempty"`
}

// JSONPatch is one RFC 6902 JSON patch operation.
type JSONPatch struct {
	// op is the operation: add, replace or remove.
	// +required
	// +kubebuilder:validation:Enum=add;replace;remove
	Op string `json:"op"`

	// path is the JSON pointer to the field to change; it must start with /spec.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// value is a literal value; at most one of value and valueFrom may be set.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`

	// valueFrom computes the value from variables.
	// +optional
	ValueFrom *JSONPatchValue `json:"valueFrom,omitempty"`
}

// JSONPatchValue computes a patch value from variables; exactly one field must be set.
type JSONPatchValue struct {
	// variable is the name of a variable, or a dotted path into one, whose value is used.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Variable *string `json:"variable,omitempty"`

	// template is a Go template rendered with the variables, whose output is parsed as YAML.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Template *string `json:"template,omitempty"`
}

// ExternalPatchDefinition names runtime extensions that compute patches.
type ExternalPatchDefinition struct {
	// generateExtension is the name of the extension that generates patches.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	GenerateExtension *string `json:"generateExtension,omitempty"`

	// validateExtension is the name of the extension that validates the patched topology.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ValidateExtension *string `json:"validateExtension,omitempty"`

	// discoverVariablesExtension is the name of the extension that reports the variables it supports.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DiscoverVariablesExtension *string `json:"discoverVariablesExtension,omitempty"`

	// settings are passed to the extensions.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ClusterClassStatus is the observed state of a ClusterClass.
type ClusterClassStatus struct {
	// variables are all the variables of the class, from its spec and from runtime extensions.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Variables []ClusterClassStatusVariable `json:"variables,omitempty"`

	// conditions are the v1beta1 conditions of the ClusterClass.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`

	// observedGeneration is the latest generation the controller has observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// v1beta2 groups the fields that the v1beta2 API adds.
	// +optional
	V1Beta2 *ClusterClassV1Beta2Status `json:"v1beta2,omitempty"`
}

// ClusterClassV1Beta2Status is the part of a ClusterClass's status that the v1beta2 API adds.
type ClusterClassV1Beta2Status struct {
	// conditions are the v1beta2 conditions of the ClusterClass.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterClassStatusVariable is one variable of a class with all of its definitions.
type ClusterClassStatusVariable struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// definitionsConflict says whether the definitions of the variable disagree.
	// +optional
	DefinitionsConflict bool `json:"definitionsConflict,omitempty"`

	// definitions of the variable, one per source.
	// +required
	// +kubebuilder:validation:MaxItems=100
	Definitions []ClusterClassStatusVariableDefinition `json:"definitions"`
}

// ClusterClassStatusVariableDefinition is one definition of a variable.
type ClusterClassStatusVariableDefinition struct {
	// from is where the definition comes from: "inline" for the class spec, or the name of a patch.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	From string `json:"from"`

	// required says whether a Cluster must set the variable.
	// +required
	Required bool `json:"required"`

	// metadata is deprecated; use x-metadata in the schema instead.
	// +optional
	Metadata ClusterClassVariableMetadata `json:"metadata,omitempty"`

	// schema is the schema that values of the variable must follow.
	// +required
	Schema VariableSchema `json:"schema"`
}

// VariableDefinitionFromInline is the "from" of variable definitions given in the ClusterClass spec.
const VariableDefinitionFromInline = "inline"

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterclasses,shortName=cc,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterClass"

// ClusterClass is a template for the shape of Clusters.
type ClusterClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ClusterClass.
	// +optional
	Spec ClusterClassSpec `json:"spec,omitempty"`
	// status is the observed state of the ClusterClass.
	// +optional
	Status ClusterClassStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (c *ClusterClass) GetConditions() Conditions { return c.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (c *ClusterClass) SetConditions(conditions Conditions) { c.Status.Conditions = conditions }

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (c *ClusterClass) GetV1Beta2Conditions() []metav1.Condition {
	if c.Status.V1Beta2 == nil {
		return nil
	}
	return c.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (c *ClusterClass) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &ClusterClassV1Beta2Status{}
	}
	c.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// ClusterClassList is a list of ClusterClasses.
type ClusterClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClass `json:"items"`
}

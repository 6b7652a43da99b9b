package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

const (
	// ClusterResourceSetSecretType is the only type of Secret a ClusterResourceSet applies.
	ClusterResourceSetSecretType corev1.SecretType = "addons.cluster.x-k8s.io/resource-set" //nolint:gosec // A Secret type, not a credential.

	// ClusterResourceSetFinalizer keeps a ClusterResourceSet until it is removed from the
	// ClusterResourceSetBindings of its Clusters.
	ClusterResourceSetFinalizer = "addons.cluster.x-k8s.io"
)

// ClusterResourceSetSpec is the desired state of a ClusterResourceSet.
// +kubebuilder:validation:XValidation:rule="(has(self.strategy) ? self.strategy : 'ApplyOnce') == (has(oldSelf.strategy) ? oldSelf.strategy : 'ApplyOnce')",message="strategy is immutable",fieldPath=".strategy"
type ClusterResourceSetSpec struct {
	// clusterSelector selects, by label, the Clusters of the namespace the resources are applied to. It
	// cannot be empty (an empty selector would select nothing) and cannot change.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterSelector is immutable"
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="clusterSelector must not be empty: it would select no Cluster"
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`

	// resources are the Secrets and ConfigMaps of the namespace whose data (YAML or JSON documents) is
	// applied to the workload clusters.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Resources []ResourceRef `json:"resources,omitempty"`

	// strategy says when the resources are applied: ApplyOnce (the default) applies each once per Cluster;
	// Reconcile applies it again whenever its data changes. It cannot change.
	// +kubebuilder:validation:Enum=ApplyOnce;Reconcile
	// +optional
	Strategy string `json:"strategy,omitempty"`
}

// ClusterResourceSetResourceKind is the kind of a ClusterResourceSet's resource.
type ClusterResourceSetResourceKind string

// The kinds of resource a ClusterResourceSet applies.
const (
	SecretClusterResourceSetResourceKind    ClusterResourceSetResourceKind = "Secret"
	ConfigMapClusterResourceSetResourceKind ClusterResourceSetResourceKind = "ConfigMap"
)

// ResourceRef names a Secret or ConfigMap of the ClusterResourceSet's namespace.
type ResourceRef struct {
	// name of the Secret or ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kind of the resource: Secret or ConfigMap.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	// +required
	Kind string `json:"kind"`
}

// ClusterResourceSetStrategy says when a ClusterResourceSet applies its resources.
type ClusterResourceSetStrategy string

const (
	// ClusterResourceSetStrategyApplyOnce applies each resource once per Cluster; the default.
	ClusterResourceSetStrategyApplyOnce ClusterResourceSetStrategy = "ApplyOnce"
	// ClusterResourceSetStrategyReconcile applies a resource again when the hash of its data changes.
	ClusterResourceSetStrategyReconcile ClusterResourceSetStrategy = "Reconcile"
)

// ClusterResourceSetStatus is the observed state of a ClusterResourceSet.
type ClusterResourceSetStatus struct {
	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the v1beta1 conditions: ResourcesApplied.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 holds the fields of the v1beta2 API.
	// +optional
	V1Beta2 *ClusterResourceSetV1Beta2Status `json:"v1beta2,omitempty"`
}

// ClusterResourceSetV1Beta2Status holds the status fields of the v1beta2 API.
type ClusterResourceSetV1Beta2Status struct {
	// conditions are the v1beta2 conditions: ResourcesApplied and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcesets,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterResourceSet"

// ClusterResourceSet applies the Kubernetes objects held in Secrets and ConfigMaps to the workload clusters
// of the Clusters it selects (a CNI, a cloud provider's manifests). For advanced use cases, use an add-on
// provider instead.
type ClusterResourceSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ClusterResourceSet.
	// +optional
	Spec ClusterResourceSetSpec `json:"spec,omitempty"`
	// status is the observed state of the ClusterResourceSet.
	// +optional
	Status ClusterResourceSetStatus `json:"status,omitempty"`
}

// GetConditions returns the v1beta1 conditions.
func (m *ClusterResourceSet) GetConditions() clusterv1.Conditions { return m.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (m *ClusterResourceSet) SetConditions(conditions clusterv1.Conditions) {
	m.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (m *ClusterResourceSet) GetV1Beta2Conditions() []metav1.Condition {
	if m.Status.V1Beta2 == nil {
		return nil
	}
	return m.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (m *ClusterResourceSet) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if m.Status.V1Beta2 == nil {
		m.Status.V1Beta2 = &ClusterResourceSetV1Beta2Status{}
	}
	m.Status.V1Beta2.Conditions = conditions
}

// +kubebuilder:object:root=true

// ClusterResourceSetList is a list of ClusterResourceSets.
type ClusterResourceSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterResourceSets.
	Items []ClusterResourceSet `json:"items"`
}

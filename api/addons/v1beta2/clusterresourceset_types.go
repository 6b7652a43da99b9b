package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// ClusterResourceSetSpec is the desired state of a ClusterResourceSet.
// +kubebuilder:validation:XValidation:rule="(has(self.strategy) ? self.strategy : 'ApplyOnce') == (has(oldSelf.strategy) ? oldSelf.strategy : 'ApplyOnce')",message="strategy is immutable",fieldPath=".strategy"
type ClusterResourceSetSpec struct {
	// clusterSelector selects, by label, the Clusters of the namespace the resources are applied to. It
	// cannot be empty (an empty selector would select nothing) and cannot change.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterSelector is immutable"
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="clusterSelector must not be empty: it would select no Cluster"
	ClusterSelector metav1.LabelSelector `json:"clusterSelector,omitempty,omitzero"`

	// resources are the Secrets and ConfigMaps of the namespace whose data (YAML or JSON documents) is
	// applied to the workload clusters.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
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

// The kinds of a ClusterResourceSet's resources.
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
	Name string `json:"name,omitempty"`

	// kind of the resource: Secret or ConfigMap.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	// +required
	Kind string `json:"kind,omitempty"`
}

// ClusterResourceSetStrategy says when a ClusterResourceSet applies its resources.
type ClusterResourceSetStrategy string

// The strategies of a ClusterResourceSet.
const (
	ClusterResourceSetStrategyApplyOnce ClusterResourceSetStrategy = "ApplyOnce"
	ClusterResourceSetStrategyReconcile ClusterResourceSetStrategy = "Reconcile"
)

// ClusterResourceSetStatus is the observed state of a ClusterResourceSet.
// +kubebuilder:validation:MinProperties=1
type ClusterResourceSetStatus struct {
	// conditions of the ClusterResourceSet: ResourcesApplied, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *ClusterResourceSetDeprecatedStatus `json:"deprecated,omitempty"`
}

// ClusterResourceSetDeprecatedStatus groups the status fields that go away with v1beta1.
type ClusterResourceSetDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *ClusterResourceSetV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// ClusterResourceSetV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type ClusterResourceSetV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions: ResourcesApplied.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcesets,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Applied",type="string",JSONPath=`.status.conditions[?(@.type=="ResourcesApplied")].status`,description="Resource applied"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterResourceSet"

// ClusterResourceSet applies the Kubernetes objects held in Secrets and ConfigMaps to the workload clusters
// of the Clusters it selects (a CNI, a cloud provider's manifests). For advanced use cases, use an add-on
// provider instead.
type ClusterResourceSet struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the ClusterResourceSet.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ClusterResourceSet.
	// +required
	Spec ClusterResourceSetSpec `json:"spec,omitempty,omitzero"`
	// status is the observed state of the ClusterResourceSet.
	// +optional
	Status ClusterResourceSetStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterResourceSetList is a list of ClusterResourceSets.
type ClusterResourceSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceSet `json:"items"`
}

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceBinding records one resource of a ClusterResourceSet applied to the binding's Cluster.
type ResourceBinding struct {
	ResourceRef `json:",inline"`

	// hash is the hash of the resource's data when it was last applied ("sha256:<hex>"); the Reconcile
	// strategy applies the resource again when it changes.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Hash string `json:"hash,omitempty"`

	// lastAppliedTime is when the resource was last applied to the Cluster.
	// +optional
	LastAppliedTime metav1.Time `json:"lastAppliedTime,omitempty,omitzero"`

	// applied says whether every object of the resource was applied successfully.
	// +required
	Applied *bool `json:"applied,omitempty"`
}

// ResourceSetBinding records what one ClusterResourceSet applied to the binding's Cluster.
type ResourceSetBinding struct {
	// clusterResourceSetName is the name of the ClusterResourceSet.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterResourceSetName string `json:"clusterResourceSetName,omitempty"`

	// resources are the resources of the ClusterResourceSet and whether they were applied.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Resources []ResourceBinding `json:"resources,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcesetbindings,scope=Namespaced,categories=cluster-api
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterResourceSetBinding"

// ClusterResourceSetBinding records, for one Cluster (it has the Cluster's name), the ClusterResourceSets
// applied to it and what each applied.
type ClusterResourceSetBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the ClusterResourceSetBinding.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state of the ClusterResourceSetBinding.
	// +required
	Spec ClusterResourceSetBindingSpec `json:"spec,omitempty,omitzero"`
}

// ClusterResourceSetBindingSpec is the desired state of a ClusterResourceSetBinding.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.clusterName) || (has(self.clusterName) && self.clusterName == oldSelf.clusterName)",message="clusterName is immutable",fieldPath=".clusterName"
type ClusterResourceSetBindingSpec struct {
	// bindings are the ClusterResourceSets applied to the Cluster and what each applied.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Bindings []ResourceSetBinding `json:"bindings,omitempty"`

	// clusterName is the name of the Cluster the binding is for.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceSetBindingList is a list of ClusterResourceSetBindings.
type ClusterResourceSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceSetBinding `json:"items"`
}

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceBinding records one resource of a ClusterResourceSet applied to the binding's Cluster.
type ResourceBinding struct {
	// ResourceRef names the Secret or ConfigMap.
	ResourceRef `json:",inline"`

	// hash is the hash of the resource's data when it was last applied ("sha256:<hex>"); the Reconcile
	// strategy applies the resource again when it changes.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Hash string `json:"hash,omitempty"`

	// lastAppliedTime is when the resource was last applied to the Cluster.
	// +optional
	LastAppliedTime *metav1.Time `json:"lastAppliedTime,omitempty"`

	// applied says whether every object of the resource was applied successfully.
	// +required
	Applied bool `json:"applied"`
}

// ResourceSetBinding records what one ClusterResourceSet applied to the binding's Cluster.
type ResourceSetBinding struct {
	// clusterResourceSetName is the name of the ClusterResourceSet.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterResourceSetName string `json:"clusterResourceSetName"`

	// resources are the resources of the ClusterResourceSet and whether they were applied.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Resources []ResourceBinding `json:"resources,omitempty"`
}

// IsApplied reports whether the resource was applied successfully.
func (r *ResourceSetBinding) IsApplied(ref ResourceRef) bool {
	b := r.GetResource(ref)
	return b != nil && b.Applied
}

// GetResource returns a copy of the record of a resource, or nil.
func (r *ResourceSetBinding) GetResource(ref ResourceRef) *ResourceBinding {
	for _, b := range r.Resources {
		if b.ResourceRef == ref {
			return &b
		}
	}
	return nil
}

// SetBinding records a resource, replacing an earlier record of it.
func (r *ResourceSetBinding) SetBinding(b ResourceBinding) {
	for i := range r.Resources {
		if r.Resources[i].ResourceRef == b.ResourceRef {
			r.Resources[i] = b
			return
		}
	}
	r.Resources = append(r.Resources, b)
}

// ClusterResourceSetBindingSpec is the desired state of a ClusterResourceSetBinding.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.clusterName) || (has(self.clusterName) && self.clusterName == oldSelf.clusterName)",message="clusterName is immutable",fieldPath=".clusterName"
type ClusterResourceSetBindingSpec struct {
	// bindings are the ClusterResourceSets applied to the Cluster and what each applied.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Bindings []*ResourceSetBinding `json:"bindings,omitempty"`

	// clusterName is the name of the Cluster the binding is for.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName,omitempty"`
}

// GetOrCreateBinding returns the record of a ClusterResourceSet, adding an empty one when there is none.
func (c *ClusterResourceSetBinding) GetOrCreateBinding(crs *ClusterResourceSet) *ResourceSetBinding {
	for _, b := range c.Spec.Bindings {
		if b.ClusterResourceSetName == crs.Name {
			return b
		}
	}
	b := &ResourceSetBinding{ClusterResourceSetName: crs.Name, Resources: []ResourceBinding{}}
	c.Spec.Bindings = append(c.Spec.Bindings, b)
	return b
}

// RemoveBinding removes the record of a ClusterResourceSet.
func (c *ClusterResourceSetBinding) RemoveBinding(crs *ClusterResourceSet) {
	var kept []*ResourceSetBinding
	for _, b := range c.Spec.Bindings {
		if b.ClusterResourceSetName != crs.Name {
			kept = append(kept, b)
		}
	}
	c.Spec.Bindings = kept
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcesetbindings,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterResourceSetBinding"

// ClusterResourceSetBinding records, for one Cluster (it has the Cluster's name), the ClusterResourceSets
// applied to it and what each applied.
type ClusterResourceSetBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the desired state of the ClusterResourceSetBinding.
	// +optional
	Spec ClusterResourceSetBindingSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceSetBindingList is a list of ClusterResourceSetBindings.
type ClusterResourceSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterResourceSetBindings.
	Items []ClusterResourceSetBinding `json:"items"`
}

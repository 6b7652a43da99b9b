// Package v1beta2 holds the addons.cluster.x-k8s.io/v1beta2 API: ClusterResourceSet and ClusterResourceSetBinding. The schemas are upstream Cluster API v1.14's field for field.
//
// This version is served beside v1beta1 (runtime: v1alpha1), which stays the storage version while
// the controllers read and write v1beta1; the API server converts through the managers' conversion
// webhooks (internal/conversion, docs/api.md).
//
// +kubebuilder:object:generate=true
// +groupName=addons.cluster.x-k8s.io
package v1beta2

// Package v1beta2 holds the controlplane.cluster.x-k8s.io/v1beta2 API of the kubeadm control plane
// provider: KubeadmControlPlane and KubeadmControlPlaneTemplate, which embed the bootstrap provider's v1beta2
// KubeadmConfigSpec. The schemas are upstream Cluster API v1.14's field for field.
//
// This version is served beside v1beta1 (runtime: v1alpha1), which stays the storage version while
// the controllers read and write v1beta1; the API server converts through the managers' conversion
// webhooks (internal/conversion, docs/api.md).
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1beta2

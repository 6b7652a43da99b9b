// Package v1beta2 holds the bootstrap.cluster.x-k8s.io/v1beta2 API of the kubeadm bootstrap provider:
// KubeadmConfig, KubeadmConfigTemplate and the kubeadm configuration types they embed, which the control
// plane provider's v1beta2 KubeadmControlPlane embeds too. The schemas are upstream Cluster API v1.14's
// field for field.
//
// This version is served beside v1beta1 (runtime: v1alpha1), which stays the storage version while
// the controllers read and write v1beta1; the API server converts through the managers' conversion
// webhooks (internal/conversion, docs/api.md).
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1beta2

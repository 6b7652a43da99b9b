// Package v1alpha1 holds the runtime.cluster.x-k8s.io/v1alpha1 API: ExtensionConfig, which registers a
// Runtime Extension server with the core controllers. The schema matches upstream Cluster API v1.10's field
// for field; what upstream checks in its admission webhook is expressed as CEL rules here, and the
// ExtensionConfig controller checks it again and reports it in the Discovered condition.
//
// +kubebuilder:object:generate=true
// +groupName=runtime.cluster.x-k8s.io
package v1alpha1

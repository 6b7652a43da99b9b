// Package v1beta2 holds the runtime.cluster.x-k8s.io/v1beta2 API: ExtensionConfig, which registers a Runtime
// Extension server with the core controllers. The schemas are upstream Cluster API v1.14's field for field.
//
// This version is not served yet (see docs/dev/v1beta2.md): no manager registers these types, and
// `make generate` writes their CRDs to config/crd/v1beta2-draft only, where internal/test/compat compares
// them with upstream v1.14's.
//
// +kubebuilder:object:generate=true
// +groupName=runtime.cluster.x-k8s.io
package v1beta2

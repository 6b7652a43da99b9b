// Package v1beta2 holds the ipam.cluster.x-k8s.io/v1beta2 API: IPAddressClaim and IPAddress, the contract between
// infrastructure providers, which claim addresses, and IPAM providers, which allocate them. The schemas are upstream Cluster API v1.14's field for field.
//
// This version is not served yet (see docs/dev/v1beta2.md): no manager registers these types, and
// `make generate` writes their CRDs to config/crd/v1beta2-draft only, where internal/test/compat compares
// them with upstream v1.14's.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.cluster.x-k8s.io
package v1beta2

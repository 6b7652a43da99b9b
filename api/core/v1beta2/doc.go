// Package v1beta2 holds the cluster.x-k8s.io/v1beta2 API: Cluster, ClusterClass, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck, MachineDrainRule and MachinePool, with the schemas of upstream
// Cluster API v1.14 field for field.
//
// This version is not served yet (see docs/dev/v1beta2.md): its types carry no scheme registration in any
// manager, and `make generate` writes their CRDs to config/crd/v1beta2-draft only, where
// internal/test/compat compares them with upstream v1.14's.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.x-k8s.io
package v1beta2

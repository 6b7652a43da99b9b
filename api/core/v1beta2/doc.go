// Package v1beta2 holds the cluster.x-k8s.io/v1beta2 API: Cluster, ClusterClass, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck, MachineDrainRule and MachinePool, with the schemas of upstream
// Cluster API v1.14 field for field.
//
// This version is served beside v1beta1 (runtime: v1alpha1), which stays the storage version while
// the controllers read and write v1beta1; the API server converts through the managers' conversion
// webhooks (internal/conversion, docs/api.md).
//
// +kubebuilder:object:generate=true
// +groupName=cluster.x-k8s.io
package v1beta2

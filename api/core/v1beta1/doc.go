// Package v1beta1 holds the cluster.x-k8s.io/v1beta1 API: Cluster, ClusterClass, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck, MachineDrainRule and MachinePool. The schemas match upstream Cluster API v1.10 field for field,
// so existing manifests are accepted unchanged; validation that upstream does in admission webhooks is
// expressed here as OpenAPI and CEL rules instead.
//
// +kubebuilder:object:generate=true
// +k8s:conversion-gen=github.com/capstan-dev/capstan/api/core/v1beta2
// +groupName=cluster.x-k8s.io
package v1beta1

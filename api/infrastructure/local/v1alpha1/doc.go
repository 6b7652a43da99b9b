// Package v1alpha1 holds the infrastructure.cluster.x-k8s.io/v1alpha1 API of capstan's local infrastructure
// provider (infrastructure-local): LocalCluster, LocalClusterTemplate, LocalMachine and LocalMachineTemplate.
// A LocalCluster is a workload control plane (etcd and kube-apiserver) run on the provider's own machine; a
// LocalMachine is a simulated Node registered in it. The kinds follow the v1beta1 InfraCluster and
// InfraMachine contracts, and also report the v1beta2 contract fields (status.initialization.provisioned and
// the status.v1beta2 conditions).
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1alpha1

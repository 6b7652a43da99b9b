// Package kubeadmconfig is the KubeadmConfig controller of the kubeadm bootstrap provider. For the Machine
// that owns a KubeadmConfig it renders the bootstrap data (cloud-config or Ignition) into the Secret named
// by status.dataSecretName: `kubeadm init` data for the first control plane Machine, once the Cluster's
// infrastructure is ready, with the cluster certificates it looks up or generates; `kubeadm join` data for
// every other Machine once the control plane is initialized, with a bootstrap token it creates in the
// workload cluster and keeps fresh until the Machine's Node exists.
//
// It watches KubeadmConfigs, Machines, Clusters, and the connections of the workload cluster cache.
package kubeadmconfig

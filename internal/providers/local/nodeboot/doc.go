// Package nodeboot reads a Machine's bootstrap data the way a node would: the cloud-config or
// Ignition document that a bootstrap provider writes to the Machine's data Secret, in the format of
// Cluster API's kubeadm bootstrap provider (CABPK). It returns the files the data writes, the kubeadm
// command it runs (init or join) and the kubeadm configuration that command reads
// (InitConfiguration, JoinConfiguration, ClusterConfiguration of kubeadm.k8s.io/v1beta3 or v1beta4),
// from which the local provider derives what a node would do: the Node's name, labels and taints, and for
// a control plane node the extra arguments, volumes and files of kube-apiserver and etcd.
//
// Nothing is executed: commands other than kubeadm's are ignored.
package nodeboot

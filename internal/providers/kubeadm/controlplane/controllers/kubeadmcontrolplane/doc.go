// Package kubeadmcontrolplane is the KubeadmControlPlane controller of the kubeadm control plane provider
// (control-plane-kubeadm), wire-compatible with upstream Cluster API's KCP.
//
// It owns the cluster certificates (`<cluster>-ca`, `-etcd`, `-proxy`, `-sa`) and the `<cluster>-kubeconfig`
// Secret, and the control plane Machines: each gets a KubeadmConfig (init for the first, join afterwards) and
// an InfraMachine cloned from spec.machineTemplate.infrastructureRef, spread across the Cluster's control
// plane failure domains. It scales and rolls Machines out one at a time behind preflight checks, moves the
// etcd leadership away from and removes the etcd member of a Machine before the Machine goes (through the
// kcp-cleanup pre-terminate hook), remediates Machines a MachineHealthCheck marked, and reports the health of
// every Machine's API server, controller manager, scheduler and etcd member from the control plane Pods and
// the etcd member list, which it reads through the workload cluster's API server.
//
// It watches KubeadmControlPlanes, their Machines, their Clusters and the connection to each workload cluster.
package kubeadmcontrolplane

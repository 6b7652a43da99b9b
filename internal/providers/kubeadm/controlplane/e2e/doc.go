// Package e2e tests the kubeadm control plane provider end to end: the core controllers, the kubeadm
// bootstrap and control plane providers and the local infrastructure provider running real etcd members and
// kube-apiservers per control plane Machine, against a real management API server.
package e2e

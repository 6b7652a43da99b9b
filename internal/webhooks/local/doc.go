// Package local holds the admission webhooks of the local infrastructure provider (`capstan infra-local`,
// capl-controller-manager): they refuse, on KubeadmControlPlanes whose machines are LocalMachines and on
// KubeadmConfigs of Clusters whose infrastructure is a LocalCluster, the kube-apiserver and etcd extra
// arguments the provider does not run on a shared machine (backend.Violations), naming each. The provider
// checks the same again when it reads a machine's bootstrap data. Its manifests are
// config/local/webhooks.yaml, written by `make generate`.
package local

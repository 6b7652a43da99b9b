// Package embedded runs capstan's embedded management cluster: etcd, kube-apiserver and a
// kube-controller-manager limited to garbage collection, namespace lifecycle, service accounts and RBAC
// aggregation, as supervised child processes on loopback, with generated certificates and every piece of
// state under one directory (~/.capstan/<name> by default). Starting it again on the same directory keeps
// every object. The local runtime (package runtime) runs provider Deployments as local processes, and the
// repository file set makes capstan's own provider releases available to clusterctl offline.
package embedded

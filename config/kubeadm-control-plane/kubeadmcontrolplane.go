// Package kubeadmcontrolplane embeds the manifests of capstan's kubeadm control plane provider
// (control-plane-kubeadm): its Namespace, RBAC (including the ClusterRole aggregated into the core's), the
// manager Deployment and its metadata.yaml, from which release artifacts are rendered.
package kubeadmcontrolplane

import "embed"

// Files holds namespace.yaml, rbac.yaml, manager.yaml and metadata.yaml.
//
//go:embed *.yaml
var Files embed.FS

// Package local embeds the manifests of capstan's local infrastructure provider (infrastructure-local):
// its Namespace, RBAC (including the ClusterRole aggregated into the core's), the manager Deployment, its
// metadata.yaml and its cluster templates, from which release artifacts are rendered.
package local

import "embed"

// Files holds namespace.yaml, rbac.yaml, manager.yaml, webhooks.yaml (generated), metadata.yaml and the
// cluster-template*.yaml files.
//
//go:embed *.yaml
var Files embed.FS

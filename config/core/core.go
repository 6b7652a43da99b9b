// Package core embeds the manifests of capstan's core provider (Namespace, RBAC, the manager Deployment,
// its webhooks) and its metadata.yaml, from which release components are rendered.
package core

import "embed"

// Files holds namespace.yaml, rbac.yaml, manager.yaml, webhooks.yaml (generated) and metadata.yaml.
//
//go:embed *.yaml
var Files embed.FS

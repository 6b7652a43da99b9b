// Package core embeds the manifests of capstan's core provider (Namespace, RBAC, the manager Deployment)
// and its metadata.yaml, from which release components are rendered.
package core

import "embed"

// Files holds namespace.yaml, rbac.yaml, manager.yaml and metadata.yaml.
//
//go:embed *.yaml
var Files embed.FS

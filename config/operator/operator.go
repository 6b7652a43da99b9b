// Package operator embeds the manifests of the provider operator (`capstan operator`): its Namespace, RBAC
// and Deployment, from which the release's operator-components.yaml is rendered (the CRDs come from
// config/crd).
package operator

import "embed"

// Files holds namespace.yaml, rbac.yaml and manager.yaml.
//
//go:embed *.yaml
var Files embed.FS

// Package charts embeds capstan's Helm charts, which the release packages as assets (internal/release).
// A chart's crds/ folder is not embedded: it is a copy of CRDs that package config/crd already embeds.
package charts

import "embed"

// OperatorName is the name of the provider operator's chart, and of its folder.
const OperatorName = "capstan-operator"

// Operator holds the provider operator's chart under capstan-operator/: Chart.yaml, values.yaml,
// .helmignore and templates/.
//
//go:embed capstan-operator/Chart.yaml capstan-operator/values.yaml capstan-operator/.helmignore all:capstan-operator/templates
var Operator embed.FS

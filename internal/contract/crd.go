package contract

import (
	"strings"

	"github.com/gobuffalo/flect"
)

// CalculateCRDName returns the name a provider's CRD must have by the contract: "<plural>.<group>", where
// the plural is the lower-case kind pluralised the way controller-gen pluralises it, for example
// ("infrastructure.cluster.x-k8s.io", "LocalCluster") → "localclusters.infrastructure.cluster.x-k8s.io".
func CalculateCRDName(group, kind string) string {
	return flect.Pluralize(strings.ToLower(kind)) + "." + group
}

package components

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// certManagerGroup is cert-manager's API group.
const certManagerGroup = "cert-manager.io"

// NeedsCertManager reports whether objects need cert-manager: they hold cert-manager objects (Issuers,
// Certificates) or ask cert-manager's CA injector for a CA (cert-manager.io/inject-* annotations on
// webhook configurations, CRDs or API services).
func NeedsCertManager(objs []unstructured.Unstructured) bool {
	for i := range objs {
		if objs[i].GroupVersionKind().Group == certManagerGroup {
			return true
		}
		for k := range objs[i].GetAnnotations() {
			if strings.HasPrefix(k, certManagerGroup+"/inject-") {
				return true
			}
		}
	}
	return false
}

// NeedsCertManager reports whether the components need cert-manager (see the function NeedsCertManager).
func (c *Components) NeedsCertManager() bool { return NeedsCertManager(c.objs) }

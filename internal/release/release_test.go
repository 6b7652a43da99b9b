package release

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// capstan's providers serve their webhooks with certificates they manage themselves: clusterctl init
// must not install cert-manager for them.
func TestProvidersNeedNoCertManager(t *testing.T) {
	g := NewWithT(t)
	providers, err := Providers()
	g.Expect(err).NotTo(HaveOccurred())
	webhooks := 0
	for _, p := range providers {
		data, err := p.Components(DefaultVersion)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := manifest.Parse(data)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(components.NeedsCertManager(objs)).To(BeFalse(), "%s needs cert-manager", p.Label())
		for _, o := range objs {
			if o.GetKind() == "ValidatingWebhookConfiguration" {
				webhooks++
			}
		}
	}
	g.Expect(webhooks).To(BeNumerically(">", 0), "the core's webhooks are among the components")
}

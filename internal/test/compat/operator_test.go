package compat

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/config/crd"
)

// upstreamOperatorCRDs is a copy of the CRDs of upstream Cluster API Operator v0.28.0
// (config/crd/bases of kubernetes-sigs/cluster-api-operator), whose YAML capstan's operator must accept.
const upstreamOperatorCRDs = "testdata/upstream-operator-v0.28"

// operatorAdditions are the fields of capstan's operator CRDs that upstream's have not, by field path
// (every kind has them), each with the reason.
var operatorAdditions = map[string]string{
	".spec.paused": "the operator proposal's pause, which upstream never built: it scales the provider to zero " +
		"for contract upgrades",
}

func TestOperatorSchemasMatchUpstream(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamOperatorCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upstream).To(HaveLen(7))
	ours, err := crd.Operator()
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]bool{}
	for _, o := range ours {
		byName[o.Name] = true
	}
	for name, u := range upstream {
		if !byName[name] {
			t.Errorf("%s: capstan does not serve this CRD", name)
		}
		for _, o := range ours {
			if o.Name != name {
				continue
			}
			for _, v := range u.Spec.Versions {
				t.Run(name+"/"+v.Name, func(t *testing.T) {
					for _, d := range Compare(u, o, v.Name) {
						if reason, ok := operatorAdditions[d.Path]; ok && d.What == "not in upstream" {
							t.Logf("allowed: %s (%s)", d, reason)
							continue
						}
						t.Errorf("%s", d)
					}
				})
			}
		}
	}
	g.Expect(ours).To(HaveLen(len(upstream)), "capstan serves operator CRDs upstream has not")
}

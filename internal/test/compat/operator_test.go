package compat

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

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
	".spec.manager.debug":                                         debugAddition,
	".spec.additionalDeployments{}.manager.debug":                 debugAddition,
	".spec.deployment.containers[].image":                         imageAddition,
	".spec.additionalDeployments{}.deployment.containers[].image": imageAddition,
	".status.fetchedRelease":                                      "pins the release the operator fetched and cached (digest), so that a tampered cache is refused",
}

const (
	debugAddition = "the operator proposal's debug mode (verbosity 5, the profiler on localhost:6060, no other change meanwhile)"
	imageAddition = "the operator proposal's image overrides by part (repository, name, tag), which upstream's v1alpha1 had"
)

func TestOperatorSchemasMatchUpstream(t *testing.T) {
	g := NewWithT(t)
	upstream, err := LoadDir(upstreamOperatorCRDs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upstream).To(HaveLen(7))
	all, err := crd.Operator()
	g.Expect(err).NotTo(HaveOccurred())
	// The proposal's management.cluster.x-k8s.io API, which upstream never served, is capstan's.
	var ours []*apiextensionsv1.CustomResourceDefinition
	for _, o := range all {
		if o.Spec.Group == "operator.cluster.x-k8s.io" {
			ours = append(ours, o)
		}
	}
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

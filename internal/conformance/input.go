package conformance

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/contract"
)

// input is everything the checks look at: the provider, its CRDs by group and kind, its release
// artifacts, and what the behavioural scenario saw.
type input struct {
	p    Provider
	crds map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition

	// repo is the newest release in the repository; nil when there is none (see repoSkipped).
	repo *release
	// repoProblems are problems with the repository's layout, for the repository rule.
	repoProblems []string
	// repoSkipped says why repo is nil.
	repoSkipped string

	// run is what the behavioural scenario saw; nil when it did not run (see runSkipped).
	run        *run
	runSkipped string
}

func newInput(p Provider) *input {
	if p.InfraCluster.Empty() && p.NewInfraCluster != nil {
		p.InfraCluster = p.NewInfraCluster("default", "probe").GroupVersionKind()
	}
	if p.InfraMachine.Empty() && p.NewInfraMachine != nil {
		p.InfraMachine = p.NewInfraMachine("default", "probe").GroupVersionKind()
	}
	in := &input{p: p, crds: map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition{}}
	for _, crd := range p.CRDs {
		in.crds[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd
	}
	if p.Repository == nil {
		in.repoSkipped = "Not checked: the provider has no repository (Provider.Repository)"
	} else {
		in.repo, in.repoProblems, in.repoSkipped = loadRepository(p.Repository, in.label())
	}
	return in
}

// label is the provider's manifest label, infrastructure-<name>.
func (in *input) label() string {
	return clusterctlv1.ManifestLabel(in.p.Name, clusterctlv1.InfrastructureProviderType)
}

// kinds returns the kinds Cluster API's core interacts with: the InfraCluster, the InfraMachine, the
// InfraMachinePool when the provider has one, and their templates, whether or not the provider defines them.
func (in *input) kinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, gvk := range []schema.GroupVersionKind{in.p.InfraCluster, in.p.InfraMachine, in.p.InfraMachinePool} {
		if gvk.Kind == "" {
			continue
		}
		out = append(out, gvk.GroupKind(), schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind + "Template"})
	}
	return out
}

// contractCRDs returns the CRDs of the kinds Cluster API's core interacts with that the provider defines,
// in a stable order.
func (in *input) contractCRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, gk := range in.kinds() {
		if crd, ok := in.crds[gk]; ok {
			out = append(out, crd)
		}
	}
	return out
}

// noKinds is the verdict of the static rules when there is nothing to check.
func (in *input) noKinds() (verdict, bool) {
	if in.p.InfraCluster.Kind == "" {
		return fail("No InfraCluster kind: set Provider.InfraCluster or Provider.NewInfraCluster"), true
	}
	if len(in.contractCRDs()) == 0 {
		return fail("None of the provider's CRDs defines %s", in.p.InfraCluster.GroupKind()), true
	}
	return verdict{}, false
}

// contractOf returns the contract a kind follows by its CRD's labels, V1Beta1 when it cannot tell (the
// version rule reports that), and the schema of the version the contract maps to.
func (in *input) contractOf(gk schema.GroupKind) (contract.Version, *apiextensionsv1.JSONSchemaProps) {
	crd, ok := in.crds[gk]
	if !ok {
		return contract.V1Beta1, nil
	}
	version := ""
	c := contract.V1Beta1
	if info, err := contract.FromLabels(gk, crd.Labels); err == nil {
		c = info.Contract
		version = info.APIVersion[strings.LastIndex(info.APIVersion, "/")+1:]
	}
	for _, v := range crd.Spec.Versions {
		if (version == "" && v.Storage) || v.Name == version {
			if v.Schema != nil {
				return c, v.Schema.OpenAPIV3Schema
			}
		}
	}
	return c, nil
}

// crdKinds returns the kinds of some CRDs, for messages.
func crdKinds(crds []*apiextensionsv1.CustomResourceDefinition) string {
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		names = append(names, crd.Spec.Names.Kind)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

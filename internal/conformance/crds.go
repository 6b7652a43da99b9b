package conformance

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// infrastructureGroup is the API group of the infrastructure providers of SIG Cluster Lifecycle; Cluster
// API's core has full access to it without any RBAC from the provider.
const infrastructureGroup = "infrastructure.cluster.x-k8s.io"

// aggregateToManagerLabel on a ClusterRole adds its rules to Cluster API's core controllers.
const aggregateToManagerLabel = "cluster.x-k8s.io/aggregate-to-manager"

var (
	// contractLabel matches the labels that map a contract to CRD versions, cluster.x-k8s.io/<contract>.
	contractLabel = regexp.MustCompile(`^` + regexp.QuoteMeta(clusterv1.ContractLabelPrefix) + `/(v\d+((alpha|beta)\d+)?)$`)
	// kubeVersion matches API versions that follow the Kubernetes API versioning policy.
	kubeVersion = regexp.MustCompile(`^v\d+((alpha|beta)\d+)?$`)
)

func checkScope(in *input) verdict {
	if v, stop := in.noKinds(); stop {
		return v
	}
	crds := in.contractCRDs()
	var bad []string
	for _, crd := range crds {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			bad = append(bad, fmt.Sprintf("%s is %s-scoped", crd.Name, crd.Spec.Scope))
		}
	}
	if len(bad) > 0 {
		return fail("Resources must be namespace-scoped: %s", strings.Join(bad, "; "))
	}
	return pass("%s are namespace-scoped", crdKinds(crds))
}

func checkTypeMeta(in *input) verdict {
	if v, stop := in.noKinds(); stop {
		return v
	}
	crds := in.contractCRDs()
	var bad []string
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				bad = append(bad, fmt.Sprintf("%s %s has no schema", crd.Name, v.Name))
				continue
			}
			props := v.Schema.OpenAPIV3Schema.Properties
			for field, want := range map[string]string{"apiVersion": "string", "kind": "string", "metadata": "object"} {
				if p, ok := props[field]; !ok || p.Type != want {
					bad = append(bad, fmt.Sprintf("%s %s has no %s field of type %s", crd.Name, v.Name, field, want))
				}
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fail("Resources must have the standard TypeMeta and ObjectMeta: %s", strings.Join(bad, "; "))
	}
	return pass("%s have apiVersion, kind and metadata in every served version", crdKinds(crds))
}

func checkAPIGroup(in *input) verdict {
	if v, stop := in.noKinds(); stop {
		return v
	}
	var others []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range in.contractCRDs() {
		if crd.Spec.Group != infrastructureGroup {
			others = append(others, crd)
		}
	}
	if len(others) == 0 {
		return pass("The resources are in %s, which Cluster API's controllers can read and write", infrastructureGroup)
	}
	if in.repo == nil {
		return skip("%s are not in %s, so the components must grant Cluster API's controllers access with an aggregated ClusterRole; not checked: %s",
			crdKinds(others), infrastructureGroup, in.repoSkipped)
	}
	rules := in.repo.components.aggregatedRules()
	var bad []string
	for _, crd := range others {
		verbs := []string{"create", "delete", "get", "list", "patch", "update", "watch"}
		if strings.HasSuffix(crd.Spec.Names.Kind, "Template") {
			verbs = []string{"get", "list", "patch", "update", "watch"}
		}
		if lacking := lackingVerbs(rules, crd.Spec.Group, crd.Spec.Names.Plural, verbs); len(lacking) > 0 {
			bad = append(bad, fmt.Sprintf("%s.%s (%s)", crd.Spec.Names.Plural, crd.Spec.Group, strings.Join(lacking, ", ")))
		}
	}
	if len(bad) > 0 {
		return fail("No ClusterRole labelled %s: \"true\" in the components grants Cluster API's controllers: %s",
			aggregateToManagerLabel, strings.Join(bad, "; "))
	}
	return pass("%s are outside %s and a ClusterRole labelled %s grants Cluster API's controllers access to them",
		crdKinds(others), infrastructureGroup, aggregateToManagerLabel)
}

func checkVersion(in *input) verdict {
	if v, stop := in.noKinds(); stop {
		return v
	}
	crds := in.contractCRDs()
	var bad, notes []string
	for _, crd := range crds {
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		if _, err := contract.FromLabels(gk, crd.Labels); err != nil {
			bad = append(bad, fmt.Sprintf("%s has no contract label %s or %s", crd.Name, contract.V1Beta1.Label(), contract.V1Beta2.Label()))
		}
		served := map[string]bool{}
		for _, v := range crd.Spec.Versions {
			served[v.Name] = v.Served
			if !kubeVersion.MatchString(v.Name) {
				notes = append(notes, fmt.Sprintf("%s version %s does not follow the Kubernetes API versioning", crd.Name, v.Name))
			}
		}
		for _, key := range sortedKeys(crd.Labels) {
			if !contractLabel.MatchString(key) {
				continue
			}
			for _, v := range strings.Split(crd.Labels[key], "_") {
				if !served[v] {
					bad = append(bad, fmt.Sprintf("label %s of %s names version %q, which the CRD does not serve", key, crd.Name, v))
				}
			}
		}
	}
	if len(bad) > 0 {
		return fail("%s", strings.Join(bad, "; "))
	}
	msg := fmt.Sprintf("%s carry a contract label naming served versions", crdKinds(crds))
	if len(notes) > 0 {
		msg += " (note: " + strings.Join(notes, "; ") + ")"
	}
	return pass("%s", msg)
}

func checkInfraClusterDefinition(in *input) verdict {
	return checkDefinition(in, in.p.InfraCluster, "InfraCluster")
}

func checkInfraMachineDefinition(in *input) verdict {
	if in.p.InfraMachine.Kind == "" {
		return skip("Not checked: the provider has no InfraMachine kind (Provider.InfraMachine or NewInfraMachine)")
	}
	return checkDefinition(in, in.p.InfraMachine, "InfraMachine")
}

// checkDefinition checks the CRD of a contract kind: it exists, has the computed name and the list kind,
// and serves the version the kit uses.
func checkDefinition(in *input, gvk schema.GroupVersionKind, role string) verdict {
	if gvk.Kind == "" {
		return fail("No %s kind: set Provider.%s or Provider.New%s", role, role, role)
	}
	crd, ok := in.crds[gvk.GroupKind()]
	if !ok {
		return missing("None of the provider's CRDs defines %s", gvk.GroupKind())
	}
	if problems := definitionProblems(crd, gvk.Kind); len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	if !slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == gvk.Version && v.Served
	}) {
		return fail("CRD %s does not serve version %s", crd.Name, gvk.Version)
	}
	return pass("CRD %s defines %s and %sList", crd.Name, gvk.Kind, gvk.Kind)
}

func checkInfraClusterTemplateDefinition(in *input) verdict {
	if in.p.InfraCluster.Kind == "" {
		return fail("No InfraCluster kind: set Provider.InfraCluster or Provider.NewInfraCluster")
	}
	return checkTemplateDefinition(in, in.p.InfraCluster.GroupKind(), "ClusterClasses cannot use the provider")
}

func checkInfraMachineTemplateDefinition(in *input) verdict {
	if in.p.InfraMachine.Kind == "" {
		return skip("Not checked: the provider has no InfraMachine kind (Provider.InfraMachine or NewInfraMachine)")
	}
	return checkTemplateDefinition(in, in.p.InfraMachine.GroupKind(), "MachineDeployments and MachineSets cannot create Machines of the provider")
}

// checkTemplateDefinition checks the CRD of the template of a contract kind.
func checkTemplateDefinition(in *input, of schema.GroupKind, without string) verdict {
	gk := schema.GroupKind{Group: of.Group, Kind: of.Kind + clusterv1.TemplateSuffix}
	crd, ok := in.crds[gk]
	if !ok {
		return missing("None of the provider's CRDs defines %s: %s", gk, without)
	}
	problems := definitionProblems(crd, gk.Kind)
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema == nil {
			continue
		}
		if kept, _ := field(v.Schema.OpenAPIV3Schema, "spec", "template", "spec"); !kept {
			problems = append(problems, fmt.Sprintf("version %s of %s has no spec.template.spec", v.Name, crd.Name))
		}
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	return pass("CRD %s defines %s and %sList with spec.template.spec", crd.Name, gk.Kind, gk.Kind)
}

// definitionProblems checks a CRD's name and list kind.
func definitionProblems(crd *apiextensionsv1.CustomResourceDefinition, kind string) []string {
	var out []string
	if want := contract.CalculateCRDName(crd.Spec.Group, kind); crd.Name != want {
		out = append(out, fmt.Sprintf("the CRD of %s is named %s, want %s (CalculateCRDName)", kind, crd.Name, want))
	}
	if want := kind + "List"; crd.Spec.Names.ListKind != want {
		out = append(out, fmt.Sprintf("the list kind of %s is %q, want %s", kind, crd.Spec.Names.ListKind, want))
	}
	return out
}

// field looks a field path up in a structural schema. kept says whether the API server keeps such a field
// rather than pruning it: it is declared, or it falls under x-kubernetes-preserve-unknown-fields or
// additionalProperties. declared is the field's schema when it is declared.
func field(s *apiextensionsv1.JSONSchemaProps, path ...string) (kept bool, declared *apiextensionsv1.JSONSchemaProps) {
	cur := s
	for _, name := range path {
		if cur == nil {
			return false, nil
		}
		if p, ok := cur.Properties[name]; ok {
			cur = &p
			continue
		}
		if cur.AdditionalProperties != nil && cur.AdditionalProperties.Schema != nil {
			cur = cur.AdditionalProperties.Schema
			continue
		}
		if ptr.Deref(cur.XPreserveUnknownFields, false) || (cur.AdditionalProperties != nil && cur.AdditionalProperties.Allows) {
			return true, nil
		}
		return false, nil
	}
	return true, cur
}

// fieldProblem says what is wrong with a field the provider must be able to write: pruned by the schema,
// or declared with another type. Empty when nothing is.
func fieldProblem(s *apiextensionsv1.JSONSchemaProps, typ string, path ...string) string {
	if s == nil {
		return ""
	}
	kept, declared := field(s, path...)
	switch {
	case !kept:
		return fmt.Sprintf("the schema prunes .%s", strings.Join(path, "."))
	case declared != nil && declared.Type != "" && declared.Type != typ:
		return fmt.Sprintf(".%s is declared as %s, want %s", strings.Join(path, "."), declared.Type, typ)
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

package conformance

import (
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

const fixtureRelease = "infrastructure-fixture/v0.1.0/"

// fixtureFiles returns the files of the fixture's release, by name.
func fixtureFiles(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(path.Join(fixtureRepository, fixtureRelease))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(path.Join(fixtureRepository, fixtureRelease, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// staticInput returns the input of the fixture provider with its release files changed: a file set to ""
// is removed.
func staticInput(t *testing.T, change map[string]string) *input {
	t.Helper()
	p, err := fixtureProvider(fixtureBehaviour{})
	if err != nil {
		t.Fatal(err)
	}
	files := fixtureFiles(t)
	for name, text := range change {
		if text == "" {
			delete(files, name)
		} else {
			files[name] = text
		}
	}
	repo := fstest.MapFS{}
	for name, text := range files {
		repo[fixtureRelease+name] = &fstest.MapFile{Data: []byte(text)}
	}
	p.Repository = repo
	in := newInput(p)
	in.runSkipped = "Not checked: no API server (Options.Config)"
	return in
}

func TestVariables(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		names    []string
		problems int
		spaced   []int
	}{
		{name: "plain and defaults", text: "a: ${A}\nb: ${B:=x}\nc: ${C=y} ${D:-z}", names: []string{"A", "B", "C", "D"}},
		{name: "nested default", text: "a: ${A:=${B}}", names: []string{"A", "B"}},
		{name: "escaped", text: "a: $${NOT_A_VARIABLE}", names: nil},
		{name: "deprecated spaces", text: "a: ${ A }\nb: ${B }", names: []string{"A", "B"}, spaced: []int{1, 2}},
		{name: "unsupported ${VAR$FOO}", text: "a: ${A$B}", problems: 1},
		{name: "unclosed", text: "a: ${A", problems: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			use := variables(tt.text)
			if len(tt.names) == 0 {
				g.Expect(use.names).To(BeEmpty())
			} else {
				g.Expect(use.names).To(Equal(tt.names))
			}
			g.Expect(use.problems).To(HaveLen(tt.problems), "%v", use.problems)
			g.Expect(use.spaced).To(Equal(tt.spaced))
		})
	}
}

func TestLoadRepository(t *testing.T) {
	files := func(names ...string) fstest.MapFS {
		out := fstest.MapFS{}
		for _, n := range names {
			out[n] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")}
		}
		return out
	}
	tests := []struct {
		name     string
		repo     fstest.MapFS
		newest   string
		problems []string
	}{
		{
			name:   "newest of several versions",
			repo:   files("infrastructure-x/v0.1.0/metadata.yaml", "infrastructure-x/v0.1.0/infrastructure-components.yaml", "infrastructure-x/v0.10.0/metadata.yaml", "infrastructure-x/v0.10.0/infrastructure-components.yaml", "infrastructure-x/v0.9.1/metadata.yaml", "infrastructure-x/v0.9.1/infrastructure-components.yaml"),
			newest: "infrastructure-x/v0.10.0",
		},
		{
			name:     "no folder for the provider",
			repo:     files("infrastructure-y/v0.1.0/metadata.yaml"),
			problems: []string{"no folder infrastructure-x at the root of the repository (found: infrastructure-y)"},
		},
		{
			name:     "not a semantic version, missing files",
			repo:     files("infrastructure-x/latest/metadata.yaml", "infrastructure-x/v1.0.0/cluster-template.yaml"),
			newest:   "infrastructure-x/v1.0.0",
			problems: []string{"folder infrastructure-x/latest is not a semantic version", "infrastructure-x/v1.0.0 has no metadata.yaml", "infrastructure-x/v1.0.0 has no components YAML"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, problems, _ := loadRepository(tt.repo, "infrastructure-x")
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			got := ""
			if r != nil {
				got = r.dir
			}
			if got != tt.newest {
				t.Errorf("newest release %q, want %q", got, tt.newest)
			}
		})
	}
}

// clusterctlRuleTests are changes to the fixture's release and what one rule then says.
var clusterctlRuleTests = []struct {
	name    string
	change  map[string]string
	rule    func(*input) verdict
	want    outcome
	message string
}{
	{
		name:   "metadata: unknown field",
		change: map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta1\n  contracts: v1beta1\n"},
		rule:   checkMetadata, want: broken, message: "does not decode strictly",
	},
	{
		name:   "metadata: wrong kind",
		change: map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadatas\nreleaseSeries: []\n"},
		rule:   checkMetadata, want: broken, message: "want clusterctl.cluster.x-k8s.io/v1alpha3 Metadata",
	},
	{
		name:   "metadata: no series for the version",
		change: map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 2\n  contract: v1beta1\n"},
		rule:   checkMetadata, want: broken, message: "no release series v0.1 for version 0.1.0",
	},
	{
		name:   "metadata: duplicate series and a contract capstan does not drive",
		change: map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1alpha4\n- major: 0\n  minor: 1\n  contract: v1alpha4\n"},
		rule:   checkMetadata, want: broken, message: "release series v0.1 is listed twice; release series v0.1 follows contract v1alpha4",
	},
	{
		name:   "metadata: contract the CRDs do not declare",
		change: map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta2\n"},
		rule:   checkMetadata, want: broken, message: "has no cluster.x-k8s.io/v1beta2 label",
	},
	{
		name:   "repository: no metadata",
		change: map[string]string{"metadata.yaml": ""},
		rule:   checkRepository, want: broken, message: "infrastructure-fixture/v0.1.0 has no metadata.yaml",
	},
	{
		name:   "components: other name",
		change: map[string]string{componentsFile: "", "components.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"},
		rule:   checkComponentsNaming, want: unmet, message: "named components.yaml",
	},
	{
		name:   "components: no Namespace",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: other\n"},
		rule:   checkOneNamespace, want: unmet, message: "must give clusterctl init a --target-namespace",
	},
	{
		name:   "components: object outside the target namespace",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: other\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n"},
		rule:   checkTargetNamespace, want: broken, message: "Objects outside the target namespace x: ConfigMap/c in other",
	},
	{
		name:   "components: does not decode",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata: [\n"},
		rule:   checkOneNamespace, want: broken, message: "does not decode",
	},
	{
		name:   "components: unsupported variable",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NS$SUFFIX}\n"},
		rule:   checkComponentsVariables, want: broken, message: "line 4",
	},
	{
		name:   "components: labels missing",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"},
		rule:   checkComponentsLabels, want: unmet, message: "1 of 1 objects have no cluster.x-k8s.io/provider=infrastructure-fixture label",
	},
	{
		name:   "components: label of another provider",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-other\n"},
		rule:   checkComponentsLabels, want: broken, message: "Namespace/x",
	},
	{
		name:   "components: no Deployment",
		change: map[string]string{componentsFile: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"},
		rule:   checkController, want: broken, message: "has no Deployment",
	},
	{
		name:   "templates: misnamed",
		change: map[string]string{"cluster-template_prod.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n"},
		rule:   checkTemplateNaming, want: broken, message: "cluster-template_prod.yaml is not cluster-template.yaml or cluster-template-<flavor>.yaml",
	},
	{
		name:   "templates: a Cluster in another file",
		change: map[string]string{"example.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: x\n"},
		rule:   checkTemplateNaming, want: broken, message: "example.yaml holds a Cluster",
	},
	{
		name:   "templates: none",
		change: map[string]string{"cluster-template.yaml": "", "cluster-template-topology.yaml": ""},
		rule:   checkTemplateNaming, want: unmet, message: "has no cluster templates",
	},
	{
		name:   "templates: a Namespace and a hard-coded namespace",
		change: map[string]string{"cluster-template.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE}\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n  namespace: default\n"},
		rule:   checkTemplateNamespace, want: broken, message: "cluster-template.yaml creates Namespace/conformance-ns: templates must assume the target namespace exists; cluster-template.yaml puts objects in namespace default",
	},
	{
		name:   "templates: Cluster not named ${CLUSTER_NAME}",
		change: map[string]string{"cluster-template.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: ${MY_NAME:=demo}\n"},
		rule:   checkTemplateVariables, want: unmet, message: "The Cluster of cluster-template.yaml is not named ${CLUSTER_NAME}",
	},
	{
		name:   "templates: not YAML once substituted",
		change: map[string]string{"cluster-template.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n  labels: ${LABELS:=[}\n"},
		rule:   checkTemplateVariables, want: broken, message: "cluster-template.yaml does not decode once substituted",
	},
	{
		name:   "ClusterClass: file named after another class",
		change: map[string]string{"clusterclass-quick-start.yaml": "", "clusterclass-prod.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: dev\n"},
		rule:   checkClusterClassNaming, want: broken, message: "clusterclass-prod.yaml must hold the ClusterClass prod",
	},
	{
		name:   "ClusterClass: none",
		change: map[string]string{"clusterclass-quick-start.yaml": "", "clusterclass-single-node.yaml": ""},
		rule:   checkClusterClassNaming, want: unmet, message: "has no ClusterClass definitions",
	},
	{
		name: "ClusterClass: an identical template shared by two definitions",
		change: map[string]string{"clusterclass-copy.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: copy\nspec:\n  infrastructure:\n    ref:\n      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n      kind: FixtureClusterTemplate\n      name: quick-start-cluster\n---\n" +
			"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: FixtureClusterTemplate\nmetadata:\n  name: quick-start-cluster\nspec:\n  template:\n    spec: {}\n"},
		rule: checkClusterClassSharedObjects, want: unmet,
		message: "Objects are shared between ClusterClass definitions (changing one changes every ClusterClass using it): FixtureClusterTemplate.infrastructure.cluster.x-k8s.io/quick-start-cluster in clusterclass-copy.yaml, clusterclass-quick-start.yaml",
	},
	{
		name:   "ClusterClass: namespaces",
		change: map[string]string{"clusterclass-quick-start.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: quick-start\n  namespace: default\nspec:\n  infrastructure:\n    ref:\n      kind: FixtureClusterTemplate\n      name: t\n      namespace: default\n"},
		rule:   checkClusterClassNamespace, want: unmet, message: "ClusterClass/quick-start has a reference with a namespace at .spec.infrastructure.ref",
	},
	{
		name:   "ClusterClass: variables",
		change: map[string]string{"clusterclass-quick-start.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: ${CLASS_NAME:=quick-start}\n"},
		rule:   checkClusterClassVariables, want: unmet, message: "clusterclass-quick-start.yaml uses CLASS_NAME",
	},
}

func TestClusterctlRules(t *testing.T) {
	for _, tt := range clusterctlRuleTests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v := tt.rule(staticInput(t, tt.change))
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}

func TestAPIGroupOutsideInfrastructure(t *testing.T) {
	const group = "infrastructure.foo.com"
	role := func(verbs string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: capi-foo\n  labels:\n    cluster.x-k8s.io/aggregate-to-manager: \"true\"\nrules:\n" +
			"- apiGroups: [" + group + "]\n  resources: [fixtureclusters, fixturemachines]\n  verbs: [" + verbs + "]\n" +
			"- apiGroups: [" + group + "]\n  resources: [fixtureclustertemplates, fixturemachinetemplates]\n  verbs: [get, list, patch, update, watch]\n"
	}
	tests := []struct {
		name       string
		components string
		want       outcome
		message    string
	}{
		{name: "aggregated ClusterRole", components: role("create, delete, get, list, patch, update, watch"), want: met},
		{name: "verbs missing", components: role("get, list, watch"), want: broken, message: "fixtureclusters.infrastructure.foo.com (create, delete, patch, update)"},
		{name: "not aggregated", components: strings.Replace(role("'*'"), "\"true\"", "\"false\"", 1), want: broken},
		{name: "wildcard verbs", components: role("'*'"), want: met},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := staticInput(t, map[string]string{componentsFile: tt.components})
			for _, crd := range in.p.CRDs {
				crd.Spec.Group = group
			}
			in.p.InfraCluster.Group, in.p.InfraMachine.Group = group, group
			in = newInput(in.p)
			v := checkAPIGroup(in)
			g.Expect(v.outcome).To(Equal(tt.want), v.message)
			g.Expect(v.message).To(ContainSubstring(tt.message))
		})
	}
}

func TestRBACOfTheController(t *testing.T) {
	g := NewWithT(t)
	components := fixtureFiles(t)[componentsFile]
	in := staticInput(t, map[string]string{componentsFile: strings.Replace(components,
		"resources: [fixtureclusters/status, fixturemachines/status]", "resources: [fixtureclusters/status]", 1)})
	v := checkRBAC(in)
	g.Expect(v.outcome).To(Equal(broken), v.message)
	g.Expect(v.message).To(Equal("ServiceAccount fixture-manager of Deployment fixture-controller-manager may not update, patch fixturemachines/status.infrastructure.cluster.x-k8s.io"))
}

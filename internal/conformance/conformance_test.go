package conformance

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// behaviouralOptions are short waits: the fixture provider acts within milliseconds.
func behaviouralOptions(t *testing.T) Options {
	return Options{Config: env.Config, Timeout: 20 * time.Second, Quiet: 1500 * time.Millisecond, Interval: 100 * time.Millisecond, Logf: func(f string, a ...any) { t.Logf(time.Now().Format("15:04:05.000 ")+f, a...) }}
}

// statuses returns the status of every rule of a report, by rule.
func statuses(r Report) map[string]Status {
	out := map[string]Status{}
	for _, res := range r {
		out[res.Rule] = res.Status
	}
	return out
}

// failedRules returns the names of the rules that failed.
func failedRules(r Report) []string {
	var out []string
	for _, res := range r.Failed() {
		out = append(out, res.Rule)
	}
	return out
}

func TestConformantFixturePassesEveryRule(t *testing.T) {
	for _, tt := range []struct {
		name      string
		behaviour fixtureBehaviour
		endpoint  string
	}{
		{name: "provides its endpoint", endpoint: "has spec.controlPlaneEndpoint 127.0.0.1:6443"},
		{name: "waits for the Cluster's endpoint", behaviour: fixtureBehaviour{endpointFromCluster: true}, endpoint: "waited for the Cluster's"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := fixtureProvider(tt.behaviour)
			g.Expect(err).NotTo(HaveOccurred())

			report := Check(t.Context(), p, behaviouralOptions(t))

			want := map[string]Status{}
			for _, r := range Rules() {
				want[r.Name] = Pass
			}
			// The fixture provider has no InfraMachinePool: MachinePools are optional.
			for _, r := range poolRules {
				want[r.Name] = Skip
			}
			if diff := cmp.Diff(want, statuses(report)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s\n%s", diff, report)
			}
			res, _ := report.Result(RuleControlPlaneEndpoint)
			g.Expect(res.Message).To(ContainSubstring(tt.endpoint))
		})
	}
}

// TestBrokenBehaviourFailsNamingTheRule runs copies of the fixture provider that each break one rule of
// its behaviour, and checks that exactly that rule fails, with the message saying what the kit saw. The
// broken optional rules are claimed (Provider.Implements): an optional rule not followed is otherwise a
// warning.
func TestBrokenBehaviourFailsNamingTheRule(t *testing.T) {
	tests := []struct {
		name      string
		behaviour fixtureBehaviour
		claimed   bool
		failed    string
		message   string
	}{
		{
			name: "ignores the managed-by label", behaviour: fixtureBehaviour{ignoreManagedByLabel: true}, claimed: true,
			failed: RuleExternallyManaged, message: "changed an InfraCluster labelled cluster.x-k8s.io/managed-by (as the contract text names it)",
		},
		{
			name: "Ready True while deleting", behaviour: fixtureBehaviour{readyWhileDeleting: true},
			failed: RuleReadyDeletion, message: "The deleted InfraCluster still reports Ready True",
		},
		{
			name: "overwrites the labels the template gave", behaviour: fixtureBehaviour{replaceMachineLabels: true},
			failed: RuleTemplateMetadata, message: "lost the template's metadata once the provider provisioned it: label conformance.cluster.x-k8s.io/template-label=from-template",
		},
		{
			name: "does not rebuild status after a move", behaviour: fixtureBehaviour{statusOnce: true},
			failed: RuleMoveStatus, message: "the InfraCluster was not provisioned again",
		},
		{
			name: "provisioned before the Cluster has an endpoint", behaviour: fixtureBehaviour{endpointFromCluster: true, noEndpointWait: true},
			failed: RuleControlPlaneEndpoint, message: "reported it was provisioned before its Cluster had one",
		},
		{
			name: "ignores --namespace and --watch-filter", behaviour: fixtureBehaviour{ignoreScope: true}, claimed: true,
			failed: RuleMultiTenancy, message: "it changed an InfraCluster of namespace",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := fixtureProvider(tt.behaviour)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.claimed {
				p.Implements = []string{tt.failed}
			}

			report := Check(t.Context(), p, behaviouralOptions(t))

			g.Expect(failedRules(report)).To(ConsistOf(tt.failed), report.String())
			res, _ := report.Result(tt.failed)
			g.Expect(res.Message).To(ContainSubstring(tt.message))
		})
	}
}

func TestProviderIgnoringPauseFailsThePausingRules(t *testing.T) {
	g := NewWithT(t)
	p, err := fixtureProvider(fixtureBehaviour{ignorePause: true})
	g.Expect(err).NotTo(HaveOccurred())

	report := Check(t.Context(), p, behaviouralOptions(t))

	g.Expect(failedRules(report)).To(ConsistOf(RuleInfraClusterPausing, RuleInfraMachinePausing), report.String())
	res, _ := report.Result(RuleInfraClusterPausing)
	g.Expect(res.Message).To(And(
		ContainSubstring("of a Cluster with spec.paused was reconciled while paused"),
		ContainSubstring("annotated cluster.x-k8s.io/paused was reconciled while paused"),
		ContainSubstring("deleted (its finalizer removed) while its Cluster was paused"),
	))
}

// brokenFixture is the fixture provider with its CRDs or artifacts changed.
type brokenFixture struct {
	name string
	// crds changes the fixture's CRDs (the InfraCluster CRD is first).
	crds func(crds []*apiextensionsv1.CustomResourceDefinition)
	// components changes the text of the components YAML.
	components func(text string) string
	// provider changes the provider.
	provider func(p *Provider)
	// files are files added to the release.
	files map[string]string
	// implements are the optional rules the provider claims.
	implements []string
	// failed are the rules that must fail.
	failed []string
	// message is in the message of the first rule of failed.
	message string
}

func TestBrokenFixturesFailNamingTheRule(t *testing.T) {
	tests := []brokenFixture{
		{
			name: "cluster-scoped InfraCluster CRD",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				crds[0].Spec.Scope = apiextensionsv1.ClusterScoped
			},
			components: func(text string) string {
				return strings.Replace(text, "scope: Namespaced", "scope: Cluster", 1)
			},
			failed:  []string{RuleScope},
			message: "fixtureclusters.infrastructure.cluster.x-k8s.io is Cluster-scoped",
		},
		{
			name: "missing contract label",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				delete(crds[0].Labels, "cluster.x-k8s.io/v1beta1")
			},
			components: func(text string) string {
				return strings.Replace(text, "    cluster.x-k8s.io/v1beta1: v1beta1\n", "", 1)
			},
			// metadata.yaml maps the release to a contract the InfraCluster CRD no longer declares.
			failed:  []string{RuleVersion, RuleMetadata},
			message: "fixtureclusters.infrastructure.cluster.x-k8s.io has no contract label cluster.x-k8s.io/v1beta1 or cluster.x-k8s.io/v1beta2",
		},
		{
			name: "contract label naming a version the CRD does not serve",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				crds[0].Labels["cluster.x-k8s.io/v1beta1"] = "v1beta1_v1alpha9"
			},
			components: func(text string) string {
				return strings.Replace(text, "cluster.x-k8s.io/v1beta1: v1beta1", "cluster.x-k8s.io/v1beta1: v1beta1_v1alpha9", 1)
			},
			failed:  []string{RuleVersion},
			message: `names version "v1alpha9", which the CRD does not serve`,
		},
		{
			name: "components with two Namespaces",
			components: func(text string) string {
				return text + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: fixture-extra\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-fixture\n"
			},
			failed:  []string{RuleOneNamespace},
			message: "2 Namespaces (Namespace/fixture-extra, Namespace/fixture-system): clusterctl refuses",
		},
		{
			name: "Deployment without a manager container",
			components: func(text string) string {
				return strings.Replace(text, "- name: manager", "- name: controller", 1)
			},
			failed:  []string{RuleController},
			message: "Deployment fixture-controller-manager has no container named manager",
		},
		{
			name: "CRD misnamed",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				crds[0].Name = "fixtureclusteres.infrastructure.cluster.x-k8s.io"
			},
			components: func(text string) string {
				return strings.Replace(text, "name: fixtureclusters.", "name: fixtureclusteres.", 1)
			},
			failed:  []string{RuleInfraClusterDefinition},
			message: "want fixtureclusters.infrastructure.cluster.x-k8s.io (CalculateCRDName)",
		},
		{
			name: "image without a registry",
			components: func(text string) string {
				return strings.Replace(text, "image: ghcr.io/capstan-dev/fixture:v0.1.0", "image: fixture:dev", 1)
			},
			implements: []string{RuleImages},
			failed:     []string{RuleImages},
			message:    `container manager of Deployment fixture-controller-manager: "fixture:dev" names no registry host`,
		},
		{
			name: "manager container without an image",
			components: func(text string) string {
				return strings.Replace(text, "        image: ghcr.io/capstan-dev/fixture:v0.1.0\n", "", 1)
			},
			failed:  []string{RuleImageOverrides},
			message: `the manager container of Deployment fixture-controller-manager runs "" once installed, not the overridden image registry.conformance.example/mirror/<name>:v0.0.0-conformance`,
		},
		{
			name: "ClusterClass definitions defining a template differently",
			files: map[string]string{"clusterclass-other.yaml": "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: other\nspec:\n  infrastructure:\n    ref:\n      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n      kind: FixtureClusterTemplate\n      name: quick-start-cluster\n---\n" +
				"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: FixtureClusterTemplate\nmetadata:\n  name: quick-start-cluster\nspec:\n  template:\n    spec:\n      controlPlaneEndpoint: {host: 10.0.0.1, port: 443}\n"},
			failed:  []string{RuleClusterClassSharedObjects},
			message: "define the same object differently, so installing one changes the others: FixtureClusterTemplate.infrastructure.cluster.x-k8s.io/quick-start-cluster in clusterclass-other.yaml, clusterclass-quick-start.yaml",
		},
		{
			name: "controller that may not read Clusters",
			components: func(text string) string {
				return strings.Replace(text, "  resources: [clusters, clusters/status, machines, machines/status]", "  resources: [machines, machines/status]", 1)
			},
			failed:  []string{RuleRBAC},
			message: "ServiceAccount fixture-manager of Deployment fixture-controller-manager may not get, list, watch clusters.cluster.x-k8s.io",
		},
		{
			name: "kinds outside infrastructure.cluster.x-k8s.io without an aggregated ClusterRole",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				for _, crd := range crds {
					crd.Spec.Group = otherGroup
					crd.Name = crd.Spec.Names.Plural + "." + otherGroup
				}
			},
			components: func(text string) string { return strings.ReplaceAll(text, infrastructureGroup, otherGroup) },
			provider: func(p *Provider) {
				p.NewInfraCluster = func(namespace, name string) *unstructured.Unstructured {
					u := newFixtureObject(fixtureClusterGVK, namespace, name)
					u.SetAPIVersion(otherGroup + "/v1beta1")
					return u
				}
				p.NewInfraMachine = func(namespace, name string) *unstructured.Unstructured {
					u := newFixtureObject(fixtureMachineGVK, namespace, name)
					u.SetAPIVersion(otherGroup + "/v1beta1")
					return u
				}
			},
			failed:  []string{RuleCoreRBAC, RuleAPIGroup},
			message: "The core's ClusterRole capi-aggregated-manager-role, through its own rules or a ClusterRole of the components labelled cluster.x-k8s.io/aggregate-to-manager: \"true\", does not grant: fixtureclusters.infrastructure.fixture.example.com (create, delete, get, list, patch, update, watch)",
		},
		{
			name: "template CRD pruning spec.template.metadata",
			crds: func(crds []*apiextensionsv1.CustomResourceDefinition) {
				for _, crd := range crds {
					if crd.Spec.Names.Kind == "FixtureMachineTemplate" {
						template := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["template"]
						delete(template.Properties, "metadata")
					}
				}
			},
			failed:  []string{RuleTemplateMetadata},
			message: "FixtureMachineTemplate v1beta1: the schema prunes .spec.template.metadata.labels",
		},
		{
			name: "components out of step with the CRDs",
			components: func(text string) string {
				return strings.Replace(text, "served: true", "served: false", 1)
			},
			failed:  []string{RuleComponentsCRDs},
			message: "CRD fixtureclusters.infrastructure.cluster.x-k8s.io differs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := fixtureProvider(fixtureBehaviour{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.CRDs[0].Spec.Names.Kind).To(Equal("FixtureCluster"))
			if tt.crds != nil {
				tt.crds(p.CRDs)
			}
			if tt.provider != nil {
				tt.provider(&p)
			}
			p.Implements = tt.implements
			p.Repository = brokenRepository(t, tt.components)
			for name, text := range tt.files {
				p.Repository.(fstest.MapFS)["infrastructure-fixture/v0.1.0/"+name] = &fstest.MapFile{Data: []byte(text)}
			}

			report := Check(t.Context(), p, Options{}) // static rules only

			g.Expect(failedRules(report)).To(ConsistOf(tt.failed), report.String())
			res, _ := report.Result(tt.failed[0])
			g.Expect(res.Message).To(ContainSubstring(tt.message))
			for _, r := range Rules() {
				if r.Behavioural && !slices.Contains(tt.failed, r.Name) {
					got, _ := report.Result(r.Name)
					g.Expect(got.Status).To(Equal(Skip), "behavioural rule %s without an API server", r.Name)
				}
			}
		})
	}
}

// brokenRepository copies the fixture's repository with its components YAML changed.
// otherGroup is an API group outside infrastructure.cluster.x-k8s.io.
const otherGroup = "infrastructure.fixture.example.com"

func brokenRepository(t *testing.T, change func(string) string) fs.FS {
	t.Helper()
	const dir = "infrastructure-fixture/v0.1.0/"
	out := fstest.MapFS{}
	entries, err := os.ReadDir(fixtureRepository + "/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(fixtureRepository + "/" + dir + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == componentsFile && change != nil {
			data = []byte(change(string(data)))
		}
		out[dir+e.Name()] = &fstest.MapFile{Data: data}
	}
	return out
}

func TestStaticOnlyCheckSkipsBehaviour(t *testing.T) {
	g := NewWithT(t)
	p, err := fixtureProvider(fixtureBehaviour{})
	g.Expect(err).NotTo(HaveOccurred())
	p.Start = nil

	report := Check(t.Context(), p, Options{Config: env.Config})

	g.Expect(report.Passed()).To(BeTrue(), report.String())
	for _, r := range Rules() {
		res, _ := report.Result(r.Name)
		if r.Behavioural {
			g.Expect(res.Status).To(Equal(Skip), r.Name)
			g.Expect(res.Message).To(HavePrefix("Not checked: the provider has no Start function"), r.Name)
		} else if r.Name != RuleMultiTenancy && !strings.HasPrefix(r.Name, "InfraMachinePool") {
			// The fixture provider has no InfraMachinePool: its rules are skipped.
			g.Expect(res.Status).To(Equal(Pass), "%s: %s", r.Name, res.Message)
		}
	}
}

func TestRulesMatchTheDocumentation(t *testing.T) {
	data, err := os.ReadFile("../../docs/conformance.md")
	if err != nil {
		t.Fatal(err)
	}
	var undocumented []string
	for _, r := range Rules() {
		if !strings.Contains(string(data), r.Name) {
			undocumented = append(undocumented, r.Name)
		}
	}
	if len(undocumented) > 0 {
		t.Errorf("docs/conformance.md does not describe %s", strings.Join(undocumented, "; "))
	}
	names := map[string]bool{}
	for _, r := range Rules() {
		if names[r.Name] {
			t.Errorf("rule %q is listed twice", r.Name)
		}
		names[r.Name] = true
		if r.check == nil || r.Source == "" || r.Checks == "" {
			t.Errorf("rule %q has no check, source or description", r.Name)
		}
	}
}

func TestProviderThatDoesNotStartFails(t *testing.T) {
	g := NewWithT(t)
	p, err := fixtureProvider(fixtureBehaviour{})
	g.Expect(err).NotTo(HaveOccurred())
	p.Start = func(context.Context, *rest.Config) error { return errors.New("no credentials") }

	report := Check(t.Context(), p, behaviouralOptions(t))

	res, _ := report.Result(RuleInfraClusterInitialization)
	g.Expect(res.Status).To(Equal(Fail), report.String())
	g.Expect(res.Message).To(Equal("The provider stopped before provisioning the InfraCluster: its Start returned: no credentials"))
}

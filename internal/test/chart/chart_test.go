package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

const chartDir = "../../../charts/capstan-operator"

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{operatorv1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// providers are typical provider values: the core, the kubeadm providers and the local provider, one of
// them with overrides.
const providers = `
core:
  cluster-api:
    version: v0.1.0
bootstrap:
  kubeadm: {}
controlPlane:
  kubeadm:
    version: v0.1.0
infrastructure:
  local:
    namespace: capl-system
    version: v0.1.0
    fetchConfig:
      selector:
        matchLabels: {provider-components: local}
    manager:
      featureGates: {MachinePool: true}
    deployment:
      replicas: 2
ipam:
  in-cluster:
    namespace: capl-system
    createNamespace: false
`

func values(t *testing.T, doc string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func render(t *testing.T, vals map[string]any) []unstructured.Unstructured {
	t.Helper()
	g := NewWithT(t)
	chrt, err := loader.Load(chartDir)
	g.Expect(err).NotTo(HaveOccurred())
	rv, err := util.ToRenderValues(chrt, vals, common.ReleaseOptions{Name: "capstan", Namespace: "capi-operator-system", IsInstall: true}, common.DefaultCapabilities)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := engine.Render(chrt, rv)
	g.Expect(err).NotTo(HaveOccurred())
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".yaml") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []unstructured.Unstructured
	for _, n := range names {
		if strings.TrimSpace(files[n]) == "" {
			continue
		}
		objs, err := manifest.Parse([]byte(files[n]))
		g.Expect(err).NotTo(HaveOccurred(), "parsing %s:\n%s", n, files[n])
		out = append(out, objs...)
	}
	return out
}

func TestLint(t *testing.T) {
	for name, vals := range map[string]string{"defaults": "", "providers": providers} {
		t.Run(name, func(t *testing.T) {
			linter := lint.RunAll(chartDir, values(t, vals), "capi-operator-system")
			for _, m := range linter.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

func TestRender(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, values(t, providers))
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	g.Expect(got).To(ConsistOf(
		"ServiceAccount capi-operator-system/capi-operator-manager",
		"ClusterRole /capstan-capi-operator-manager-role",
		"ClusterRoleBinding /capstan-capi-operator-manager-rolebinding",
		"Deployment capi-operator-system/capi-operator-controller-manager",
		"Service capi-operator-system/capi-operator-webhook-service",
		"ValidatingWebhookConfiguration /capi-operator-validating-webhook-configuration",
		"Namespace /capi-system", "CoreProvider capi-system/cluster-api",
		"Namespace /kubeadm-bootstrap-system", "BootstrapProvider kubeadm-bootstrap-system/kubeadm",
		"Namespace /kubeadm-control-plane-system", "ControlPlaneProvider kubeadm-control-plane-system/kubeadm",
		"Namespace /capl-system", "InfrastructureProvider capl-system/local",
		"IPAMProvider capl-system/in-cluster",
	))
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			g.Expect(cs[0]).To(HaveKeyWithValue("image", "ghcr.io/capstan-dev/capstan:v0.1.0"))
		case "InfrastructureProvider":
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			g.Expect(spec).To(HaveKeyWithValue("deployment", map[string]any{"replicas": int64(2)}))
			g.Expect(spec).NotTo(HaveKey("namespace"))
		}
	}

	// Image, replicas and resources come from the values.
	objs = render(t, values(t, "image: {repository: mirror.example/capstan, tag: v9.9.9}\nreplicaCount: 3\nresources: {requests: {cpu: 1}}\n"))
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		replicas, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		g.Expect(replicas).To(BeEquivalentTo(3))
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		g.Expect(cs[0]).To(HaveKeyWithValue("image", "mirror.example/capstan:v9.9.9"))
		// Helm merges the values into the defaults.
		g.Expect(cs[0]).To(HaveKeyWithValue("resources", map[string]any{"requests": map[string]any{"cpu": int64(1), "memory": "128Mi"}, "limits": map[string]any{"memory": "512Mi"}}))
	}
}

// TestRenderDiagnostics: the operator serves the diagnostics endpoint as every capstan manager, on the
// container port named metrics, and the values move it or make it insecure.
func TestRenderDiagnostics(t *testing.T) {
	tests := []struct {
		name, values string
		args         []string
		port         any
	}{
		{name: "defaults", args: []string{"--diagnostics-address=:8443", "--insecure-diagnostics=false"},
			port: map[string]any{"containerPort": int64(8443), "name": "metrics", "protocol": "TCP"}},
		{name: "insecure on another port", values: "diagnosticsAddress: localhost:8080\ninsecureDiagnostics: true\n",
			args: []string{"--diagnostics-address=localhost:8080", "--insecure-diagnostics=true"},
			port: map[string]any{"containerPort": int64(8080), "name": "metrics", "protocol": "TCP"}},
		{name: "disabled", values: `diagnosticsAddress: "0"` + "\n", args: []string{"--diagnostics-address=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			for _, o := range render(t, values(t, tt.values)) {
				if o.GetKind() != "Deployment" {
					continue
				}
				cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				c := cs[0].(map[string]any)
				g.Expect(c["args"]).To(ContainElements(tt.args))
				g.Expect(c["args"]).NotTo(ContainElement(HavePrefix("--metrics-bind-addr")))
				if tt.port == nil {
					g.Expect(c["ports"]).NotTo(ContainElement(HaveKeyWithValue("name", "metrics")))
					return
				}
				g.Expect(c["ports"]).To(ContainElement(tt.port))
			}
		})
	}
}

// TestRenderWebhooks: the operator serves its deletion webhook by default, on the container port the
// webhook Service targets, in the release's namespace; disabled, neither the port nor the objects exist.
func TestRenderWebhooks(t *testing.T) {
	tests := []struct {
		name, values string
		want         bool
	}{
		{name: "defaults", want: true},
		{name: "disabled", values: "webhooks: {enabled: false}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			kinds := map[string]bool{}
			for _, o := range render(t, values(t, tt.values)) {
				kinds[o.GetKind()] = true
				switch o.GetKind() {
				case "Deployment":
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					c := cs[0].(map[string]any)
					g.Expect(c["env"]).To(ContainElement(HaveKeyWithValue("name", "POD_NAMESPACE")))
					if tt.want {
						g.Expect(c["args"]).To(ContainElement("--webhook-port=9443"))
						g.Expect(c["ports"]).To(ContainElement(map[string]any{"containerPort": int64(9443), "name": "webhook-server", "protocol": "TCP"}))
					} else {
						g.Expect(c["args"]).To(ContainElement("--webhook-port=-1"))
						g.Expect(c["ports"]).NotTo(ContainElement(HaveKeyWithValue("name", "webhook-server")))
					}
				case "ValidatingWebhookConfiguration":
					hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
					// Per provider kind (the 7 of v1alpha2, the 4 of the proposal's v1alpha1): one entry on DELETE,
					// which fails closed, one on CREATE and UPDATE, which fails open.
					g.Expect(hooks).To(HaveLen(22))
					for _, h := range hooks {
						svc, _, _ := unstructured.NestedMap(h.(map[string]any), "clientConfig", "service")
						g.Expect(svc).To(HaveKeyWithValue("namespace", "capi-operator-system"))
						rules, _, _ := unstructured.NestedSlice(h.(map[string]any), "rules")
						switch h.(map[string]any)["failurePolicy"] {
						case "Fail":
							g.Expect(rules[0]).To(HaveKeyWithValue("operations", []any{"DELETE"}))
						default:
							g.Expect(rules[0]).To(HaveKeyWithValue("operations", []any{"CREATE", "UPDATE"}))
							g.Expect(h.(map[string]any)["failurePolicy"]).To(Equal("Ignore"))
						}
					}
				}
			}
			g.Expect(kinds["ValidatingWebhookConfiguration"]).To(Equal(tt.want))
			g.Expect(kinds["Service"]).To(Equal(tt.want))
		})
	}
}

// TestRenderAppliesWithServerSideDryRun is `helm template | kubectl apply --dry-run=server`: every
// rendered object is valid for the API server, the providers against capstan's operator CRDs (which the
// chart's crds/ folder holds).
func TestRenderAppliesWithServerSideDryRun(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	objs := render(t, values(t, providers))
	// kubectl creates the release namespace (helm install --create-namespace); the provider namespaces
	// must exist for a dry run of their providers, so they are created for real first.
	for _, ns := range []string{"capi-operator-system", "capi-system", "kubeadm-bootstrap-system", "kubeadm-control-plane-system", "capl-system"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, obj))).To(Succeed())
	}
	for i := range objs {
		o := objs[i].DeepCopy()
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kubectl"), client.DryRunAll, client.ForceOwnership)
		g.Expect(err).NotTo(HaveOccurred(), "applying %s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	}
}

// TestChartCRDsAreGenerated keeps the chart's CRDs those `make generate` writes.
func TestChartCRDsAreGenerated(t *testing.T) {
	g := NewWithT(t)
	generated, err := filepath.Glob("../../../config/crd/bases/operator.cluster.x-k8s.io_*.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(generated).To(HaveLen(7))
	proposal, err := filepath.Glob("../../../config/crd/bases/management.cluster.x-k8s.io_*.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proposal).To(HaveLen(4), "the operator proposal's kinds")
	generated = append(generated, proposal...)
	for _, f := range generated {
		want, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		got, err := os.ReadFile(filepath.Join(chartDir, "crds", filepath.Base(f)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bytes.Equal(got, want)).To(BeTrue(), "%s differs from %s: run make generate", filepath.Base(f), f)
	}
}

package convert

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// TestLocalTemplatesApply converts each of the local provider's cluster templates and its ClusterClass,
// generates a cluster from the converted one, and applies it to a real API server: it is accepted, and
// each converted object read back as v1beta1 has the spec of the template's own v1beta1 object.
func TestLocalTemplatesApply(t *testing.T) {
	templates, err := filepath.Glob("../../../config/local/cluster*.yaml")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(templates).To(HaveLen(5))
	for _, path := range templates {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g := NewWithT(t)
			data, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred())
			res, err := Convert(t.Context(), data, "v1beta2")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Converted).To(BeNumerically(">", 0))

			ns := env.NewNamespace(t)
			values := map[string]string{"NAMESPACE": ns, "CLUSTER_NAME": "c", "KUBERNETES_VERSION": "v1.37.1",
				"WORKER_MACHINE_COUNT": "2", "CONTROL_PLANE_MACHINE_COUNT": "3"}
			generate := func(data []byte) []unstructured.Unstructured {
				tmpl, err := yamlprocessor.Parse(data)
				g.Expect(err).NotTo(HaveOccurred())
				out, err := tmpl.Execute(func(name string) (string, bool) { v, ok := values[name]; return v, ok })
				g.Expect(err).NotTo(HaveOccurred())
				objs, err := manifest.Parse(out)
				g.Expect(err).NotTo(HaveOccurred())
				return objs
			}
			original, converted := generate(data), generate(res.Output)
			g.Expect(converted).To(HaveLen(len(original)))

			for j := range converted {
				obj, want := &converted[j], original[j].DeepCopy()
				if obj.GetNamespace() == "" { // the ClusterClass is applied into the user's namespace
					obj.SetNamespace(ns)
					want.SetNamespace(ns)
				}
				if want.GetAPIVersion() == obj.GetAPIVersion() {
					g.Expect(env.Client.Create(t.Context(), obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
					continue // passed through
				}
				g.Expect(obj.GetAPIVersion()).To(Equal("cluster.x-k8s.io/v1beta2"))
				// The template's own object as the API server would store it, defaults included.
				g.Expect(env.Client.Create(t.Context(), want, client.DryRunAll)).To(Succeed())
				g.Expect(env.Client.Create(t.Context(), obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
				got := &unstructured.Unstructured{}
				got.SetAPIVersion(want.GetAPIVersion())
				got.SetKind(want.GetKind())
				g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(want), got)).To(Succeed())
				gotSpec, wantSpec := normalize(got.Object["spec"], ns), normalize(want.Object["spec"], ns)
				g.Expect(gotSpec).To(Equal(wantSpec), "%s %s read back as v1beta1: %s", want.GetKind(), want.GetName(), cmp.Diff(wantSpec, gotSpec))
			}
		})
	}
}

// normalize drops, from v, the namespace of references that is ns, an endpoint without host and port, and
// empty metadata: what a v1beta1 object converted from v1beta2 shows for what was not written (as
// upstream's); and it writes durations in one form (300s and 5m0s are the same duration).
func normalize(v any, ns string) any {
	switch v := v.(type) {
	case map[string]any:
		if _, ref := v["kind"]; ref && v["namespace"] == ns {
			delete(v, "namespace")
		}
		if e, ok := v["controlPlaneEndpoint"].(map[string]any); ok && e["host"] == "" && e["port"] == int64(0) {
			delete(v, "controlPlaneEndpoint")
		}
		if m, ok := v["metadata"].(map[string]any); ok && len(m) == 0 {
			delete(v, "metadata")
		}
		for k, item := range v {
			v[k] = normalize(item, ns)
		}
	case []any:
		for i, item := range v {
			v[i] = normalize(item, ns)
		}
	case string:
		if d, err := time.ParseDuration(v); err == nil && v != "0" {
			return d.String()
		}
	}
	return v
}

func TestConvert(t *testing.T) {
	g := NewWithT(t)
	input := `# the cluster
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
metadata: {name: mhc, namespace: ns}
spec:
  clusterName: c
  selector: {matchLabels: {pool: a}}
  maxUnhealthy: ${MAX_UNHEALTHY:=40%}
  nodeStartupTimeout: 10m
  unhealthyConditions:
  - {type: Ready, status: Unknown, timeout: 300s}
---
# comments of a document passed through stay
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}   # here too
---
# a document of comments only is dropped
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDrainRule
metadata: {name: already, namespace: ns}
spec: {drain: {behavior: Skip}}
`
	res, err := Convert(t.Context(), []byte(input), "v1beta2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Converted).To(Equal(1))
	g.Expect(res.PassedThrough).To(Equal(2))
	g.Expect(string(res.Output)).To(Equal(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  name: mhc
  namespace: ns
spec:
  checks:
    nodeStartupTimeoutSeconds: 600
    unhealthyNodeConditions:
    - status: Unknown
      timeoutSeconds: 300
      type: Ready
  clusterName: c
  remediation:
    triggerIf:
      unhealthyLessThanOrEqualTo: ${MAX_UNHEALTHY:=40%}
  selector:
    matchLabels:
      pool: a
---
# comments of a document passed through stay
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}   # here too
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDrainRule
metadata: {name: already, namespace: ns}
spec: {drain: {behavior: Skip}}
`))
}

func TestConvertNumberVariables(t *testing.T) {
	g := NewWithT(t)
	res, err := Convert(t.Context(), []byte(`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineSet
metadata: {name: ms, namespace: ns}
spec:
  clusterName: c
  replicas: ${REPLICAS}
  minReadySeconds: ${MIN_READY:=30}
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      clusterName: c
      bootstrap: {dataSecretName: data}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: LocalMachine, name: m}
`), "v1beta2")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse(res.Output)
	g.Expect(err).NotTo(HaveOccurred())
	spec := objs[0].Object["spec"].(map[string]any)
	g.Expect(spec["replicas"]).To(Equal("${REPLICAS}"))
	// v1beta1's spec.minReadySeconds is the template's in v1beta2.
	g.Expect(spec["template"].(map[string]any)["spec"].(map[string]any)["minReadySeconds"]).To(Equal("${MIN_READY:=30}"))
}

func TestConvertRefuses(t *testing.T) {
	tests := []struct {
		name, input, toVersion, wantErr string
	}{
		{name: "an unsupported version", input: "", toVersion: "v1beta1",
			wantErr: `invalid --to-version value "v1beta1". Supported versions are: v1beta2`},
		{name: "a document without a kind", input: "apiVersion: v1\nmetadata: {name: a}\n", toVersion: "v1beta2",
			wantErr: "YAML document 1: missing apiVersion or kind: every document must be a Kubernetes object"},
		{name: "a document that is not YAML", input: "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n[a, b\n", toVersion: "v1beta2",
			wantErr: "YAML document 2: yaml: line 1: did not find expected ',' or ']'"},
		{name: "a field v1beta1 does not have", toVersion: "v1beta2",
			input:   "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec: {paused: true, pausd: true}\n",
			wantErr: `YAML document 1 (Cluster ns/c): strict decoding error: unknown field "spec.pausd": v1beta1 has no such field, so converting would drop it; remove or fix it`},
		{name: "a variable where the API has a boolean", toVersion: "v1beta2",
			input:   "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec: {paused: '${PAUSED}'}\n",
			wantErr: "YAML document 1 (Cluster ns/c): .spec.paused is ${PAUSED}, where the API has a boolean: clusterctl convert keeps variables in strings and numbers only; write the value, convert, and put the variable back"},
		{name: "a variable where the API has a duration", toVersion: "v1beta2",
			input:   "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: m, namespace: ns}\nspec: {clusterName: c, bootstrap: {dataSecretName: d}, infrastructureRef: {name: m}, nodeDrainTimeout: '${DRAIN}'}\n",
			wantErr: "YAML document 1 (Machine ns/m): not a valid v1beta1 Machine:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Convert(t.Context(), []byte(tt.input), tt.toVersion)
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

package yaml_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

var values = map[string]string{"CLUSTER_NAME": "demo", "PLAIN": "plain-value", "WITH_EQUALS": "from-env"}

func TestGenerateYAML(t *testing.T) {
	template, err := os.ReadFile("testdata/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		env    map[string]string
		golden string
	}{
		{name: "stdin by default", args: []string{"generate", "yaml"}, stdin: string(template), env: values, golden: "template.golden.yaml"},
		{name: "stdin with -", args: []string{"generate", "yaml", "--from", "-"}, stdin: string(template), env: values, golden: "template.golden.yaml"},
		{name: "a file", args: []string{"generate", "yaml", "--from", "testdata/template.yaml"}, env: values, golden: "template.golden.yaml"},
		{name: "a URL", args: []string{"generate", "yaml", "--from", "https://example.com/templates/template.yaml"}, env: values, golden: "template.golden.yaml"},
		{name: "list variables", args: []string{"generate", "yaml", "--from", "testdata/template.yaml", "--list-variables"}, golden: "template-variables.golden.txt"},
		{name: "list variables of a template without any", args: []string{"generate", "yaml", "--list-variables"}, stdin: "kind: ConfigMap\n", golden: "no-variables.golden.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := repositorytest.NewServer(t)
			srv.AddURL("https://example.com/templates/template.yaml", template)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{Stdin: tt.stdin, Env: tt.env, Server: srv})
			g.Expect(res.Stderr).To(BeEmpty())
			g.Expect(res.Code).To(Equal(0))
			golden.Assert(t, tt.golden, []byte(res.Stdout))
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		stdin   string
		wantErr string
	}{
		{name: "missing variables", args: []string{"generate", "yaml", "--from", "testdata/template.yaml"}, wantErr: "Error: testdata/template.yaml: value for variables [CLUSTER_NAME, PLAIN] is not set. Please set the value using os environment variables or the clusterctl config file\n"},
		{name: "a file that does not exist", args: []string{"generate", "yaml", "--from", "nope.yaml"}, wantErr: "Error: template file nope.yaml does not exist\n"},
		{name: "not YAML", args: []string{"generate", "yaml"}, stdin: "a: b\n---\n- [\n", wantErr: "Error: standard input: YAML document 2 (starting at line 3): yaml: line 1: did not find expected node content\n"},
		{name: "a URL that does not exist", args: []string{"generate", "yaml", "--from", "https://example.com/nope.yaml"}, wantErr: "Error: https://example.com/nope.yaml not found\n"},
		{name: "arguments", args: []string{"generate", "yaml", "extra"}, wantErr: "Error: unknown command \"extra\" for \"clusterctl generate yaml\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res := clusterctltest.Run(t, tt.args, clusterctltest.Options{Stdin: tt.stdin})
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stdout).To(BeEmpty())
			g.Expect(res.Stderr).To(Equal(tt.wantErr))
		})
	}
}

// BenchmarkGenerateYAML5000Objects runs `clusterctl generate yaml` on a template of 5,000 objects with
// three variables each (one with a default).
func BenchmarkGenerateYAML5000Objects(b *testing.B) {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, `---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: ${CLUSTER_NAME}-md-%d
  namespace: ${NAMESPACE:=default}
  labels:
    cluster.x-k8s.io/cluster-name: ${CLUSTER_NAME}
spec:
  clusterName: ${CLUSTER_NAME}
  replicas: ${WORKER_MACHINE_COUNT:=3}
  selector:
    matchLabels: {}
  template:
    spec:
      clusterName: ${CLUSTER_NAME}
      version: ${KUBERNETES_VERSION}
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfigTemplate
          name: ${CLUSTER_NAME}-md-%d
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        name: ${CLUSTER_NAME}-md-%d
`, i, i, i)
	}
	path := filepath.Join(b.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	opts := clusterctltest.Options{
		Env:    map[string]string{"HOME": b.TempDir(), "CLUSTER_NAME": "bench", "KUBERNETES_VERSION": "v1.31.0"},
		Server: repositorytest.NewServer(b),
	}
	args := []string{"generate", "yaml", "--from", path}
	b.ReportAllocs()
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		res := clusterctltest.Run(b, args, opts)
		if res.Code != 0 {
			b.Fatal(res.Stderr)
		}
	}
}

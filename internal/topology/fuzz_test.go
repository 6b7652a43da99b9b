package topology

import (
	"context"
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// FuzzRender checks that no patch template (a ClusterClass's valueFrom.template or enabledIf, written by
// whoever can write the class) makes the topology engine panic or hang, and that a template renders the
// same twice (the parsed templates are cached).
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{{ .builtin.cluster.name }}`, `{{ if .enabled }}true{{ end }}`, `{{ .imageRepository | default "registry.k8s.io" }}`,
		`{{ printf "%s-%d" .builtin.cluster.name 3 }}`, `{{ range $i, $e := .list }}{{ $i }}{{ end }}`,
		`{{ toYaml .obj | indent 2 }}`, `{{ repeat 3 "a" }}`, `{{ until 5 }}`, `{{ b64enc "x" }}`, `{{ template "x" }}`,
		`{{ define "x" }}{{ template "x" }}{{ end }}{{ template "x" }}`, `{{`, `}}`, "",
	} {
		f.Add(s, `{"enabled": true, "list": [1, 2], "obj": {"a": "b"}, "imageRepository": "r"}`)
	}
	f.Fuzz(func(t *testing.T, text, valuesJSON string) {
		values := variables.Values{}
		if err := json.Unmarshal([]byte(valuesJSON), &values); err != nil {
			return
		}
		values[variables.BuiltinsName] = map[string]any{"cluster": map[string]any{"name": "c1", "namespace": "default"}}
		out, err := render(text, values)
		if err != nil {
			return
		}
		again, err := render(text, values)
		if err != nil || again != out {
			t.Fatalf("rendering %q twice gave %q and %q (%v)", text, out, again, err)
		}
	})
}

// FuzzPatches checks that no inline patch definitions and variable values of a ClusterClass and its
// Cluster make Compute panic: they are refused with an error, or computed.
func FuzzPatches(f *testing.F) {
	f.Add(`
- name: imageRepository
  definitions:
  - selector:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      matchResources:
        controlPlane: true
    jsonPatches:
    - op: add
      path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
      valueFrom:
        variable: imageRepository`, `[{"name": "imageRepository", "value": "example.com"}]`)
	f.Add(`
- name: workers
  enabledIf: '{{ .enabled }}'
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources:
        machineDeploymentClass:
          names: ["*"]
    jsonPatches:
    - op: replace
      path: /spec/template/spec/customImage
      valueFrom:
        template: '{{ .imageRepository }}/kindest:{{ .builtin.machineDeployment.version }}'
    - op: remove
      path: /spec/template/spec/extraMounts/0
    - op: add
      path: /spec/template/spec/list/-
      value: [1, {"a": null}]`, `[{"name": "enabled", "value": true}]`)
	f.Add(`[{"name": "x", "external": {"generateExtension": "g.ext"}}]`, `[]`)
	f.Fuzz(func(t *testing.T, patchesYAML, clusterVariablesJSON string) {
		class := mustClass(t, bookClass)
		if err := yaml.Unmarshal([]byte(`
- name: imageRepository
  required: false
  schema:
    openAPIV3Schema: {type: string, default: registry.k8s.io}
- name: enabled
  required: false
  schema:
    openAPIV3Schema: {type: boolean}
`), &class.Spec.Variables); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(patchesYAML), &class.Spec.Patches); err != nil {
			return
		}
		cluster := mustCluster(t, bookCluster)
		var vars []clusterv1.ClusterVariable
		if err := json.Unmarshal([]byte(clusterVariablesJSON), &vars); err != nil {
			return
		}
		cluster.Spec.Topology.Variables = vars
		_, _ = Compute(context.Background(), blueprint(t, class), &Current{Cluster: cluster}, Options{})
	})
}

package alpha

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// quickStart is the testdata of the topologyplan package: a ClusterClass in the shape of the book's
// quick-start class, a new Cluster of it, and that Cluster running with the fields other writers set.
const quickStart = "../../../clusterctl/topologyplan/testdata/"

// readQuickStart parses files of quickStart, as one stream of documents.
func readQuickStart(t *testing.T, names ...string) []unstructured.Unstructured {
	t.Helper()
	var stream []byte
	for _, name := range names {
		data, err := os.ReadFile(quickStart + name)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(append(stream, "\n---\n"...), data...)
	}
	objs, err := manifest.Parse(stream)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// edit sets value at path in the object of kind (and name, when not empty) of objs.
func edit(t *testing.T, objs []unstructured.Unstructured, kind, name string, value any, path ...string) {
	t.Helper()
	for i := range objs {
		if objs[i].GetKind() == kind && (name == "" || objs[i].GetName() == name) {
			if err := unstructured.SetNestedField(objs[i].Object, value, path...); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s %s", kind, name)
}

// TestTopologyPlanGolden plans each kind of change of the quick-start Cluster offline and compares what
// clusterctl prints and writes to -o with testdata/topology-plan/<name>.golden (go test -update rewrites
// them): the output, the files written, and the content of each .diff and .jsonpatch (and, with
// showCreated, of each created object).
func TestTopologyPlanGolden(t *testing.T) {
	class := []string{"quick-start-class.yaml"}
	tests := []struct {
		name        string
		files       []string
		change      func(t *testing.T, objs []unstructured.Unstructured)
		showCreated bool
	}{
		{name: "new-cluster", files: []string{"quick-start-cluster.yaml"}, showCreated: true},
		{name: "running-no-change", files: []string{"quick-start-running.yaml"}},
		{name: "replicas", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "Cluster", "", int64(3), "spec", "topology", "controlPlane", "replicas")
			edit(t, objs, "Cluster", "", []any{map[string]any{"class": "default-worker", "name": "md-0", "replicas": int64(2)}},
				"spec", "topology", "workers", "machineDeployments")
		}},
		{name: "version", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "Cluster", "", "v1.32.0", "spec", "topology", "version")
		}},
		{name: "chained-version", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "ClusterClass", "", []any{"v1.31.2", "v1.32.0", "v1.32.4", "v1.33.1", "v1.34.0"}, "spec", "kubernetesVersions")
			edit(t, objs, "Cluster", "", "v1.34.0", "spec", "topology", "version")
		}},
		{name: "variable", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "Cluster", "", []any{map[string]any{"name": "etcdImageTag", "value": "3.5.16-0"}}, "spec", "topology", "variables")
		}},
		{name: "templates", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "DockerMachineTemplate", "quick-start-control-plane", "kindest/node:v1.31.2", "spec", "template", "spec", "customImage")
			edit(t, objs, "DockerMachineTemplate", "quick-start-default-worker-machinetemplate", "kindest/node:v1.31.2", "spec", "template", "spec", "customImage")
		}},
		{name: "worker-removed", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "Cluster", "", []any{}, "spec", "topology", "workers", "machineDeployments")
		}},
		{name: "health-check-removed", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			for i := range objs {
				if objs[i].GetKind() == "ClusterClass" {
					unstructured.RemoveNestedField(objs[i].Object, "spec", "controlPlane", "machineHealthCheck")
				}
			}
		}},
		{name: "machine-pool", files: []string{"quick-start-running.yaml"}, change: func(t *testing.T, objs []unstructured.Unstructured) {
			edit(t, objs, "Cluster", "", []any{map[string]any{"class": "default-worker", "name": "mp-0", "replicas": int64(2)}},
				"spec", "topology", "workers", "machinePools")
		}, showCreated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := readQuickStart(t, append(class, tt.files...)...)
			if tt.change != nil {
				tt.change(t, objs)
			}
			dir := t.TempDir()
			input := writeObjects(t, dir, "input.yaml", objs...)
			outDir := filepath.Join(dir, "out")
			var out bytes.Buffer
			cmd := newTopologyCommand(iostreams.Streams{In: &bytes.Buffer{}, Out: &out, ErrOut: &bytes.Buffer{}}, nil)
			cmd.SetArgs([]string{"plan", "-f", input, "-o", outDir})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			got.WriteString(strings.ReplaceAll(out.String(), outDir, "OUT"))
			err := filepath.WalkDir(outDir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(outDir, path)
				got.WriteString("=== " + rel + "\n")
				if strings.HasSuffix(path, ".diff") || strings.HasSuffix(path, ".jsonpatch") || (tt.showCreated && strings.HasPrefix(rel, "created")) {
					data, err := os.ReadFile(path)
					if err != nil {
						return err
					}
					got.Write(data)
					if !bytes.HasSuffix(data, []byte("\n")) {
						got.WriteString("\n")
					}
				}
				return nil
			})
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("topology-plan", tt.name+".golden"), []byte(got.String()))
		})
	}
}

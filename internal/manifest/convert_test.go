package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// edgeCases are documents whose scalars and keys convert in unusual ways.
const edgeCases = `apiVersion: v1
kind: Edge
ints: [0, -0, 1, -1, 9223372036854775807, -9223372036854775808, 18446744073709551615, 0x1F, 0o17]
floats: [0.5, 1.0, 2.50, -3.0e2, 1e21, 1.5e-7, 123456789012345678901234567890, .5]
strings: ["", "true", "1", "null", "with: colon", "multi\nline", "tab\there", "ünïcödé", "<html>&amp;"]
bools: [true, false, yes, no, on, off]
nulls: [null, ~, ]
timestamp: 2001-12-14t21:59:43.10-05:00
date: 2002-12-14
binary: !!binary aGVsbG8=
1: int key
2.5: float key
true: bool key
nested: {a: {b: [{c: 1}, {d: [x, y]}]}, empty: {}, list: []}
block: |
  line one
    indented
folded: >
  folded
  text
anchors:
  base: &base {x: 1}
  copy: *base
`

func sigsDecode(t *testing.T, doc string) map[string]any {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestSameAsSigsYAML checks that Parse and Marshal give what sigs.k8s.io/yaml gives, on every YAML file of
// the clusterctl test repositories and on edge cases.
func TestSameAsSigsYAML(t *testing.T) {
	docs := []string{edgeCases}
	for _, data := range testdataYAML(t) {
		for _, d := range split(data) {
			if !isBlank(d.data) && !strings.Contains(string(d.data), "${") {
				docs = append(docs, string(d.data))
			}
		}
	}
	if len(docs) < 20 {
		t.Fatalf("found only %d documents", len(docs))
	}
	for i, doc := range docs {
		want := sigsDecode(t, doc)
		objs, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if diff := cmp.Diff(want, objs[0].Object); diff != "" {
			t.Errorf("document %d decodes differently from sigs.k8s.io/yaml (-sigs +ours):\n%s", i, diff)
		}
		wantYAML, err := yaml.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal([]unstructured.Unstructured{{Object: want}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(strings.TrimSuffix(string(wantYAML), "\n"), string(got)); diff != "" {
			t.Errorf("document %d marshals differently from sigs.k8s.io/yaml (-sigs +ours):\n%s", i, diff)
		}
	}
}

// TestReformatIsMarshalOfParse: Reformat renders what Marshal renders of what Parse decodes, blank
// documents left out, and fails on the same document with the same error.
func TestReformatIsMarshalOfParse(t *testing.T) {
	var all bytes.Buffer
	all.WriteString("# a comment only\n---\n")
	for _, data := range testdataYAML(t) {
		all.Write(data)
		all.WriteString("\n---\n\n---\n")
	}
	all.WriteString(edgeCases)
	// Enough documents for several workers.
	data := bytes.Repeat(all.Bytes(), 3)
	objs, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < 2*minParallel {
		t.Fatalf("only %d documents", len(objs))
	}
	want, err := Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Reformat(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(objs) {
		t.Fatalf("Reformat rendered %d documents, Parse decoded %d objects", len(docs), len(objs))
	}
	if diff := cmp.Diff(string(want)+"\n", string(bytes.Join(docs, []byte("---\n")))); diff != "" {
		t.Errorf("Reformat differs from Marshal(Parse) (-Marshal +Reformat):\n%s", diff)
	}

	bad := append(append([]byte{}, data...), []byte("---\n- a list\n---\nkind: Fine\n")...)
	_, parseErr := Parse(bad)
	_, reformatErr := Reformat(bad)
	if parseErr == nil || reformatErr == nil || parseErr.Error() != reformatErr.Error() {
		t.Errorf("Reformat's error %v, Parse's %v: want the same", reformatErr, parseErr)
	}
}

// testdataYAML returns the YAML files of the clusterctl test repositories (clusterctl.yaml configuration
// files left out).
func testdataYAML(t *testing.T) [][]byte {
	t.Helper()
	var files [][]byte
	root := filepath.Join("..", "cli", "clusterctl", "testdata")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.Contains(path, "clusterctl.yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

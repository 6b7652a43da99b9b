package topologyplan

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// FileBase is the name upstream's plan gives the files of obj in its output directory, without suffix:
// `<Kind>_<namespace>_<name>`.
func FileBase(obj *unstructured.Unstructured) string {
	return fmt.Sprintf("%s_%s_%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

// YAML is obj as written to the output directory.
func YAML(obj *unstructured.Unstructured) ([]byte, error) {
	return yaml.Marshal(obj.Object)
}

// MergePatch is the JSON merge patch from the Original of a modified object to its Object, the content of
// upstream's `.jsonpatch` file.
func (c Change) MergePatch() ([]byte, error) {
	if c.Original == nil {
		return nil, fmt.Errorf("%s %s is not modified", c.Object.GetKind(), c.Object.GetName())
	}
	original, err := json.Marshal(c.Original.Object)
	if err != nil {
		return nil, err
	}
	modified, err := json.Marshal(c.Object.Object)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(original, modified)
}

// unifiedDiff is the unified diff (`diff -u`) of the YAML of original and modified, with the names of
// their files in the output directory.
func unifiedDiff(original, modified *unstructured.Unstructured) (string, error) {
	a, err := YAML(original)
	if err != nil {
		return "", err
	}
	b, err := YAML(modified)
	if err != nil {
		return "", err
	}
	base := FileBase(modified)
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(string(a)),
		B:        difflib.SplitLines(string(b)),
		FromFile: base + ".original.yaml",
		ToFile:   base + ".modified.yaml",
		Context:  3,
	})
}

// modified is the Modified change from current to after, with its diff.
func modified(current, after *unstructured.Unstructured) (*Change, error) {
	c := &Change{Action: Modified, Object: withoutManagedFields(after), Original: withoutManagedFields(current)}
	diff, err := unifiedDiff(c.Original, c.Object)
	if err != nil {
		return nil, fmt.Errorf("comparing %s %s/%s: %w", after.GetKind(), after.GetNamespace(), after.GetName(), err)
	}
	c.Diff = diff
	return c, nil
}

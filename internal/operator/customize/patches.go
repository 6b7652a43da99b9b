package customize

import (
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// Patches applies spec.manifestPatches and spec.patches to objs, in order. A patch that matches no object
// is an error: it can only be a mistake in its target.
func Patches(objs []unstructured.Unstructured, spec *operatorv1.ProviderSpec) error {
	for i, raw := range spec.ManifestPatches {
		patch, err := toJSON(raw)
		if err != nil {
			return fmt.Errorf("spec.manifestPatches[%d]: %w", i, err)
		}
		target := &unstructured.Unstructured{}
		if err := json.Unmarshal(patch, &target.Object); err != nil || target.GetKind() == "" {
			return fmt.Errorf("spec.manifestPatches[%d]: a merge patch must be a mapping that names the kind of the objects it patches (and may name their apiVersion, name and namespace)", i)
		}
		sel := &operatorv1.PatchSelector{Kind: target.GetKind(), Name: target.GetName(), Namespace: target.GetNamespace()}
		if av := target.GetAPIVersion(); av != "" {
			gv := target.GroupVersionKind()
			sel.Group, sel.Version = gv.Group, gv.Version
		}
		if err := apply(objs, sel, patch, false); err != nil {
			return fmt.Errorf("spec.manifestPatches[%d]: %w", i, err)
		}
	}
	for i, p := range spec.Patches {
		if p == nil {
			continue
		}
		patch, err := toJSON(p.Patch)
		if err != nil {
			return fmt.Errorf("spec.patches[%d]: %w", i, err)
		}
		isJSONPatch := strings.HasPrefix(strings.TrimSpace(string(patch)), "[")
		if err := apply(objs, p.Target, patch, isJSONPatch); err != nil {
			return fmt.Errorf("spec.patches[%d]: %w", i, err)
		}
	}
	return nil
}

func toJSON(raw string) ([]byte, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("the patch is empty")
	}
	data, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("the patch is neither YAML nor JSON: %w", err)
	}
	return data, nil
}

func apply(objs []unstructured.Unstructured, sel *operatorv1.PatchSelector, patch []byte, isJSONPatch bool) error {
	var matcher labels.Selector
	if sel != nil && sel.LabelSelector != "" {
		s, err := labels.Parse(sel.LabelSelector)
		if err != nil {
			return fmt.Errorf("target.labelSelector %q: %w", sel.LabelSelector, err)
		}
		matcher = s
	}
	var jp jsonpatch.Patch
	if isJSONPatch {
		var err error
		if jp, err = jsonpatch.DecodePatch(patch); err != nil {
			return fmt.Errorf("invalid JSON patch: %w", err)
		}
	}
	matched := 0
	for i := range objs {
		o := &objs[i]
		if !matches(o, sel, matcher) {
			continue
		}
		matched++
		doc, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		var out []byte
		if isJSONPatch {
			out, err = jp.Apply(doc)
		} else {
			out, err = jsonpatch.MergePatch(doc, patch)
		}
		if err != nil {
			return fmt.Errorf("patching %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		patched := map[string]any{}
		// apimachinery's decoder keeps integers int64, as unstructured objects hold them.
		if err := utiljson.Unmarshal(out, &patched); err != nil {
			return err
		}
		o.Object = patched
	}
	if matched == 0 {
		return fmt.Errorf("the target %s matches none of the provider's objects", describe(sel))
	}
	return nil
}

func matches(o *unstructured.Unstructured, sel *operatorv1.PatchSelector, matcher labels.Selector) bool {
	if sel == nil {
		return true
	}
	gvk := o.GroupVersionKind()
	switch {
	case sel.Group != "" && sel.Group != gvk.Group,
		sel.Version != "" && sel.Version != gvk.Version,
		sel.Kind != "" && sel.Kind != gvk.Kind,
		sel.Name != "" && sel.Name != o.GetName(),
		sel.Namespace != "" && sel.Namespace != o.GetNamespace():
		return false
	}
	return matcher == nil || matcher.Matches(labels.Set(o.GetLabels()))
}

func describe(sel *operatorv1.PatchSelector) string {
	if sel == nil {
		return "(every object)"
	}
	var parts []string
	for _, f := range []struct{ k, v string }{{"group", sel.Group}, {"version", sel.Version}, {"kind", sel.Kind}, {"name", sel.Name}, {"namespace", sel.Namespace}, {"labelSelector", sel.LabelSelector}} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	if len(parts) == 0 {
		return "(every object)"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

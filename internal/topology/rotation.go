package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// specHash is a short hash of a template's spec.
func specHash(obj *unstructured.Unstructured) string {
	raw, _ := json.Marshal(obj.Object["spec"])
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// contains reports whether every field of desired has the same value in current: fields that the API
// server or a webhook defaulted in current do not count as a difference.
func contains(current, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		c, ok := current.(map[string]any)
		if !ok {
			return len(d) == 0 && current == nil
		}
		for k, v := range d {
			cv, ok := c[k]
			if !ok {
				if isEmpty(v) {
					continue
				}
				return false
			}
			if !contains(cv, v) {
				return false
			}
		}
		return true
	case []any:
		c, ok := current.([]any)
		if !ok || len(c) != len(d) {
			return len(d) == 0 && current == nil
		}
		for i := range d {
			if !contains(c[i], d[i]) {
				return false
			}
		}
		return true
	default:
		if dn, ok := number(desired); ok {
			cn, ok := number(current)
			return ok && cn == dn
		}
		return reflect.DeepEqual(current, desired)
	}
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// rotateTemplates gives a cloned template a new name when its spec differs from the current template's,
// since templates are immutable: the control plane and MachineDeployments then roll out to the new one.
func (c *computation) rotateTemplates() error {
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		rotated, err := c.rotate(infra, c.cur.ControlPlane.InfrastructureMachineTemplate, "controlplane/"+infra.GetKind(), nil)
		if err != nil {
			return err
		}
		if rotated {
			ref := nestedRef(c.desired.ControlPlane.Object, "spec", "machineTemplate", "infrastructureRef")
			ref.Name = infra.GetName()
			if err := setRef(c.desired.ControlPlane.Object, ref, "spec", "machineTemplate", "infrastructureRef"); err != nil {
				return err
			}
		}
	}
	for name, md := range c.desired.MachineDeployments {
		cur := c.cur.MachineDeployments[name]
		var curBootstrap, curInfra *unstructured.Unstructured
		if cur != nil {
			curBootstrap, curInfra = cur.BootstrapTemplate, cur.InfrastructureMachineTemplate
		}
		extra := map[string]any{"machineDeployment": map[string]any{"topologyName": name}}
		rotated, err := c.rotate(md.BootstrapTemplate, curBootstrap, "md/"+name+"/"+md.BootstrapTemplate.GetKind(), extra)
		if err != nil {
			return err
		}
		if rotated {
			md.Object.Spec.Template.Spec.Bootstrap.ConfigRef.Name = md.BootstrapTemplate.GetName()
		}
		rotated, err = c.rotate(md.InfrastructureMachineTemplate, curInfra, "md/"+name+"/"+md.InfrastructureMachineTemplate.GetKind(), extra)
		if err != nil {
			return err
		}
		if rotated {
			md.Object.Spec.Template.Spec.InfrastructureRef.Name = md.InfrastructureMachineTemplate.GetName()
		}
	}
	return nil
}

// rotate names desired: the current name when the current template (of the same kind) already is what
// the engine wants — every field of desired's spec has its value there, and every field of the current
// spec that the engine set (field manager capi-topology in its managed fields) is still in desired's —
// else a new name derived from the spec. It reports whether the name changed.
func (c *computation) rotate(desired, current *unstructured.Unstructured, what string, extra map[string]any) (bool, error) {
	before := desired.GetName()
	if current != nil && current.GetName() == before && current.GetKind() == desired.GetKind() &&
		contains(current.Object["spec"], desired.Object["spec"]) && !ownedFieldRemoved(current, desired) {
		return false, nil
	}
	if current == nil && before != "" && !c.existed(desired) {
		// A template created by this computation keeps the name given to it before patches, which the
		// builtin variables carried; only a change against an existing template rotates.
		return false, nil
	}
	tmpl := "{{ .cluster.name }}-{{ .random }}"
	if extra != nil {
		tmpl = machineDeploymentTemplateNameTemplate
	}
	// The name derives from the spec and from the template it replaces: a spec that comes back to an
	// earlier one still gets a name other than the current template's.
	name, err := renderName(tmpl, c.seed(what+"/"+specHash(desired)+"/"+before), c.cluster.Name, extra)
	if err != nil {
		return false, fmt.Errorf("naming %s: %w", desired.GetKind(), err)
	}
	if name == before {
		return false, nil
	}
	desired.SetName(name)
	return true, nil
}

// existed reports whether a template's current name came from a current reference (a template the
// caller could not find is recreated under a new name).
func (c *computation) existed(desired *unstructured.Unstructured) bool {
	if c.cur.ControlPlane.Object != nil {
		if ref := nestedRef(c.cur.ControlPlane.Object, "spec", "machineTemplate", "infrastructureRef"); ref != nil && ref.Name == desired.GetName() {
			return true
		}
	}
	for _, md := range c.cur.MachineDeployments {
		if md == nil || md.Object == nil {
			continue
		}
		if ref := md.Object.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil && ref.Name == desired.GetName() {
			return true
		}
		if md.Object.Spec.Template.Spec.InfrastructureRef.Name == desired.GetName() {
			return true
		}
	}
	return false
}

// ownedFieldRemoved reports whether the current template has a field under spec that the engine set (it
// is among the fields that FieldManager's apply owns, in the managed fields) and that desired no longer
// has: a patch disabled, a field removed from the class's template. Fields others set (defaults of the
// API server or of a webhook) do not count. A template without managed fields (read from a file) has
// none.
func ownedFieldRemoved(current, desired *unstructured.Unstructured) bool {
	for _, mf := range current.GetManagedFields() {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		owned := &fieldpath.Set{}
		if err := owned.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return false
		}
		removed := false
		owned.Leaves().Iterate(func(p fieldpath.Path) {
			if removed || len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "spec" {
				return
			}
			removed = !hasPath(desired.Object, p)
		})
		if removed {
			return true
		}
	}
	return false
}

// hasPath reports whether obj has the field at p: map keys, list items by their key fields, set items by
// value, list indexes.
func hasPath(obj any, p fieldpath.Path) bool {
	v := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[*pe.FieldName]; !ok {
				return false
			}
		case pe.Key != nil:
			item, ok := listItem(v, func(item any) bool { return hasKey(item, *pe.Key) })
			if !ok {
				return false
			}
			v = item
		case pe.Value != nil:
			want := (*pe.Value).Unstructured()
			item, ok := listItem(v, func(item any) bool { return sameValue(item, want) })
			if !ok {
				return false
			}
			v = item
		case pe.Index != nil:
			l, ok := v.([]any)
			if !ok || *pe.Index >= len(l) {
				return false
			}
			v = l[*pe.Index]
		}
	}
	return true
}

// listItem returns the first item of the list v that match accepts; false when v is not a list or no
// item matches.
func listItem(v any, match func(item any) bool) (any, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	i := slices.IndexFunc(l, match)
	if i < 0 {
		return nil, false
	}
	return l[i], true
}

// hasKey reports whether item is an object whose fields have the values of key (a list item's key in a
// field path).
func hasKey(item any, key value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		if !sameValue(m[f.Name], f.Value.Unstructured()) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}

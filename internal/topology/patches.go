package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology/variables"
)

// itemRole says which template of the desired state an item is.
type itemRole int

const (
	roleInfrastructureCluster itemRole = iota
	roleControlPlane
	roleControlPlaneMachineInfrastructure
	roleMachineDeploymentBootstrap
	roleMachineDeploymentInfrastructure
)

// patchItem is one template that patches may change, with the variables patches see for it.
type patchItem struct {
	PatchItem
	role    itemRole
	mdClass string // MachineDeployment class of MachineDeployment templates
	mdName  string // topology name of MachineDeployment templates
	// values are the variables of the item: the cluster's, its overrides and "builtin".
	values variables.Values
}

// asTemplate wraps the spec of an object (InfraCluster, control plane) as a template of kind, the shape
// patches are written against.
func asTemplate(obj *unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t := &unstructured.Unstructured{Object: map[string]any{}}
	t.SetAPIVersion(obj.GetAPIVersion())
	t.SetKind(kind)
	t.SetNamespace(obj.GetNamespace())
	spec, _, _ := unstructured.NestedFieldCopy(obj.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	t.Object["spec"] = map[string]any{"template": map[string]any{"spec": spec}}
	return t
}

func (c *computation) builtinCluster() map[string]any {
	cl := map[string]any{
		"name":      c.cluster.Name,
		"namespace": c.cluster.Namespace,
		"uid":       string(c.cluster.UID),
		"topology": map[string]any{
			"version":        c.topology.Version,
			"class":          c.topology.Class,
			"classNamespace": c.bp.ClusterClass.Namespace,
		},
	}
	if len(c.cluster.Labels) > 0 || len(c.cluster.Annotations) > 0 {
		cl["metadata"] = map[string]any{"labels": stringMapAny(c.cluster.Labels), "annotations": stringMapAny(c.cluster.Annotations)}
	}
	if n := c.cluster.Spec.ClusterNetwork; n != nil {
		net := map[string]any{}
		if n.ServiceDomain != "" {
			net["serviceDomain"] = n.ServiceDomain
		}
		if n.Services != nil {
			net["services"] = stringsAny(n.Services.CIDRBlocks)
		}
		if n.Pods != nil {
			net["pods"] = stringsAny(n.Pods.CIDRBlocks)
		}
		if len(net) > 0 {
			cl["network"] = net
		}
	}
	return cl
}

func stringMapAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (c *computation) builtinControlPlane() map[string]any {
	cp := c.desired.ControlPlane.Object
	out := map[string]any{"name": cp.GetName()}
	if v, ok, _ := unstructured.NestedString(cp.Object, "spec", "version"); ok {
		out["version"] = v
	}
	if r, ok, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas"); ok {
		out["replicas"] = r
	}
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		out["machineTemplate"] = map[string]any{"infrastructureRef": map[string]any{"name": infra.GetName()}}
	}
	return out
}

func builtinMachineDeployment(md *clusterv1.MachineDeployment, class, topologyName string) map[string]any {
	out := map[string]any{
		"name":         md.Name,
		"class":        class,
		"topologyName": topologyName,
	}
	if md.Spec.Template.Spec.Version != nil {
		out["version"] = *md.Spec.Template.Spec.Version
	}
	if md.Spec.Replicas != nil {
		out["replicas"] = int64(*md.Spec.Replicas)
	}
	if ref := md.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil {
		out["bootstrap"] = map[string]any{"configRef": map[string]any{"name": ref.Name}}
	}
	out["infrastructureRef"] = map[string]any{"name": md.Spec.Template.Spec.InfrastructureRef.Name}
	return out
}

func withBuiltin(base variables.Values, builtin map[string]any) variables.Values {
	out := make(variables.Values, len(base)+1)
	for k, v := range base {
		out[k] = v
	}
	out[variables.BuiltinsName] = builtin
	return out
}

// items lists the templates of the desired state in a fixed order.
func (c *computation) items() ([]*patchItem, error) {
	var items []*patchItem
	class := c.bp.ClusterClass
	clusterBuiltin := c.builtinCluster()
	cpValues := c.values
	if v := c.topology.ControlPlane.Variables; v != nil {
		var err error
		if cpValues, err = c.defs.ResolveOverrides(c.ctx, c.values, v.Overrides, field.NewPath("spec", "topology", "controlPlane", "variables", "overrides")); err != nil {
			return nil, err
		}
	}
	clusterHolder := HolderReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Namespace: c.cluster.Namespace, Name: c.cluster.Name}
	if infra := c.desired.InfrastructureCluster; infra != nil {
		h := clusterHolder
		h.FieldPath = "spec.infrastructureRef"
		items = append(items, &patchItem{
			PatchItem: PatchItem{HolderReference: h, Object: asTemplate(infra, c.bp.InfrastructureClusterTemplate.GetKind())},
			role:      roleInfrastructureCluster,
			values:    withBuiltin(c.values, map[string]any{"cluster": clusterBuiltin}),
		})
	}
	cp := c.desired.ControlPlane.Object
	cpBuiltin := map[string]any{"cluster": clusterBuiltin, "controlPlane": c.builtinControlPlane()}
	h := clusterHolder
	h.FieldPath = "spec.controlPlaneRef"
	items = append(items, &patchItem{
		PatchItem: PatchItem{HolderReference: h, Object: asTemplate(cp, c.bp.ControlPlaneTemplate.GetKind())},
		role:      roleControlPlane,
		values:    withBuiltin(cpValues, cpBuiltin),
	})
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		items = append(items, &patchItem{
			PatchItem: PatchItem{
				HolderReference: HolderReference{APIVersion: cp.GetAPIVersion(), Kind: cp.GetKind(), Namespace: cp.GetNamespace(), Name: cp.GetName(), FieldPath: "spec.machineTemplate.infrastructureRef"},
				Object:          infra,
			},
			role:   roleControlPlaneMachineInfrastructure,
			values: withBuiltin(cpValues, cpBuiltin),
		})
	}
	if c.topology.Workers != nil {
		for _, mdt := range c.topology.Workers.MachineDeployments {
			md, ok := c.desired.MachineDeployments[mdt.Name]
			if !ok {
				continue
			}
			values := c.values
			if mdt.Variables != nil {
				var err error
				path := field.NewPath("spec", "topology", "workers", "machineDeployments").Key(mdt.Name).Child("variables", "overrides")
				if values, err = c.defs.ResolveOverrides(c.ctx, c.values, mdt.Variables.Overrides, path); err != nil {
					return nil, err
				}
			}
			values = withBuiltin(values, map[string]any{"cluster": clusterBuiltin, "machineDeployment": builtinMachineDeployment(md.Object, mdt.Class, mdt.Name)})
			holder := HolderReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Namespace: md.Object.Namespace, Name: md.Object.Name}
			bh := holder
			bh.FieldPath = "spec.template.spec.bootstrap.configRef"
			ih := holder
			ih.FieldPath = "spec.template.spec.infrastructureRef"
			items = append(items,
				&patchItem{PatchItem: PatchItem{HolderReference: bh, Object: md.BootstrapTemplate}, role: roleMachineDeploymentBootstrap, mdClass: mdt.Class, mdName: mdt.Name, values: values},
				&patchItem{PatchItem: PatchItem{HolderReference: ih, Object: md.InfrastructureMachineTemplate}, role: roleMachineDeploymentInfrastructure, mdClass: mdt.Class, mdName: mdt.Name, values: values},
			)
		}
	}
	_ = class
	for i, it := range items {
		it.UID = strconv.Itoa(i)
	}
	return items, nil
}

// applyPatches runs the patches of the class over the templates of the desired state, in the order of
// spec.patches, then the ValidateTopology of external patches, and writes the results back.
func (c *computation) applyPatches() error {
	patches := c.bp.ClusterClass.Spec.Patches
	if len(patches) == 0 {
		return nil
	}
	items, err := c.items()
	if err != nil {
		return err
	}
	// The operations of consecutive inline patches are applied to each template in one go: their values
	// depend on variables only, not on the template.
	pending := map[*patchItem][]patchOps{}
	for _, p := range patches {
		switch {
		case p.External != nil:
			if err := flush(items, pending); err != nil {
				return err
			}
			if err := c.externalPatch(p, items); err != nil {
				return fmt.Errorf("patch %q: %w", p.Name, err)
			}
		default:
			if err := inlinePatch(p, items, pending); err != nil {
				return fmt.Errorf("patch %q: %w", p.Name, err)
			}
		}
	}
	if err := flush(items, pending); err != nil {
		return err
	}
	for _, p := range patches {
		if p.External == nil || p.External.ValidateExtension == nil {
			continue
		}
		if c.opts.ExternalPatcher == nil {
			return fmt.Errorf("patch %q: external patches are not available here", p.Name)
		}
		if err := c.opts.ExternalPatcher.ValidateTopology(c.ctx, c.externalRequest(p, items)); err != nil {
			return fmt.Errorf("patch %q: validating the topology: %w", p.Name, err)
		}
	}
	return c.writeBack(items)
}

func (c *computation) externalRequest(p clusterv1.ClusterClassPatch, items []*patchItem) *ExternalPatchRequest {
	req := &ExternalPatchRequest{Cluster: c.cluster, Patch: p, Variables: map[string]apiextensionsv1.JSON{}}
	for name, v := range c.values {
		raw, _ := json.Marshal(v)
		req.Variables[name] = apiextensionsv1.JSON{Raw: raw}
	}
	for _, it := range items {
		pi := it.PatchItem
		pi.Object = it.Object.DeepCopy()
		pi.Variables = map[string]apiextensionsv1.JSON{}
		for name, v := range it.values {
			if _, global := c.values[name]; global && name != variables.BuiltinsName && jsonEqual(v, c.values[name]) {
				continue
			}
			raw, _ := json.Marshal(v)
			pi.Variables[name] = apiextensionsv1.JSON{Raw: raw}
		}
		req.Items = append(req.Items, pi)
	}
	return req
}

func jsonEqual(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return bytes.Equal(ra, rb)
}

func (c *computation) externalPatch(p clusterv1.ClusterClassPatch, items []*patchItem) error {
	if p.External.GenerateExtension == nil {
		return nil
	}
	if c.opts.ExternalPatcher == nil {
		return errors.New("external patches are not available here")
	}
	if ok, err := enabled(p.EnabledIf, withBuiltin(c.values, map[string]any{"cluster": c.builtinCluster()})); err != nil || !ok {
		return err
	}
	generated, err := c.opts.ExternalPatcher.GeneratePatches(c.ctx, c.externalRequest(p, items))
	if err != nil {
		return err
	}
	byUID := map[string]*patchItem{}
	for _, it := range items {
		byUID[it.UID] = it
	}
	for _, g := range generated {
		it, ok := byUID[g.UID]
		if !ok {
			return fmt.Errorf("the extension returned a patch for unknown item %q", g.UID)
		}
		doc, err := json.Marshal(it.Object.Object)
		if err != nil {
			return err
		}
		var out []byte
		switch g.PatchType {
		case JSONPatchType:
			patch, err := jsonpatch.DecodePatch(g.Patch)
			if err != nil {
				return fmt.Errorf("decoding the JSON patch for %s: %w", it.Object.GetKind(), err)
			}
			out, err = patch.Apply(doc)
			if err != nil {
				return fmt.Errorf("applying the JSON patch to %s: %w", it.Object.GetKind(), err)
			}
		case JSONMergePatchType:
			out, err = jsonpatch.MergePatch(doc, g.Patch)
			if err != nil {
				return fmt.Errorf("applying the merge patch to %s: %w", it.Object.GetKind(), err)
			}
		default:
			return fmt.Errorf("the extension returned a patch of unknown type %q", g.PatchType)
		}
		obj, err := decodeObject(out)
		if err != nil {
			return err
		}
		setObject(it, obj)
	}
	return nil
}

func decodeObject(doc []byte) (map[string]any, error) {
	obj := map[string]any{}
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	return normalize(obj).(map[string]any), nil
}

// setObject replaces the template of an item; only its spec may change.
func setObject(it *patchItem, obj map[string]any) {
	before := it.Object
	it.Object = &unstructured.Unstructured{Object: obj}
	// Only the spec may change.
	it.Object.SetAPIVersion(before.GetAPIVersion())
	it.Object.SetKind(before.GetKind())
	it.Object.SetName(before.GetName())
	it.Object.SetNamespace(before.GetNamespace())
}

// normalize turns the float64 numbers of encoding/json into int64 where they are whole, as in objects
// read from the API server.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	default:
		return v
	}
}

// enabled renders enabledIf; the patch is enabled when it renders "true".
func enabled(enabledIf *string, values variables.Values) (bool, error) {
	if enabledIf == nil {
		return true, nil
	}
	out, err := render(*enabledIf, values)
	if err != nil {
		return false, fmt.Errorf("rendering enabledIf: %w", err)
	}
	return strings.TrimSpace(out) == "true", nil
}

// render renders a Go template with sprig's hermetic functions (those whose result depends only on their
// input).
func render(text string, values variables.Values) (string, error) {
	t, err := parseTemplate(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, map[string]any(values)); err != nil {
		return "", fmt.Errorf("rendering template %q: %w", text, err)
	}
	return buf.String(), nil
}

// templates caches parsed patch templates by their text: parsing with sprig's function map dominates
// the cost of a computation otherwise. Executing a parsed template is safe for concurrent use.
var templates = struct {
	sync.Mutex
	funcs template.FuncMap
	m     map[string]*template.Template
}{m: map[string]*template.Template{}}

const maxCachedTemplates = 4096

func parseTemplate(text string) (*template.Template, error) {
	templates.Lock()
	defer templates.Unlock()
	if t, ok := templates.m[text]; ok {
		return t, nil
	}
	if templates.funcs == nil {
		templates.funcs = sprig.HermeticTxtFuncMap()
	}
	t, err := template.New("patch").Funcs(templates.funcs).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing template %q: %w", text, err)
	}
	if len(templates.m) >= maxCachedTemplates {
		templates.m = map[string]*template.Template{}
	}
	templates.m[text] = t
	return t, nil
}

// matches reports whether a patch selector selects an item.
func matches(s clusterv1.PatchSelector, it *patchItem) bool {
	if s.APIVersion != it.Object.GetAPIVersion() || s.Kind != it.Object.GetKind() {
		return false
	}
	m := s.MatchResources
	switch it.role {
	case roleInfrastructureCluster:
		return m.InfrastructureCluster
	case roleControlPlane, roleControlPlaneMachineInfrastructure:
		return m.ControlPlane
	case roleMachineDeploymentBootstrap, roleMachineDeploymentInfrastructure:
		return m.MachineDeploymentClass != nil && slices.ContainsFunc(m.MachineDeploymentClass.Names, func(n string) bool { return nameMatches(n, it.mdClass) })
	}
	return false
}

// nameMatches matches a class name against a selector name: "*" matches all, a leading or trailing "*" a
// suffix or prefix.
func nameMatches(pattern, name string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(name, pattern[1:])
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(name, pattern[:len(pattern)-1])
	default:
		return pattern == name
	}
}

// patchOps are the JSON patch operations of one patch for one template.
type patchOps struct {
	patch string
	ops   []map[string]any
}

// inlinePatch computes the operations of an inline patch for the templates it selects and adds them to
// pending.
func inlinePatch(p clusterv1.ClusterClassPatch, items []*patchItem, pending map[*patchItem][]patchOps) error {
	for _, it := range items {
		var defs []clusterv1.PatchDefinition
		for _, def := range p.Definitions {
			if matches(def.Selector, it) {
				defs = append(defs, def)
			}
		}
		if len(defs) == 0 {
			continue
		}
		// enabledIf is evaluated only for the templates the patch selects, with their variables.
		ok, err := enabled(p.EnabledIf, it.values)
		if err != nil {
			return fmt.Errorf("%s: %w", it.Object.GetKind(), err)
		}
		if !ok {
			continue
		}
		po := patchOps{patch: p.Name}
		for _, def := range defs {
			for _, jp := range def.JSONPatches {
				op := map[string]any{"op": jp.Op, "path": jp.Path}
				if jp.Op != "remove" {
					v, err := patchValue(jp, it.values)
					if err != nil {
						return fmt.Errorf("%s %s: %w", jp.Op, jp.Path, err)
					}
					op["value"] = v
				}
				po.ops = append(po.ops, op)
			}
		}
		pending[it] = append(pending[it], po)
	}
	return nil
}

// flush applies the pending operations to their templates, in the order of items. When the operations
// of several patches fail together, they are applied one patch at a time to name the failing one.
func flush(items []*patchItem, pending map[*patchItem][]patchOps) error {
	for _, it := range items {
		batch := pending[it]
		if len(batch) == 0 {
			continue
		}
		delete(pending, it)
		var ops []map[string]any
		for _, po := range batch {
			ops = append(ops, po.ops...)
		}
		out, err := applyOps(it.Object, ops)
		if err != nil {
			doc := it.Object
			for _, po := range batch {
				next, err := applyOps(doc, po.ops)
				if err != nil {
					return fmt.Errorf("patch %q: applying to %s %s: %w", po.patch, it.Object.GetKind(), it.Object.GetName(), err)
				}
				doc = &unstructured.Unstructured{Object: next}
			}
			return fmt.Errorf("applying patches to %s %s: %w", it.Object.GetKind(), it.Object.GetName(), err)
		}
		setObject(it, out)
	}
	return nil
}

func applyOps(obj *unstructured.Unstructured, ops []map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	out, err := patch.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{SupportNegativeIndices: true})
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	return normalize(m).(map[string]any), nil
}

// patchValue computes the value of a JSON patch operation: the raw JSON of a value or of a template's
// output, or the value of a variable.
func patchValue(jp clusterv1.JSONPatch, values variables.Values) (any, error) {
	switch {
	case jp.Value != nil:
		if !json.Valid(jp.Value.Raw) {
			return nil, errors.New("decoding value: not valid JSON")
		}
		return json.RawMessage(jp.Value.Raw), nil
	case jp.ValueFrom != nil && jp.ValueFrom.Variable != nil:
		return lookup(values, *jp.ValueFrom.Variable)
	case jp.ValueFrom != nil && jp.ValueFrom.Template != nil:
		out, err := render(*jp.ValueFrom.Template, values)
		if err != nil {
			return nil, err
		}
		raw, err := templateJSON(out)
		if err != nil {
			return nil, fmt.Errorf("the template's output is not YAML or JSON: %w", err)
		}
		return raw, nil
	}
	return nil, errors.New("one of value, valueFrom.variable and valueFrom.template must be set")
}

// templateOutputs caches the JSON of template outputs: the same few outputs come back for every
// MachineDeployment of every reconcile, and parsing YAML is the costliest step of a patch.
var templateOutputs = struct {
	sync.Mutex
	m map[string]json.RawMessage
}{m: map[string]json.RawMessage{}}

// maxTemplateOutputs bounds the cache; it is emptied when full.
const maxTemplateOutputs = 4096

// templateJSON returns the JSON of a template's output, which is YAML (or JSON).
func templateJSON(out string) (json.RawMessage, error) {
	templateOutputs.Lock()
	raw, ok := templateOutputs.m[out]
	templateOutputs.Unlock()
	if ok {
		return raw, nil
	}
	raw, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, err
	}
	templateOutputs.Lock()
	if len(templateOutputs.m) >= maxTemplateOutputs {
		templateOutputs.m = map[string]json.RawMessage{}
	}
	templateOutputs.m[out] = raw
	templateOutputs.Unlock()
	return raw, nil
}

// lookup resolves a variable path: a name, then ".field" and "[index]" steps, for example
// builtin.cluster.name, httpProxy.url or dnsServers[0].
func lookup(values variables.Values, path string) (any, error) {
	var cur any = map[string]any(values)
	rest := path
	for rest != "" {
		var step string
		if i := strings.IndexAny(rest, ".["); i == -1 {
			step, rest = rest, ""
		} else if i == 0 && rest[0] == '[' {
			end := strings.IndexByte(rest, ']')
			if end == -1 {
				return nil, fmt.Errorf("variable %q: missing ]", path)
			}
			idx, err := strconv.Atoi(rest[1:end])
			if err != nil {
				return nil, fmt.Errorf("variable %q: bad index %q", path, rest[1:end])
			}
			arr, ok := cur.([]any)
			if !ok || idx < 0 || idx >= len(arr) {
				return nil, fmt.Errorf("variable %q: index %d out of range", path, idx)
			}
			cur = arr[idx]
			rest = strings.TrimPrefix(rest[end+1:], ".")
			continue
		} else {
			step, rest = rest[:i], strings.TrimPrefix(rest[i:], ".")
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("variable %q not found", path)
		}
		if cur, ok = m[step]; !ok {
			return nil, fmt.Errorf("variable %q not found", path)
		}
	}
	return cur, nil
}

// writeBack copies the patched templates into the desired objects. The fields the topology controller
// sets on the control plane (version, replicas, machine template reference and metadata) are kept.
func (c *computation) writeBack(items []*patchItem) error {
	for _, it := range items {
		switch it.role {
		case roleInfrastructureCluster, roleControlPlane:
			target := c.desired.InfrastructureCluster
			if it.role == roleControlPlane {
				target = c.desired.ControlPlane.Object
			}
			spec, _, err := unstructured.NestedFieldCopy(it.Object.Object, "spec", "template", "spec")
			if err != nil {
				return err
			}
			if spec == nil {
				spec = map[string]any{}
			}
			kept := map[string]any{}
			if it.role == roleControlPlane {
				for _, p := range [][]string{{"version"}, {"replicas"}, {"machineTemplate", "infrastructureRef"}, {"machineTemplate", "metadata"}} {
					if v, ok, _ := unstructured.NestedFieldCopy(target.Object, append([]string{"spec"}, p...)...); ok {
						kept[strings.Join(p, ".")] = v
					}
				}
			}
			target.Object["spec"] = spec
			for p, v := range kept {
				if err := unstructured.SetNestedField(target.Object, v, append([]string{"spec"}, strings.Split(p, ".")...)...); err != nil {
					return err
				}
			}
		case roleControlPlaneMachineInfrastructure:
			c.desired.ControlPlane.InfrastructureMachineTemplate.Object["spec"] = it.Object.Object["spec"]
		case roleMachineDeploymentBootstrap:
			c.desired.MachineDeployments[it.mdName].BootstrapTemplate.Object["spec"] = it.Object.Object["spec"]
		case roleMachineDeploymentInfrastructure:
			c.desired.MachineDeployments[it.mdName].InfrastructureMachineTemplate.Object["spec"] = it.Object.Object["spec"]
		}
	}
	return nil
}

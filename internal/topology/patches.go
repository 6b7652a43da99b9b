package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	roleMachinePoolBootstrap
	roleMachinePoolInfrastructure
)

// patchItem is one template that patches may change, with the variables patches see for it.
type patchItem struct {
	PatchItem
	role      itemRole
	className string // MachineDeployment or MachinePool class of worker templates
	name      string // topology name of worker templates
	// resolved are the variable values of the item: the cluster's, with its overrides.
	resolved *variables.Resolved
	// builtin is the item's "builtin" variable.
	builtin map[string]any
	// values are the values each source's patches see (its variables and "builtin"), by source.
	values map[string]variables.Values
}

// valuesFor returns the values the patches of source see for the item: the variables source defines and
// "builtin".
func (it *patchItem) valuesFor(source string) variables.Values {
	if v, ok := it.values[source]; ok {
		return v
	}
	v := withBuiltin(it.resolved.For(source), it.builtin)
	if it.values == nil {
		it.values = map[string]variables.Values{}
	}
	it.values[source] = v
	return v
}

// patchSource is the source of a patch's variables: "inline" for inline patches, the patch's name for
// external ones.
func patchSource(p clusterv1.ClusterClassPatch) string {
	if p.External != nil {
		return p.Name
	}
	return clusterv1.VariableDefinitionFromInline
}

// asTemplate wraps the spec of an object (InfraCluster, control plane, a MachinePool's bootstrap config
// or InfraMachinePool) as a template of kind, the shape patches are written against.
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

// objectMeta is the builtin form of an object's labels and annotations (upstream's ObjectMeta builtin:
// set when the object has either, each omitted when empty).
func objectMeta(labels, annotations map[string]string) (map[string]any, bool) {
	if labels == nil && annotations == nil {
		return nil, false
	}
	m := map[string]any{}
	if len(labels) > 0 {
		m["labels"] = stringMapAny(labels)
	}
	if len(annotations) > 0 {
		m["annotations"] = stringMapAny(annotations)
	}
	return m, true
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
	if m, ok := objectMeta(c.cluster.Labels, c.cluster.Annotations); ok {
		cl["metadata"] = m
	}
	if n := c.cluster.Spec.ClusterNetwork; n != nil {
		net := map[string]any{"ipFamily": ipFamily(n)}
		if n.ServiceDomain != "" {
			net["serviceDomain"] = n.ServiceDomain
		}
		if n.Services != nil && n.Services.CIDRBlocks != nil {
			net["services"] = stringsAny(n.Services.CIDRBlocks)
		}
		if n.Pods != nil && n.Pods.CIDRBlocks != nil {
			net["pods"] = stringsAny(n.Pods.CIDRBlocks)
		}
		cl["network"] = net
	}
	return cl
}

// ipFamily is the IP family of a Cluster's network as upstream's Cluster.GetIPFamily says it: IPv4,
// IPv6 or DualStack from the CIDR blocks of pods and services (IPv4 when neither has any), Invalid when
// they cannot be parsed, are more than two, or pods and services disagree.
func ipFamily(n *clusterv1.ClusterNetwork) string {
	var pods, services []string
	if n.Pods != nil {
		pods = n.Pods.CIDRBlocks
	}
	if n.Services != nil {
		services = n.Services.CIDRBlocks
	}
	if len(pods) == 0 && len(services) == 0 {
		return "IPv4"
	}
	family := func(cidrs []string) string {
		if len(cidrs) > 2 {
			return "Invalid"
		}
		var v4, v6 bool
		for _, cidr := range cidrs {
			ip, _, err := net.ParseCIDR(cidr)
			if err != nil {
				return "Invalid"
			}
			if ip.To4() != nil {
				v4 = true
			} else {
				v6 = true
			}
		}
		switch {
		case v4 && v6:
			return "DualStack"
		case v4:
			return "IPv4"
		case v6:
			return "IPv6"
		}
		return "Invalid"
	}
	podsFamily := family(pods)
	if len(services) == 0 {
		return podsFamily
	}
	servicesFamily := family(services)
	switch {
	case len(pods) == 0:
		return servicesFamily
	case podsFamily == "Invalid" || servicesFamily == "Invalid":
		return "Invalid"
	case podsFamily == "DualStack":
		return "DualStack"
	case podsFamily != servicesFamily:
		return "Invalid"
	}
	return podsFamily
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
	if c.topology.ControlPlane.Replicas != nil {
		if r, ok, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas"); ok {
			out["replicas"] = r
		}
	}
	if m, ok := objectMeta(cp.GetLabels(), cp.GetAnnotations()); ok {
		out["metadata"] = m
	}
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		out["machineTemplate"] = map[string]any{"infrastructureRef": map[string]any{"name": infra.GetName()}}
	}
	return out
}

// builtinWorker is builtin.machineDeployment or builtin.machinePool: the values of the desired
// MachineDeployment or MachinePool (meta, spec) of class and topology name, with the names of its
// bootstrap and infrastructure templates (or objects).
func builtinWorker(meta metav1.ObjectMeta, replicas *int32, version *string, class, topologyName, bootstrap, infrastructure string) map[string]any {
	out := map[string]any{
		"name":         meta.Name,
		"class":        class,
		"topologyName": topologyName,
	}
	if version != nil {
		out["version"] = *version
	}
	if replicas != nil {
		out["replicas"] = int64(*replicas)
	}
	if m, ok := objectMeta(meta.Labels, meta.Annotations); ok {
		out["metadata"] = m
	}
	if bootstrap != "" {
		out["bootstrap"] = map[string]any{"configRef": map[string]any{"name": bootstrap}}
	}
	if infrastructure != "" {
		out["infrastructureRef"] = map[string]any{"name": infrastructure}
	}
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

// overrides resolves the overrides of a control plane, MachineDeployment or MachinePool topology over the
// Cluster's values.
func (c *computation) overrides(overrides []clusterv1.ClusterVariable, path *field.Path) (*variables.Resolved, error) {
	return c.defs.ResolveOverrides(c.ctx, c.values, overrides, path)
}

// worker is a MachineDeployment or MachinePool of the desired state, as its patch items need it.
type worker struct {
	kind, builtinKey string // "MachineDeployment" and "machineDeployment", or the MachinePool's
	class, name      string // class and topology name
	overrides        []clusterv1.ClusterVariable
	path             *field.Path // of the overrides
	meta             metav1.ObjectMeta
	replicas         *int32
	version          *string
	// bootstrap and infrastructure are the templates patches see; their names are the builtin's unless
	// bootstrapName and infrastructureName say otherwise (a MachinePool's objects).
	bootstrap, infrastructure         *unstructured.Unstructured
	bootstrapName, infrastructureName string
	roles                             [2]itemRole
}

// workerItems are the bootstrap and infrastructure items of a worker.
func (c *computation) workerItems(w worker, clusterBuiltin map[string]any) ([]*patchItem, error) {
	values := c.values
	if w.overrides != nil {
		var err error
		if values, err = c.overrides(w.overrides, w.path); err != nil {
			return nil, err
		}
	}
	if w.bootstrapName == "" {
		w.bootstrapName, w.infrastructureName = w.bootstrap.GetName(), w.infrastructure.GetName()
	}
	builtin := map[string]any{"cluster": clusterBuiltin, w.builtinKey: builtinWorker(w.meta, w.replicas, w.version,
		w.class, w.name, w.bootstrapName, w.infrastructureName)}
	holder := HolderReference{APIVersion: clusterv1.GroupVersion.String(), Kind: w.kind, Namespace: w.meta.Namespace, Name: w.meta.Name}
	bh, ih := holder, holder
	bh.FieldPath = "spec.template.spec.bootstrap.configRef"
	ih.FieldPath = "spec.template.spec.infrastructureRef"
	return []*patchItem{
		{PatchItem: PatchItem{HolderReference: bh, Object: w.bootstrap}, role: w.roles[0], className: w.class, name: w.name, resolved: values, builtin: builtin},
		{PatchItem: PatchItem{HolderReference: ih, Object: w.infrastructure}, role: w.roles[1], className: w.class, name: w.name, resolved: values, builtin: builtin},
	}, nil
}

// items lists the templates of the desired state in a fixed order.
func (c *computation) items() ([]*patchItem, error) {
	var items []*patchItem
	clusterBuiltin := c.builtinCluster()
	cpValues := c.values
	if v := c.topology.ControlPlane.Variables; v != nil {
		var err error
		if cpValues, err = c.overrides(v.Overrides, field.NewPath("spec", "topology", "controlPlane", "variables", "overrides")); err != nil {
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
			resolved:  c.values,
			builtin:   map[string]any{"cluster": clusterBuiltin},
		})
	}
	cp := c.desired.ControlPlane.Object
	cpBuiltin := map[string]any{"cluster": clusterBuiltin, "controlPlane": c.builtinControlPlane()}
	h := clusterHolder
	h.FieldPath = "spec.controlPlaneRef"
	items = append(items, &patchItem{
		PatchItem: PatchItem{HolderReference: h, Object: asTemplate(cp, c.bp.ControlPlaneTemplate.GetKind())},
		role:      roleControlPlane,
		resolved:  cpValues,
		builtin:   cpBuiltin,
	})
	if infra := c.desired.ControlPlane.InfrastructureMachineTemplate; infra != nil {
		items = append(items, &patchItem{
			PatchItem: PatchItem{
				HolderReference: HolderReference{APIVersion: cp.GetAPIVersion(), Kind: cp.GetKind(), Namespace: cp.GetNamespace(), Name: cp.GetName(), FieldPath: "spec.machineTemplate.infrastructureRef"},
				Object:          infra,
			},
			role:     roleControlPlaneMachineInfrastructure,
			resolved: cpValues,
			builtin:  cpBuiltin,
		})
	}
	if c.topology.Workers != nil {
		workers := field.NewPath("spec", "topology", "workers")
		for _, mdt := range c.topology.Workers.MachineDeployments {
			md, ok := c.desired.MachineDeployments[mdt.Name]
			if !ok {
				continue
			}
			var overrides []clusterv1.ClusterVariable
			if mdt.Variables != nil {
				overrides = mdt.Variables.Overrides
			}
			spec := md.Object.Spec
			w, err := c.workerItems(worker{kind: "MachineDeployment", builtinKey: "machineDeployment", class: mdt.Class, name: mdt.Name,
				overrides: overrides, path: workers.Child("machineDeployments").Key(mdt.Name).Child("variables", "overrides"),
				meta: md.Object.ObjectMeta, replicas: spec.Replicas, version: spec.Template.Spec.Version,
				bootstrap: md.BootstrapTemplate, infrastructure: md.InfrastructureMachineTemplate,
				roles: [2]itemRole{roleMachineDeploymentBootstrap, roleMachineDeploymentInfrastructure}}, clusterBuiltin)
			if err != nil {
				return nil, err
			}
			items = append(items, w...)
		}
		for _, mpt := range c.topology.Workers.MachinePools {
			mp, ok := c.desired.MachinePools[mpt.Name]
			if !ok {
				continue
			}
			var overrides []clusterv1.ClusterVariable
			if mpt.Variables != nil {
				overrides = mpt.Variables.Overrides
			}
			spec := mp.Object.Spec
			templates := c.bp.MachinePools[mpt.Class]
			w, err := c.workerItems(worker{kind: "MachinePool", builtinKey: "machinePool", class: mpt.Class, name: mpt.Name,
				overrides: overrides, path: workers.Child("machinePools").Key(mpt.Name).Child("variables", "overrides"),
				meta: mp.Object.ObjectMeta, replicas: spec.Replicas, version: spec.Template.Spec.Version,
				bootstrap:      asTemplate(mp.BootstrapObject, templates.BootstrapTemplate.GetKind()),
				infrastructure: asTemplate(mp.InfrastructureMachinePoolObject, templates.InfrastructureMachinePoolTemplate.GetKind()),
				bootstrapName:  mp.BootstrapObject.GetName(), infrastructureName: mp.InfrastructureMachinePoolObject.GetName(),
				roles: [2]itemRole{roleMachinePoolBootstrap, roleMachinePoolInfrastructure}}, clusterBuiltin)
			if err != nil {
				return nil, err
			}
			items = append(items, w...)
		}
	}
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
	source := patchSource(p)
	global := c.values.For(source)
	req := &ExternalPatchRequest{Cluster: c.cluster, Patch: p, Variables: map[string]apiextensionsv1.JSON{}}
	for name, v := range global {
		raw, _ := json.Marshal(v)
		req.Variables[name] = apiextensionsv1.JSON{Raw: raw}
	}
	for _, it := range items {
		pi := it.PatchItem
		pi.Object = it.Object.DeepCopy()
		pi.Variables = map[string]apiextensionsv1.JSON{}
		for name, v := range it.valuesFor(source) {
			if g, ok := global[name]; ok && name != variables.BuiltinsName && jsonEqual(v, g) {
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
	if ok, err := enabled(p.EnabledIf, withBuiltin(c.values.For(patchSource(p)), map[string]any{"cluster": c.builtinCluster()})); err != nil || !ok {
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
		return m.MachineDeploymentClass != nil && slices.ContainsFunc(m.MachineDeploymentClass.Names, func(n string) bool { return nameMatches(n, it.className) })
	case roleMachinePoolBootstrap, roleMachinePoolInfrastructure:
		return m.MachinePoolClass != nil && slices.ContainsFunc(m.MachinePoolClass.Names, func(n string) bool { return nameMatches(n, it.className) })
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
		values := it.valuesFor(patchSource(p))
		ok, err := enabled(p.EnabledIf, values)
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
					v, err := patchValue(jp, values)
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
		// Patches change spec.template.spec of a template, nothing else, as upstream's.
		spec, _, err := unstructured.NestedFieldCopy(it.Object.Object, "spec", "template", "spec")
		if err != nil {
			return fmt.Errorf("reading spec.template.spec of the patched %s: %w", it.Object.GetKind(), err)
		}
		if spec == nil {
			spec = map[string]any{}
		}
		switch it.role {
		case roleInfrastructureCluster:
			c.desired.InfrastructureCluster.Object["spec"] = spec
		case roleControlPlane:
			target := c.desired.ControlPlane.Object
			kept := map[string]any{}
			for _, p := range controlPlaneTopologyFields {
				if v, ok, _ := unstructured.NestedFieldCopy(target.Object, append([]string{"spec"}, p...)...); ok {
					kept[strings.Join(p, ".")] = v
				}
			}
			target.Object["spec"] = spec
			for p, v := range kept {
				if err := unstructured.SetNestedField(target.Object, v, append([]string{"spec"}, strings.Split(p, ".")...)...); err != nil {
					return err
				}
			}
		case roleControlPlaneMachineInfrastructure:
			setTemplateSpec(c.desired.ControlPlane.InfrastructureMachineTemplate, spec)
		case roleMachineDeploymentBootstrap:
			setTemplateSpec(c.desired.MachineDeployments[it.name].BootstrapTemplate, spec)
		case roleMachineDeploymentInfrastructure:
			setTemplateSpec(c.desired.MachineDeployments[it.name].InfrastructureMachineTemplate, spec)
		case roleMachinePoolBootstrap:
			c.desired.MachinePools[it.name].BootstrapObject.Object["spec"] = spec
		case roleMachinePoolInfrastructure:
			c.desired.MachinePools[it.name].InfrastructureMachinePoolObject.Object["spec"] = spec
		}
	}
	return nil
}

// controlPlaneTopologyFields are the fields of the control plane's spec that the topology sets and
// patches cannot change, as upstream's.
var controlPlaneTopologyFields = [][]string{
	{"version"}, {"replicas"},
	{"machineTemplate", "infrastructureRef"}, {"machineTemplate", "metadata"}, {"machineTemplate", "readinessGates"},
	{"machineTemplate", "nodeDrainTimeout"}, {"machineTemplate", "nodeVolumeDetachTimeout"}, {"machineTemplate", "nodeDeletionTimeout"},
}

// setTemplateSpec sets spec.template.spec of a template.
func setTemplateSpec(t *unstructured.Unstructured, spec any) {
	tmpl, ok := t.Object["spec"].(map[string]any)
	if !ok {
		tmpl = map[string]any{}
		t.Object["spec"] = tmpl
	}
	inner, ok := tmpl["template"].(map[string]any)
	if !ok {
		inner = map[string]any{}
		tmpl["template"] = inner
	}
	inner["spec"] = spec
}

package variables

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Names returns the names of the defined variables, sorted.
func (d *Definitions) Names() []string { return d.names }

// Get returns the first definition of a variable (the ClusterClass's own when it has one).
func (d *Definitions) Get(name string) (*Definition, bool) {
	v, ok := d.byName[name]
	if !ok {
		return nil, false
	}
	return v.defs[0], true
}

// Conflicts reports whether the definitions of a variable differ, so that a Cluster sets a value for each
// of them with definitionFrom.
func (d *Definitions) Conflicts(name string) bool {
	v, ok := d.byName[name]
	return ok && v.conflict
}

// DefinedBy reports whether source (a patch's name, or "inline" for the ClusterClass's own variables)
// defines the variable.
func (d *Definitions) DefinedBy(name, source string) bool {
	v, ok := d.byName[name]
	return ok && v.from(source) != nil
}

// definition returns the definition a value with definitionFrom from is checked against: the
// definition of that source, or, without definitionFrom, the variable's only (or equal) definition.
func (d *Definitions) definition(name, from string) (*Definition, error) {
	v, ok := d.byName[name]
	if !ok {
		return nil, fmt.Errorf("variable %q is not defined in the ClusterClass", name)
	}
	if from == "" {
		if v.conflict {
			return nil, fmt.Errorf("variable %q has conflicting definitions (from %s): set one value per definition with definitionFrom", name, v.sources())
		}
		return v.defs[0], nil
	}
	if def := v.from(from); def != nil {
		return def, nil
	}
	return nil, fmt.Errorf("variable %q has no definition from %q: its definitions are from %s", name, from, v.sources())
}

func (v *variable) sources() string {
	out := ""
	for i, d := range v.defs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", d.From)
	}
	return out
}

// key identifies a value: the variable's name and its definitionFrom.
type key struct{ name, from string }

// index indexes values by name and definitionFrom, and checks that no value is given twice and that a
// variable's values are either all without definitionFrom or all with one.
func index(values []clusterv1.ClusterVariable, path *field.Path) (map[key]clusterv1.ClusterVariable, field.ErrorList) {
	out := make(map[key]clusterv1.ClusterVariable, len(values))
	withFrom, without := map[string]bool{}, map[string]bool{}
	var errs field.ErrorList
	for _, v := range values {
		k := key{v.Name, v.DefinitionFrom}
		if _, dup := out[k]; dup {
			if v.DefinitionFrom == "" {
				errs = append(errs, field.Duplicate(path.Key(v.Name), v.Name))
			} else {
				errs = append(errs, field.Duplicate(path.Key(v.Name), fmt.Sprintf("variable %q from %q is set more than once", v.Name, v.DefinitionFrom)))
			}
			continue
		}
		out[k] = v
		if v.DefinitionFrom == "" {
			without[v.Name] = true
		} else {
			withFrom[v.Name] = true
		}
	}
	for name := range without {
		if withFrom[name] {
			errs = append(errs, field.Invalid(path.Key(name), name,
				fmt.Sprintf("variable %q is set both without and with definitionFrom: either set one value without definitionFrom, or one per definition with it", name)))
		}
	}
	return out, errs
}

// Default returns values with defaults applied: values are kept in their order with nested defaults
// filled in, and then every variable (every definition of a variable whose definitions conflict) without
// a value and with a top-level default is added, in the order of the names. path is where the values
// are, for errors.
func (d *Definitions) Default(values []clusterv1.ClusterVariable, path *field.Path) ([]clusterv1.ClusterVariable, field.ErrorList) {
	return d.defaultValues(values, true, path)
}

// DefaultOverrides applies nested defaults to control plane, MachineDeployment or MachinePool overrides
// without adding variables.
func (d *Definitions) DefaultOverrides(values []clusterv1.ClusterVariable, path *field.Path) ([]clusterv1.ClusterVariable, field.ErrorList) {
	return d.defaultValues(values, false, path)
}

func (d *Definitions) defaultValues(values []clusterv1.ClusterVariable, addMissing bool, path *field.Path) ([]clusterv1.ClusterVariable, field.ErrorList) {
	given, errs := index(values, path)
	if len(errs) > 0 {
		return nil, errs
	}
	out := make([]clusterv1.ClusterVariable, 0, len(values))
	for _, v := range values {
		def, err := d.definition(v.Name, v.DefinitionFrom)
		if err != nil {
			// Kept as is, for validation to report.
			out = append(out, v)
			continue
		}
		dv, err := defaultValue(def, &v)
		if err != nil {
			errs = append(errs, field.Invalid(path.Key(v.Name), v.Name, err.Error()))
			continue
		}
		out = append(out, *dv)
	}
	if addMissing {
		for _, name := range d.names {
			v := d.byName[name]
			if !v.conflict {
				if hasAny(given, name) || !v.defs[0].hasDefault {
					continue
				}
				dv, err := defaultValue(v.defs[0], nil)
				if err != nil {
					errs = append(errs, field.Invalid(path.Key(name), name, err.Error()))
					continue
				}
				out = append(out, *dv)
				continue
			}
			if _, ok := given[key{name, ""}]; ok {
				continue // refused by validation: a value per definition is needed
			}
			for _, def := range v.defs {
				if _, ok := given[key{name, def.From}]; ok || !def.hasDefault {
					continue
				}
				dv, err := defaultValue(def, nil)
				if err != nil {
					errs = append(errs, field.Invalid(path.Key(name), name, err.Error()))
					continue
				}
				dv.DefinitionFrom = def.From
				out = append(out, *dv)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func hasAny(given map[key]clusterv1.ClusterVariable, name string) bool {
	for k := range given {
		if k.name == name {
			return true
		}
	}
	return false
}

// defaultValue returns v with the defaults of def applied, or, for a nil v, the variable's top-level
// default; the result keeps v's definitionFrom.
func defaultValue(def *Definition, v *clusterv1.ClusterVariable) (*clusterv1.ClusterVariable, error) {
	obj := map[string]any{}
	out := clusterv1.ClusterVariable{Name: def.Name}
	if v != nil {
		out = *v
		obj[def.Name] = decode(v.Value.Raw)
	}
	structuraldefaulting.Default(obj, def.structural)
	value, set := obj[def.Name]
	if !set {
		return &out, nil
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("defaulting variable %q: %w", def.Name, err)
	}
	out.Value = apiextensionsv1.JSON{Raw: raw}
	return &out, nil
}

// Validate validates the variable values of a topology (path is where they are, for example
// spec.topology.variables): every variable is defined, a variable whose definitions conflict is set per
// definition with definitionFrom, required ones are set, and every value follows the schema of its
// definition. oldValues, when not nil, are the previous values for CEL transition rules.
func (d *Definitions) Validate(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path) field.ErrorList {
	return d.validateValues(ctx, values, oldValues, path, true)
}

// ValidateOverrides validates control plane, MachineDeployment or MachinePool overrides: defined and
// valid, none required.
func (d *Definitions) ValidateOverrides(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path) field.ErrorList {
	return d.validateValues(ctx, values, oldValues, path, false)
}

func (d *Definitions) validateValues(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path, checkRequired bool) field.ErrorList {
	given, errs := index(values, path)
	if len(errs) > 0 {
		return errs
	}
	old := map[key]any{}
	for _, v := range oldValues {
		old[key{v.Name, v.DefinitionFrom}] = decode(v.Value.Raw)
	}
	for _, v := range values {
		vp := path.Key(v.Name)
		def, err := d.definition(v.Name, v.DefinitionFrom)
		if err != nil {
			errs = append(errs, field.Invalid(vp, v.Name, err.Error()))
			continue
		}
		if len(v.Value.Raw) == 0 {
			errs = append(errs, field.Required(vp.Child("value"), fmt.Sprintf("variable %q has no value", v.Name)))
			continue
		}
		var oldObj map[string]any
		if o, ok := old[key{v.Name, v.DefinitionFrom}]; ok {
			oldObj = map[string]any{v.Name: o}
		} else if def.knownValid(v.Value.Raw) {
			continue // transition rules need an old value: only a validation without one is remembered
		}
		verrs := def.validate(ctx, vp.Child("value"), map[string]any{v.Name: decode(v.Value.Raw)}, oldObj)
		if len(verrs) == 0 && oldObj == nil {
			def.rememberValid(v.Value.Raw)
		}
		errs = append(errs, verrs...)
	}
	if checkRequired {
		for _, name := range d.names {
			v := d.byName[name]
			for _, def := range v.defs {
				if !def.Required {
					continue
				}
				if _, ok := given[key{name, def.From}]; ok {
					continue
				}
				if !v.conflict && hasAny(given, name) {
					continue
				}
				if v.conflict {
					errs = append(errs, field.Required(path, fmt.Sprintf("required variable %q from %q is not set", name, def.From)))
					continue
				}
				errs = append(errs, field.Required(path, fmt.Sprintf("required variable %q is not set", name)))
				break
			}
		}
	}
	return errs
}

// Values are decoded variable values by name, as patches see them.
type Values map[string]any

// Resolved are the defaulted and validated values of a topology (and overrides over them), from which
// the values each source's patches see are taken.
type Resolved struct {
	defs   *Definitions
	values map[key]any
	parent *Resolved

	mu    sync.Mutex
	cache map[string]Values
}

// Resolve defaults and validates the values of a topology.
func (d *Definitions) Resolve(ctx context.Context, values []clusterv1.ClusterVariable, path *field.Path) (*Resolved, error) {
	defaulted, errs := d.Default(values, path)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if errs := d.Validate(ctx, defaulted, nil, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return d.resolved(defaulted, nil), nil
}

// ResolveOverrides defaults and validates overrides and returns them over base.
func (d *Definitions) ResolveOverrides(ctx context.Context, base *Resolved, overrides []clusterv1.ClusterVariable, path *field.Path) (*Resolved, error) {
	if len(overrides) == 0 {
		return base, nil
	}
	defaulted, errs := d.DefaultOverrides(overrides, path)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if errs := d.ValidateOverrides(ctx, defaulted, nil, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return d.resolved(defaulted, base), nil
}

func (d *Definitions) resolved(values []clusterv1.ClusterVariable, parent *Resolved) *Resolved {
	r := &Resolved{defs: d, values: make(map[key]any, len(values)), parent: parent}
	for _, v := range values {
		r.values[key{v.Name, v.DefinitionFrom}] = decode(v.Value.Raw)
	}
	return r
}

// For returns the values the patches of source see ("inline" for the ClusterClass's inline patches, a
// patch's name for an external patch): the variables that source defines, each with the value set for
// that definition (definitionFrom) or the value set without definitionFrom. The result is shared: do not
// change it.
func (r *Resolved) For(source string) Values {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.cache[source]; ok {
		return v
	}
	var out Values
	if r.parent != nil {
		base := r.parent.For(source)
		out = make(Values, len(base))
		for k, v := range base {
			out[k] = v
		}
	} else {
		out = Values{}
	}
	names := make([]string, 0, len(r.values))
	for k := range r.values {
		names = append(names, k.name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !r.defs.DefinedBy(name, source) {
			continue
		}
		if v, ok := r.values[key{name, source}]; ok {
			out[name] = v
		} else if v, ok := r.values[key{name, ""}]; ok {
			out[name] = v
		}
	}
	if r.cache == nil {
		r.cache = map[string]Values{}
	}
	r.cache[source] = out
	return out
}

// Inline returns the values of the ClusterClass's inline patches.
func (r *Resolved) Inline() Values { return r.For(clusterv1.VariableDefinitionFromInline) }

package variables

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// BuiltinsName is the reserved name of the builtin variables.
const BuiltinsName = "builtin"

// Definition is one compiled variable definition.
type Definition struct {
	// Name of the variable.
	Name string
	// Required says whether a Cluster must set the variable.
	Required bool

	structural *structuralschema.Structural
	validator  validation.SchemaCreateValidator
	cel        *cel.Validator

	// valid remembers values (their JSON) that passed validation without an old value: a definition is
	// compiled once and shared, and a Cluster's values are validated again at every reconcile.
	validMu sync.Mutex
	valid   map[string]bool
}

// maxValidValues bounds a definition's memory of valid values; it is emptied when full.
const maxValidValues = 256

func (def *Definition) knownValid(raw []byte) bool {
	def.validMu.Lock()
	defer def.validMu.Unlock()
	return def.valid[string(raw)]
}

func (def *Definition) rememberValid(raw []byte) {
	def.validMu.Lock()
	defer def.validMu.Unlock()
	if def.valid == nil || len(def.valid) >= maxValidValues {
		def.valid = map[string]bool{}
	}
	def.valid[string(raw)] = true
}

// Definitions are the compiled variable definitions of a ClusterClass.
type Definitions struct {
	byName map[string]*Definition
	names  []string
}

// compiled caches compiled definitions by the hash of their JSON: compiling CEL rules is expensive and
// the definitions of a class rarely change.
var compiled = struct {
	sync.Mutex
	m map[[32]byte]*Definition
}{m: map[[32]byte]*Definition{}}

const maxCached = 1024

// Compile checks and compiles the variable definitions of a ClusterClass. Definitions of the same name
// from several sources (status.variables) must agree; the first one wins.
func Compile(defs []clusterv1.ClusterClassVariable) (*Definitions, error) {
	out := &Definitions{byName: map[string]*Definition{}}
	var errs field.ErrorList
	for i, def := range defs {
		path := field.NewPath("spec", "variables").Index(i)
		if def.Name == BuiltinsName || strings.HasPrefix(def.Name, BuiltinsName+".") {
			errs = append(errs, field.Invalid(path.Child("name"), def.Name, `"builtin" is a reserved variable name`))
			continue
		}
		if strings.Contains(def.Name, ".") {
			errs = append(errs, field.Invalid(path.Child("name"), def.Name, "variable names must not contain \".\""))
			continue
		}
		if _, dup := out.byName[def.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("name"), def.Name))
			continue
		}
		d, err := compileOne(def)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("schema", "openAPIV3Schema"), def.Name, err.Error()))
			continue
		}
		out.byName[def.Name] = d
		out.names = append(out.names, def.Name)
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	sort.Strings(out.names)
	return out, nil
}

// FromClass returns the definitions of a ClusterClass: those of its spec, then those that
// status.variables adds from other sources (runtime extensions).
func FromClass(class *clusterv1.ClusterClass) (*Definitions, error) {
	defs := append([]clusterv1.ClusterClassVariable(nil), class.Spec.Variables...)
	seen := map[string]bool{}
	for _, v := range defs {
		seen[v.Name] = true
	}
	for _, sv := range class.Status.Variables {
		if seen[sv.Name] || len(sv.Definitions) == 0 {
			continue
		}
		d := sv.Definitions[0]
		defs = append(defs, clusterv1.ClusterClassVariable{Name: sv.Name, Required: d.Required, Metadata: d.Metadata, Schema: d.Schema})
		seen[sv.Name] = true
	}
	return Compile(defs)
}

func compileOne(def clusterv1.ClusterClassVariable) (*Definition, error) {
	raw, err := json.Marshal(def.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(append([]byte(def.Name+"\x00"+fmt.Sprint(def.Required)+"\x00"), raw...))
	compiled.Lock()
	if d, ok := compiled.m[key]; ok {
		compiled.Unlock()
		return d, nil
	}
	compiled.Unlock()

	// The variable's schema is wrapped as the only property of an object, so that a top-level default
	// and "required" behave like those of a field of a custom resource.
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &v1); err != nil {
		return nil, err
	}
	wrapper := apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{def.Name: v1},
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&wrapper, &internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	validator, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	d := &Definition{Name: def.Name, Required: def.Required, structural: s, validator: validator}
	if hasValidations(s) {
		d.cel = cel.NewValidator(s, false, celconfig.PerCallLimit)
		// Compiling the rules reports their errors only when validating; validate the default (or an
		// empty value) once so that a rule that does not compile is a definition error.
		if errs := compileErrors(d); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
	}
	if v1.Default != nil {
		if errs := d.validate(context.Background(), field.NewPath("default"), map[string]any{def.Name: decode(v1.Default.Raw)}, nil); len(errs) > 0 {
			return nil, fmt.Errorf("invalid default: %w", errs.ToAggregate())
		}
	}
	compiled.Lock()
	if len(compiled.m) >= maxCached {
		compiled.m = map[[32]byte]*Definition{}
	}
	compiled.m[key] = d
	compiled.Unlock()
	return d, nil
}

func compileErrors(d *Definition) field.ErrorList {
	var errs field.ErrorList
	var walk func(s *structuralschema.Structural, p *field.Path)
	walk = func(s *structuralschema.Structural, p *field.Path) {
		if s == nil {
			return
		}
		if len(s.XValidations) > 0 {
			res, err := cel.Compile(s, model.SchemaDeclType(s, false), celconfig.PerCallLimit,
				environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
			if err != nil {
				errs = append(errs, field.Invalid(p, s.XValidations, err.Error()))
			}
			for i, r := range res {
				if r.Error != nil {
					errs = append(errs, field.Invalid(p.Child("x-kubernetes-validations").Index(i), s.XValidations[i].Rule, r.Error.Detail))
				}
			}
		}
		for name, prop := range s.Properties {
			walk(&prop, p.Child("properties").Key(name))
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Structural, p.Child("additionalProperties"))
		}
		walk(s.Items, p.Child("items"))
	}
	walk(d.structural, field.NewPath("schema"))
	return errs
}

func hasValidations(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if hasValidations(&p) {
			return true
		}
	}
	if s.AdditionalProperties != nil && hasValidations(s.AdditionalProperties.Structural) {
		return true
	}
	return hasValidations(s.Items)
}

// Names returns the names of the defined variables, sorted.
func (d *Definitions) Names() []string { return d.names }

// Get returns the definition of a variable.
func (d *Definitions) Get(name string) (*Definition, bool) {
	def, ok := d.byName[name]
	return def, ok
}

func decode(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	// apimachinery's JSON keeps integers as int64, as the API server does for custom resources.
	if err := utiljson.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}

// Default returns values with defaults applied: a variable that is not set and whose schema has a
// top-level default is added, and nested defaults are filled in. The result is sorted by name.
func (d *Definitions) Default(values []clusterv1.ClusterVariable) ([]clusterv1.ClusterVariable, error) {
	return d.defaultValues(values, true)
}

// DefaultOverrides applies nested defaults to per-MachineDeployment overrides without adding variables.
func (d *Definitions) DefaultOverrides(values []clusterv1.ClusterVariable) ([]clusterv1.ClusterVariable, error) {
	return d.defaultValues(values, false)
}

func (d *Definitions) defaultValues(values []clusterv1.ClusterVariable, addMissing bool) ([]clusterv1.ClusterVariable, error) {
	given := map[string]clusterv1.ClusterVariable{}
	for _, v := range values {
		given[v.Name] = v
	}
	var out []clusterv1.ClusterVariable
	for _, name := range d.names {
		def := d.byName[name]
		v, ok := given[name]
		obj := map[string]any{}
		if ok {
			obj[name] = decode(v.Value.Raw)
		}
		if !ok && !addMissing {
			continue
		}
		structuraldefaulting.Default(obj, def.structural)
		value, set := obj[name]
		if !set {
			continue
		}
		raw, err := json.Marshal(value)
		if err != nil {
			return nil, fmt.Errorf("defaulting variable %q: %w", name, err)
		}
		v.Name = name
		v.Value = apiextensionsv1.JSON{Raw: raw}
		out = append(out, v)
		delete(given, name)
	}
	// Values of undefined variables are kept so that validation reports them.
	rest := make([]string, 0, len(given))
	for name := range given {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		out = append(out, given[name])
	}
	return out, nil
}

// Validate validates the variable values of a topology (path is where they are, for example
// spec.topology.variables): every variable is defined, required ones are set, and every value follows
// its schema. oldValues, when not nil, are the previous values for CEL transition rules.
func (d *Definitions) Validate(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path) field.ErrorList {
	return d.validateValues(ctx, values, oldValues, path, true)
}

// ValidateOverrides validates per-MachineDeployment overrides: defined and valid, none required.
func (d *Definitions) ValidateOverrides(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path) field.ErrorList {
	return d.validateValues(ctx, values, oldValues, path, false)
}

func (d *Definitions) validateValues(ctx context.Context, values, oldValues []clusterv1.ClusterVariable, path *field.Path, checkRequired bool) field.ErrorList {
	var errs field.ErrorList
	old := map[string]any{}
	for _, v := range oldValues {
		old[v.Name] = decode(v.Value.Raw)
	}
	seen := map[string]bool{}
	for _, v := range values {
		vp := path.Key(v.Name)
		if seen[v.Name] {
			errs = append(errs, field.Duplicate(vp, v.Name))
			continue
		}
		seen[v.Name] = true
		def, ok := d.byName[v.Name]
		if !ok {
			errs = append(errs, field.Invalid(vp, v.Name, fmt.Sprintf("variable %q is not defined in the ClusterClass", v.Name)))
			continue
		}
		if len(v.Value.Raw) == 0 {
			errs = append(errs, field.Required(vp.Child("value"), fmt.Sprintf("variable %q has no value", v.Name)))
			continue
		}
		var oldObj map[string]any
		if o, ok := old[v.Name]; ok {
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
			if d.byName[name].Required && !seen[name] {
				errs = append(errs, field.Required(path, fmt.Sprintf("required variable %q is not set", name)))
			}
		}
	}
	return errs
}

// validate validates {name: value} against the wrapped schema; errors are reported at path, without the
// wrapper's field name.
func (def *Definition) validate(ctx context.Context, path *field.Path, obj, oldObj map[string]any) field.ErrorList {
	var errs field.ErrorList
	root := field.NewPath(def.Name)
	rewrite := func(in field.ErrorList) {
		for _, e := range in {
			f := strings.TrimPrefix(strings.TrimPrefix(e.Field, "<nil>."), "<nil>")
			f = strings.TrimPrefix(f, root.String())
			f = strings.TrimPrefix(f, ".")
			e.Field = path.String()
			if f != "" {
				if strings.HasPrefix(f, "[") {
					e.Field += f
				} else {
					e.Field += "." + f
				}
			}
			errs = append(errs, e)
		}
	}
	// Unknown fields are an error rather than silently dropped.
	probe := deepCopy(obj)
	if pruned := structuralpruning.PruneWithOptions(probe, def.structural, false, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(pruned) > 0 {
		for _, p := range pruned {
			rewrite(field.ErrorList{field.Invalid(field.NewPath(p), "", "field is not defined in the variable's schema")})
		}
		return errs
	}
	rewrite(validation.ValidateCustomResource(nil, obj, def.validator))
	if def.cel != nil && len(errs) == 0 {
		var old any
		if oldObj != nil {
			old = oldObj
		}
		celErrs, _ := def.cel.Validate(ctx, nil, def.structural, obj, old, celconfig.RuntimeCELCostBudget)
		rewrite(celErrs)
	}
	return errs
}

func deepCopy(in map[string]any) map[string]any {
	raw, _ := json.Marshal(in)
	var out map[string]any
	_ = utiljson.Unmarshal(raw, &out)
	return out
}

// Values are decoded variable values by name, as patches see them.
type Values map[string]any

// Resolve defaults and validates the values of a topology and returns them decoded. Overrides replace
// cluster values (validated the same way) when not nil.
func (d *Definitions) Resolve(ctx context.Context, values []clusterv1.ClusterVariable, path *field.Path) (Values, error) {
	defaulted, err := d.Default(values)
	if err != nil {
		return nil, err
	}
	if errs := d.Validate(ctx, defaulted, nil, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	out := Values{}
	for _, v := range defaulted {
		out[v.Name] = decode(v.Value.Raw)
	}
	return out, nil
}

// ResolveOverrides defaults and validates overrides and returns base with them applied.
func (d *Definitions) ResolveOverrides(ctx context.Context, base Values, overrides []clusterv1.ClusterVariable, path *field.Path) (Values, error) {
	if len(overrides) == 0 {
		return base, nil
	}
	defaulted, err := d.DefaultOverrides(overrides)
	if err != nil {
		return nil, err
	}
	if errs := d.ValidateOverrides(ctx, defaulted, nil, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	out := make(Values, len(base)+len(defaulted))
	for k, v := range base {
		out[k] = v
	}
	for _, v := range defaulted {
		out[v.Name] = decode(v.Value.Raw)
	}
	return out, nil
}

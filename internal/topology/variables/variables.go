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
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// BuiltinsName is the reserved name of the builtin variables.
const BuiltinsName = "builtin"

// Definition is one compiled variable definition: the definition of a variable by one source, the
// ClusterClass itself ("inline") or an external patch (the patch's name).
type Definition struct {
	// Name of the variable.
	Name string
	// From is the source of the definition: "inline" or the name of an external patch.
	From string
	// Required says whether a Cluster must set the variable.
	Required bool

	*schema
}

// schema is a compiled schema, shared by the definitions that have the same name, required flag and
// schema.
type schema struct {
	// name is the variable's name, the property of the object that wraps the schema.
	name       string
	structural *structuralschema.Structural
	validator  validation.SchemaCreateValidator
	cel        *cel.Validator
	// hasDefault says whether the schema has a top-level default.
	hasDefault bool

	// valid remembers values (their JSON) that passed validation without an old value: a definition is
	// compiled once and shared, and a Cluster's values are validated again at every reconcile.
	validMu sync.Mutex
	valid   map[string]bool
}

// maxValidValues bounds a definition's memory of valid values; it is emptied when full.
const maxValidValues = 256

func (def *schema) knownValid(raw []byte) bool {
	def.validMu.Lock()
	defer def.validMu.Unlock()
	return def.valid[string(raw)]
}

func (def *schema) rememberValid(raw []byte) {
	def.validMu.Lock()
	defer def.validMu.Unlock()
	if def.valid == nil || len(def.valid) >= maxValidValues {
		def.valid = map[string]bool{}
	}
	def.valid[string(raw)] = true
}

// variable is a variable and its definitions, in the order of the ClusterClass's status.variables.
type variable struct {
	name string
	defs []*Definition
	// conflict: the definitions differ (required flag, schema or metadata), so that a Cluster sets a
	// value for each with definitionFrom (the book's "Variable definition conflicts").
	conflict bool
}

// from returns the definition of the variable by source from.
func (v *variable) from(from string) *Definition {
	for _, d := range v.defs {
		if d.From == from {
			return d
		}
	}
	return nil
}

// Definitions are the compiled variable definitions of a ClusterClass.
type Definitions struct {
	byName map[string]*variable
	names  []string
}

// compiled caches compiled schemas by the hash of their JSON: compiling CEL rules is expensive and the
// definitions of a class rarely change.
var compiled = struct {
	sync.Mutex
	m map[[32]byte]*schema
}{m: map[[32]byte]*schema{}}

const maxCached = 1024

// Compile checks and compiles the variable definitions of a ClusterClass's spec (source "inline").
func Compile(defs []clusterv1.ClusterClassVariable) (*Definitions, error) {
	out := &Definitions{byName: map[string]*variable{}}
	var errs field.ErrorList
	for i, def := range defs {
		path := field.NewPath("spec", "variables").Index(i)
		if err := checkName(def.Name, path.Child("name")); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := out.byName[def.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("name"), def.Name))
			continue
		}
		s, err := compileOne(def)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("schema", "openAPIV3Schema"), def.Name, err.Error()))
			continue
		}
		out.add(&Definition{Name: def.Name, From: clusterv1.VariableDefinitionFromInline, Required: def.Required, schema: s}, false)
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	sort.Strings(out.names)
	return out, nil
}

func checkName(name string, path *field.Path) *field.Error {
	if name == BuiltinsName || strings.HasPrefix(name, BuiltinsName+".") {
		return field.Invalid(path, name, `"builtin" is a reserved variable name`)
	}
	if strings.Contains(name, ".") {
		return field.Invalid(path, name, "variable names must not contain \".\"")
	}
	return nil
}

func (d *Definitions) add(def *Definition, conflict bool) {
	v, ok := d.byName[def.Name]
	if !ok {
		v = &variable{name: def.Name}
		d.byName[def.Name] = v
		d.names = append(d.names, def.Name)
	}
	v.defs = append(v.defs, def)
	v.conflict = v.conflict || conflict
}

// FromClass returns the definitions of a ClusterClass: those of its spec (source "inline"), and those
// that status.variables adds from other sources (the variables that external patches discover), each
// variable with all its definitions. A variable whose definitions differ (status.variables'
// definitionsConflict) takes a value per definition, with definitionFrom.
func FromClass(class *clusterv1.ClusterClass) (*Definitions, error) {
	out, err := Compile(class.Spec.Variables)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for i, sv := range class.Status.Variables {
		for j, sd := range sv.Definitions {
			if sd.From == clusterv1.VariableDefinitionFromInline {
				continue // the spec's, compiled above
			}
			path := field.NewPath("status", "variables").Index(i).Child("definitions").Index(j)
			if err := checkName(sv.Name, path); err != nil {
				errs = append(errs, err)
				continue
			}
			def := clusterv1.ClusterClassVariable{Name: sv.Name, Required: sd.Required, Metadata: sd.Metadata, Schema: sd.Schema}
			s, err := compileOne(def)
			if err != nil {
				errs = append(errs, field.Invalid(path.Child("schema", "openAPIV3Schema"), sv.Name, err.Error()))
				continue
			}
			conflict := false
			if v, ok := out.byName[sv.Name]; ok {
				conflict = sv.DefinitionsConflict || differs(class, v.defs[0], def)
			}
			out.add(&Definition{Name: sv.Name, From: sd.From, Required: sd.Required, schema: s}, conflict)
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	sort.Strings(out.names)
	return out, nil
}

// differs reports whether a definition differs from the first one of its variable (required flag, schema
// or metadata), as the ClusterClass controller's definitionsConflict.
func differs(class *clusterv1.ClusterClass, first *Definition, def clusterv1.ClusterClassVariable) bool {
	if first.Required != def.Required {
		return true
	}
	firstDef, ok := classDefinition(class, first.Name, first.From)
	if !ok {
		return true
	}
	return !equality.Semantic.DeepEqual(firstDef.Schema, def.Schema) || !equality.Semantic.DeepEqual(firstDef.Metadata, def.Metadata)
}

// classDefinition finds the definition of a variable by a source in a class's spec or status.
func classDefinition(class *clusterv1.ClusterClass, name, from string) (clusterv1.ClusterClassVariable, bool) {
	if from == clusterv1.VariableDefinitionFromInline {
		for _, v := range class.Spec.Variables {
			if v.Name == name {
				return v, true
			}
		}
	}
	for _, sv := range class.Status.Variables {
		if sv.Name != name {
			continue
		}
		for _, d := range sv.Definitions {
			if d.From == from {
				return clusterv1.ClusterClassVariable{Name: name, Required: d.Required, Metadata: d.Metadata, Schema: d.Schema}, true
			}
		}
	}
	return clusterv1.ClusterClassVariable{}, false
}

func compileOne(def clusterv1.ClusterClassVariable) (*schema, error) {
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
	d := &schema{name: def.Name, structural: s, validator: validator, hasDefault: v1.Default != nil}
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
		compiled.m = map[[32]byte]*schema{}
	}
	compiled.m[key] = d
	compiled.Unlock()
	return d, nil
}

func compileErrors(d *schema) field.ErrorList {
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

// validate validates {name: value} against the wrapped schema; errors are reported at path, without the
// wrapper's field name.
func (def *schema) validate(ctx context.Context, path *field.Path, obj, oldObj map[string]any) field.ErrorList {
	var errs field.ErrorList
	root := field.NewPath(def.name)
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

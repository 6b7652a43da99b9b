package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Difference is one way in which capstan's CRD differs from upstream's.
type Difference struct {
	// CRD is the CRD name, for example clusters.cluster.x-k8s.io.
	CRD string
	// Version is the API version compared.
	Version string
	// Path is the field path (".spec.replicas", "items" as "[]", map values as "{}"), or the CRD part
	// ("names", "printerColumns", ...) for differences outside the schema.
	Path string
	// What says what differs.
	What string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s %s %s: %s", d.CRD, d.Version, d.Path, d.What)
}

// LoadDir reads every CRD in the YAML files of a directory, keyed by CRD name.
func LoadDir(dir string) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := utilyaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", f, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		out[crd.Name] = crd
	}
	return out, nil
}

// Compare lists every difference between an upstream CRD and capstan's, for one version served by both.
// Constraints capstan adds on top of upstream (x-kubernetes-validations rules) are not differences:
// they replace upstream's admission webhooks.
func Compare(upstream, ours *apiextensionsv1.CustomResourceDefinition, version string) []Difference {
	c := &comparer{crd: upstream.Name, version: version}
	if upstream.Spec.Group != ours.Spec.Group {
		c.add("group", "upstream %q, capstan %q", upstream.Spec.Group, ours.Spec.Group)
	}
	if upstream.Spec.Scope != ours.Spec.Scope {
		c.add("scope", "upstream %s, capstan %s", upstream.Spec.Scope, ours.Spec.Scope)
	}
	c.compareNames(upstream.Spec.Names, ours.Spec.Names)

	uv, ov := findVersion(upstream, version), findVersion(ours, version)
	switch {
	case uv == nil:
		c.add("versions", "upstream does not have version %s", version)
		return c.diffs
	case ov == nil:
		c.add("versions", "capstan does not serve version %s", version)
		return c.diffs
	}
	if !ov.Served {
		c.add("versions", "capstan does not serve version %s", version)
	}
	if !reflect.DeepEqual(normalizeSubresources(uv.Subresources), normalizeSubresources(ov.Subresources)) {
		c.add("subresources", "upstream %s, capstan %s", toJSON(uv.Subresources), toJSON(ov.Subresources))
	}
	c.comparePrinterColumns(uv.AdditionalPrinterColumns, ov.AdditionalPrinterColumns)
	if uv.Schema == nil || uv.Schema.OpenAPIV3Schema == nil {
		return c.diffs
	}
	if ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil {
		c.add(".", "capstan has no schema")
		return c.diffs
	}
	c.compareSchema(".", uv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema)
	return c.diffs
}

type comparer struct {
	crd, version string
	diffs        []Difference
}

func (c *comparer) add(path, format string, args ...any) {
	c.diffs = append(c.diffs, Difference{CRD: c.crd, Version: c.version, Path: path, What: fmt.Sprintf(format, args...)})
}

func findVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func (c *comparer) compareNames(u, o apiextensionsv1.CustomResourceDefinitionNames) {
	check := func(field string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			c.add("names."+field, "upstream %v, capstan %v", a, b)
		}
	}
	check("kind", u.Kind, o.Kind)
	check("listKind", u.ListKind, o.ListKind)
	check("plural", u.Plural, o.Plural)
	check("singular", u.Singular, o.Singular)
	check("shortNames", sortedCopy(u.ShortNames), sortedCopy(o.ShortNames))
	check("categories", sortedCopy(u.Categories), sortedCopy(o.Categories))
}

func (c *comparer) comparePrinterColumns(u, o []apiextensionsv1.CustomResourceColumnDefinition) {
	key := func(col apiextensionsv1.CustomResourceColumnDefinition) string {
		return fmt.Sprintf("name=%s type=%s format=%s jsonPath=%s priority=%d", col.Name, col.Type, col.Format, col.JSONPath, col.Priority)
	}
	var uk, ok []string
	for _, col := range u {
		uk = append(uk, key(col))
	}
	for _, col := range o {
		ok = append(ok, key(col))
	}
	if !slices.Equal(uk, ok) {
		c.add("additionalPrinterColumns", "upstream [%s], capstan [%s]", strings.Join(uk, "; "), strings.Join(ok, "; "))
	}
}

func (c *comparer) compareSchema(path string, u, o *apiextensionsv1.JSONSchemaProps) {
	check := func(what string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			c.add(path, "%s: upstream %s, capstan %s", what, toJSON(a), toJSON(b))
		}
	}
	check("type", u.Type, o.Type)
	check("format", u.Format, o.Format)
	check("enum", enumValues(u.Enum), enumValues(o.Enum))
	check("default", jsonValue(u.Default), jsonValue(o.Default))
	check("required", sortedCopy(u.Required), sortedCopy(o.Required))
	check("nullable", u.Nullable, o.Nullable)
	check("x-kubernetes-int-or-string", u.XIntOrString, o.XIntOrString)
	check("x-kubernetes-preserve-unknown-fields", boolValue(u.XPreserveUnknownFields), boolValue(o.XPreserveUnknownFields))
	check("x-kubernetes-embedded-resource", u.XEmbeddedResource, o.XEmbeddedResource)
	check("x-kubernetes-list-type", stringValue(u.XListType), stringValue(o.XListType))
	check("x-kubernetes-list-map-keys", u.XListMapKeys, o.XListMapKeys)
	check("x-kubernetes-map-type", stringValue(u.XMapType), stringValue(o.XMapType))
	check("maxLength", int64Value(u.MaxLength), int64Value(o.MaxLength))
	check("minLength", int64Value(u.MinLength), int64Value(o.MinLength))
	check("maxItems", int64Value(u.MaxItems), int64Value(o.MaxItems))
	check("minItems", int64Value(u.MinItems), int64Value(o.MinItems))
	check("maxProperties", int64Value(u.MaxProperties), int64Value(o.MaxProperties))
	check("minProperties", int64Value(u.MinProperties), int64Value(o.MinProperties))
	check("maximum", floatValue(u.Maximum), floatValue(o.Maximum))
	check("minimum", floatValue(u.Minimum), floatValue(o.Minimum))
	check("pattern", u.Pattern, o.Pattern)
	check("uniqueItems", u.UniqueItems, o.UniqueItems)
	// Upstream's own CEL rules must be kept; capstan may add rules of its own.
	for _, rule := range u.XValidations {
		if !slices.ContainsFunc(o.XValidations, func(r apiextensionsv1.ValidationRule) bool { return r.Rule == rule.Rule }) {
			c.add(path, "x-kubernetes-validations: upstream rule %q is missing", rule.Rule)
		}
	}

	for _, name := range sortedKeys(u.Properties) {
		up := u.Properties[name]
		op, found := o.Properties[name]
		if !found {
			c.add(join(path, name), "missing in capstan (upstream type %q)", up.Type)
			continue
		}
		c.compareSchema(join(path, name), &up, &op)
	}
	for _, name := range sortedKeys(o.Properties) {
		if _, found := u.Properties[name]; !found {
			c.add(join(path, name), "not in upstream")
		}
	}

	switch {
	case u.Items != nil && u.Items.Schema != nil && (o.Items == nil || o.Items.Schema == nil):
		c.add(path+"[]", "missing in capstan")
	case u.Items == nil && o.Items != nil:
		c.add(path+"[]", "not in upstream")
	case u.Items != nil && u.Items.Schema != nil:
		c.compareSchema(path+"[]", u.Items.Schema, o.Items.Schema)
	}

	ua, oa := u.AdditionalProperties, o.AdditionalProperties
	switch {
	case ua != nil && oa == nil:
		c.add(path+"{}", "missing in capstan")
	case ua == nil && oa != nil:
		c.add(path+"{}", "not in upstream")
	case ua != nil:
		check("additionalProperties.allows", ua.Allows, oa.Allows)
		if ua.Schema != nil && oa.Schema != nil {
			c.compareSchema(path+"{}", ua.Schema, oa.Schema)
		} else if (ua.Schema == nil) != (oa.Schema == nil) {
			c.add(path+"{}", "schema: upstream %s, capstan %s", toJSON(ua.Schema), toJSON(oa.Schema))
		}
	}

	for _, combo := range []struct {
		name string
		u, o []apiextensionsv1.JSONSchemaProps
	}{{"allOf", u.AllOf, o.AllOf}, {"anyOf", u.AnyOf, o.AnyOf}, {"oneOf", u.OneOf, o.OneOf}} {
		check(combo.name, toJSON(combo.u), toJSON(combo.o))
	}
}

func join(path, name string) string {
	if path == "." {
		return "." + name
	}
	return path + "." + name
}

func normalizeSubresources(s *apiextensionsv1.CustomResourceSubresources) string {
	if s == nil {
		return "{}"
	}
	return toJSON(s)
}

func toJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(data)
}

func enumValues(values []apiextensionsv1.JSON) []string {
	var out []string
	for _, v := range values {
		out = append(out, string(v.Raw))
	}
	sort.Strings(out)
	return out
}

func jsonValue(v *apiextensionsv1.JSON) string {
	if v == nil {
		return ""
	}
	var decoded any
	if err := json.Unmarshal(v.Raw, &decoded); err != nil {
		return string(v.Raw)
	}
	return toJSON(decoded)
}

func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func boolValue(b *bool) bool { return b != nil && *b }

func stringValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func int64Value(i *int64) string {
	if i == nil {
		return ""
	}
	return fmt.Sprint(*i)
}

func floatValue(f *float64) string {
	if f == nil {
		return ""
	}
	return fmt.Sprint(*f)
}

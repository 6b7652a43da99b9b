package variables

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func defs(t *testing.T, y string) []clusterv1.ClusterClassVariable {
	t.Helper()
	var out []clusterv1.ClusterClassVariable
	if err := yaml.Unmarshal([]byte(y), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func value(name, js string) clusterv1.ClusterVariable {
	return clusterv1.ClusterVariable{Name: name, Value: apiextensionsv1.JSON{Raw: []byte(js)}}
}

// bookVariables are the variable definitions of the book's "Writing a ClusterClass" examples.
const bookVariables = `
- name: imageRepository
  required: true
  schema:
    openAPIV3Schema:
      type: string
      description: ImageRepository is the container registry to pull images from.
      default: registry.k8s.io
      example: registry.k8s.io
- name: workerMachineType
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: t3.large
- name: httpProxy
  schema:
    openAPIV3Schema:
      type: object
      properties:
        url:
          type: string
        noProxy:
          type: string
        enabled:
          type: boolean
          default: true
- name: mdConfig
  schema:
    openAPIV3Schema:
      type: object
      additionalProperties:
        type: object
        properties:
          osImage:
            type: string
- name: dnsServers
  schema:
    openAPIV3Schema:
      type: array
      items:
        type: string
- name: replicasHint
  schema:
    openAPIV3Schema:
      type: integer
      minimum: 1
      maximum: 5
- name: cidr
  schema:
    openAPIV3Schema:
      type: string
      x-kubernetes-validations:
      - rule: self.endsWith("/16") || self.endsWith("/24")
        message: cidr must be a /16 or a /24
- name: clusterIdentityRef
  schema:
    openAPIV3Schema:
      type: object
      properties:
        kind:
          type: string
          enum: ["AzureClusterIdentity"]
        name:
          type: string
`

func TestResolve(t *testing.T) {
	d, err := Compile(defs(t, bookVariables))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		values  []clusterv1.ClusterVariable
		want    map[string]string // JSON of expected values; others must be absent
		wantErr []string
	}{
		{
			name: "required variables with a default are defaulted",
			want: map[string]string{"imageRepository": `"registry.k8s.io"`, "workerMachineType": `"t3.large"`},
		},
		{
			name:   "a value replaces the default",
			values: []clusterv1.ClusterVariable{value("imageRepository", `"my.custom.registry"`)},
			want:   map[string]string{"imageRepository": `"my.custom.registry"`},
		},
		{
			name:   "nested defaults of objects are applied",
			values: []clusterv1.ClusterVariable{value("httpProxy", `{"url":"http://proxy:3128"}`)},
			want:   map[string]string{"httpProxy": `{"enabled":true,"url":"http://proxy:3128"}`},
		},
		{
			name: "maps and arrays",
			values: []clusterv1.ClusterVariable{
				value("mdConfig", `{"default-worker":{"osImage":"ubuntu"}}`),
				value("dnsServers", `["1.1.1.1","8.8.8.8"]`),
			},
			want: map[string]string{"mdConfig": `{"default-worker":{"osImage":"ubuntu"}}`, "dnsServers": `["1.1.1.1","8.8.8.8"]`},
		},
		{
			name:    "wrong type",
			values:  []clusterv1.ClusterVariable{value("imageRepository", `42`)},
			wantErr: []string{`spec.topology.variables[imageRepository].value: Invalid value: "integer"`},
		},
		{
			name:    "out of range",
			values:  []clusterv1.ClusterVariable{value("replicasHint", `7`)},
			wantErr: []string{`spec.topology.variables[replicasHint].value`, "less than or equal to 5"},
		},
		{
			name:    "CEL rule",
			values:  []clusterv1.ClusterVariable{value("cidr", `"10.0.0.0/8"`)},
			wantErr: []string{`spec.topology.variables[cidr].value`, "cidr must be a /16 or a /24"},
		},
		{
			name:   "CEL rule passes",
			values: []clusterv1.ClusterVariable{value("cidr", `"10.0.0.0/16"`)},
			want:   map[string]string{"cidr": `"10.0.0.0/16"`},
		},
		{
			name:    "enum",
			values:  []clusterv1.ClusterVariable{value("clusterIdentityRef", `{"kind":"Other","name":"x"}`)},
			wantErr: []string{`spec.topology.variables[clusterIdentityRef].value.kind`, "supported values"},
		},
		{
			name:    "unknown field",
			values:  []clusterv1.ClusterVariable{value("httpProxy", `{"uri":"http://proxy"}`)},
			wantErr: []string{`spec.topology.variables[httpProxy].value.uri`, "not defined in the variable's schema"},
		},
		{
			name:    "undefined variable",
			values:  []clusterv1.ClusterVariable{value("nope", `1`)},
			wantErr: []string{`variable "nope" is not defined in the ClusterClass`},
		},
		{
			name:    "builtin cannot be set",
			values:  []clusterv1.ClusterVariable{value("builtin", `{}`)},
			wantErr: []string{`variable "builtin" is not defined`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := d.Resolve(context.Background(), tt.values, field.NewPath("spec", "topology", "variables"))
			if len(tt.wantErr) > 0 {
				g.Expect(err).To(HaveOccurred())
				for _, w := range tt.wantErr {
					g.Expect(err.Error()).To(ContainSubstring(w))
				}
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			for name, js := range tt.want {
				raw, err := json.Marshal(got.Inline()[name])
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(raw)).To(MatchJSON(js), name)
			}
		})
	}
}

func TestRequiredWithoutDefault(t *testing.T) {
	g := NewWithT(t)
	d, err := Compile(defs(t, `
- name: region
  required: true
  schema:
    openAPIV3Schema:
      type: string
`))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = d.Resolve(context.Background(), nil, field.NewPath("spec", "topology", "variables"))
	g.Expect(err).To(MatchError(ContainSubstring(`required variable "region" is not set`)))
}

func TestOverrides(t *testing.T) {
	g := NewWithT(t)
	d, err := Compile(defs(t, bookVariables))
	g.Expect(err).NotTo(HaveOccurred())
	base, err := d.Resolve(context.Background(), []clusterv1.ClusterVariable{value("workerMachineType", `"t3.large"`)}, field.NewPath("spec", "topology", "variables"))
	g.Expect(err).NotTo(HaveOccurred())
	md, err := d.ResolveOverrides(context.Background(), base, []clusterv1.ClusterVariable{value("workerMachineType", `"t3.small"`)}, field.NewPath("overrides"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(md.Inline()["workerMachineType"]).To(Equal("t3.small"))
	g.Expect(base.Inline()["workerMachineType"]).To(Equal("t3.large"), "overrides must not change the cluster values")

	_, err = d.ResolveOverrides(context.Background(), base, []clusterv1.ClusterVariable{value("workerMachineType", `3`)}, field.NewPath("overrides"))
	g.Expect(err).To(MatchError(ContainSubstring("overrides[workerMachineType].value")))
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name    string
		defs    string
		wantErr string
	}{
		{"builtin is reserved", `[{name: builtin, required: false, schema: {openAPIV3Schema: {type: string}}}]`, `"builtin" is a reserved variable name`},
		{"duplicate", `[{name: a, required: false, schema: {openAPIV3Schema: {type: string}}}, {name: a, required: false, schema: {openAPIV3Schema: {type: string}}}]`, "Duplicate value"},
		{"default does not match the schema", `[{name: a, required: false, schema: {openAPIV3Schema: {type: integer, default: "x"}}}]`, "invalid default"},
		{"CEL rule does not compile", `[{name: a, required: false, schema: {openAPIV3Schema: {type: string, x-kubernetes-validations: [{rule: "self >"}]}}}]`, "Syntax error"},
		{"object without type", `[{name: a, required: false, schema: {openAPIV3Schema: {properties: {b: {type: string}}}}}]`, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Compile(defs(t, tt.defs))
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

// httpProxyClass is the book's "Variable definition conflicts" example: http-proxy defined inline and by
// the external patch lbImageRepository with another schema, no-proxy inline only, and a variable
// defined the same way by both sources.
func httpProxyClass(t *testing.T) *clusterv1.ClusterClass {
	t.Helper()
	class := &clusterv1.ClusterClass{}
	if err := yaml.UnmarshalStrict([]byte(`
spec:
  variables:
  - name: no-proxy
    required: true
    schema:
      openAPIV3Schema: {type: string, default: internal.com}
  - name: http-proxy
    required: false
    schema:
      openAPIV3Schema: {type: string, default: proxy.example.com}
  - name: shared
    required: false
    schema:
      openAPIV3Schema: {type: string}
  patches:
  - name: lbImageRepository
    external: {generateExtension: generate.ext}
status:
  variables:
  - name: http-proxy
    definitionsConflict: true
    definitions:
    - from: inline
      required: false
      schema:
        openAPIV3Schema: {type: string, default: proxy.example.com}
    - from: lbImageRepository
      required: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            host: {type: string}
            port: {type: integer}
  - name: no-proxy
    definitions:
    - from: inline
      required: true
      schema:
        openAPIV3Schema: {type: string, default: internal.com}
  - name: shared
    definitions:
    - from: inline
      required: false
      schema:
        openAPIV3Schema: {type: string}
    - from: lbImageRepository
      required: false
      schema:
        openAPIV3Schema: {type: string}
`), class); err != nil {
		t.Fatal(err)
	}
	return class
}

func TestDefinitionFrom(t *testing.T) {
	path := field.NewPath("spec", "topology", "variables")
	from := func(name, definitionFrom, js string) clusterv1.ClusterVariable {
		v := value(name, js)
		v.DefinitionFrom = definitionFrom
		return v
	}
	tests := []struct {
		name    string
		values  []clusterv1.ClusterVariable
		inline  map[string]string // JSON of the values inline patches see
		patch   map[string]string // JSON of the values the external patch lbImageRepository sees
		wantErr []string
	}{
		{
			name: "the book's example: one value per conflicting definition, no-proxy without definitionFrom",
			values: []clusterv1.ClusterVariable{
				value("no-proxy", `"internal.domain.com"`),
				from("http-proxy", "inline", `"http://proxy.example2.com:1234"`),
				from("http-proxy", "lbImageRepository", `{"host":"proxy.example2.com","port":1234}`),
			},
			inline: map[string]string{"no-proxy": `"internal.domain.com"`, "http-proxy": `"http://proxy.example2.com:1234"`},
			patch:  map[string]string{"http-proxy": `{"host":"proxy.example2.com","port":1234}`},
		},
		{
			name: "a value for equal definitions serves both sources",
			values: []clusterv1.ClusterVariable{
				value("shared", `"x"`),
				from("http-proxy", "lbImageRepository", `{"host":"h"}`),
			},
			inline: map[string]string{"shared": `"x"`, "http-proxy": `"proxy.example.com"`, "no-proxy": `"internal.com"`},
			patch:  map[string]string{"shared": `"x"`, "http-proxy": `{"host":"h"}`},
		},
		{
			name:    "a conflicting variable without definitionFrom",
			values:  []clusterv1.ClusterVariable{value("http-proxy", `"x"`)},
			wantErr: []string{`spec.topology.variables[http-proxy]`, `variable "http-proxy" has conflicting definitions (from "inline", "lbImageRepository"): set one value per definition with definitionFrom`},
		},
		{
			name:    "the value of a definition follows its schema",
			values:  []clusterv1.ClusterVariable{from("http-proxy", "lbImageRepository", `"http://x"`)},
			wantErr: []string{`spec.topology.variables[http-proxy].value: Invalid value: "string"`, "must be of type object"},
		},
		{
			name:    "a required definition without value",
			values:  []clusterv1.ClusterVariable{from("http-proxy", "inline", `"x"`)},
			wantErr: []string{`required variable "http-proxy" from "lbImageRepository" is not set`},
		},
		{
			name:    "an unknown source",
			values:  []clusterv1.ClusterVariable{from("no-proxy", "other", `"x"`)},
			wantErr: []string{`variable "no-proxy" has no definition from "other": its definitions are from "inline"`},
		},
		{
			name:    "set twice from the same source",
			values:  []clusterv1.ClusterVariable{from("http-proxy", "inline", `"x"`), from("http-proxy", "inline", `"y"`)},
			wantErr: []string{`variable \"http-proxy\" from \"inline\" is set more than once`},
		},
		{
			name:    "with and without definitionFrom",
			values:  []clusterv1.ClusterVariable{value("shared", `"x"`), from("shared", "inline", `"y"`)},
			wantErr: []string{`variable "shared" is set both without and with definitionFrom`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d, err := FromClass(httpProxyClass(t))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Conflicts("http-proxy")).To(BeTrue())
			g.Expect(d.Conflicts("shared")).To(BeFalse())
			got, err := d.Resolve(context.Background(), tt.values, path)
			if len(tt.wantErr) > 0 {
				g.Expect(err).To(HaveOccurred())
				for _, w := range tt.wantErr {
					g.Expect(err.Error()).To(ContainSubstring(w))
				}
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			for source, want := range map[string]map[string]string{"inline": tt.inline, "lbImageRepository": tt.patch} {
				raw, err := json.Marshal(got.For(source))
				g.Expect(err).NotTo(HaveOccurred())
				wantRaw := "{"
				i := 0
				for k, v := range want {
					if i > 0 {
						wantRaw += ","
					}
					wantRaw += `"` + k + `":` + v
					i++
				}
				g.Expect(string(raw)).To(MatchJSON(wantRaw+"}"), source)
			}
		})
	}
}

func TestDefaultKeepsOrderAndAddsPerDefinition(t *testing.T) {
	g := NewWithT(t)
	d, err := FromClass(httpProxyClass(t))
	g.Expect(err).NotTo(HaveOccurred())
	path := field.NewPath("spec", "topology", "variables")
	in := []clusterv1.ClusterVariable{value("shared", `"x"`)}
	in[0].DefinitionFrom = ""
	lb := value("http-proxy", `{"host":"h"}`)
	lb.DefinitionFrom = "lbImageRepository"
	out, errs := d.Default(append(in, lb), path)
	g.Expect(errs).To(BeEmpty())
	var got []string
	for _, v := range out {
		got = append(got, v.Name+"/"+v.DefinitionFrom+"="+string(v.Value.Raw))
	}
	// The given values first, in their order; then the defaults: http-proxy's inline definition (its
	// lbImageRepository one is set) and no-proxy, which has one definition and is set without
	// definitionFrom.
	g.Expect(got).To(Equal([]string{
		`shared/="x"`,
		`http-proxy/lbImageRepository={"host":"h"}`,
		`http-proxy/inline="proxy.example.com"`,
		`no-proxy/="internal.com"`,
	}))
}

package variables

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// FuzzVariables checks that no variable definitions of a ClusterClass (schemas, defaults, CEL rules) and
// no value of a Cluster make compiling, defaulting, validating or resolving panic, and that a value that
// validates resolves.
func FuzzVariables(f *testing.F) {
	f.Add(bookVariables, "imageRepository", `"example.com"`)
	f.Add(bookVariables, "httpProxy", `{"url": "http://proxy", "enabled": false}`)
	f.Add(bookVariables, "replicasHint", `7`)
	f.Add(`
- name: rules
  schema:
    openAPIV3Schema:
      type: object
      properties:
        a: {type: integer}
        b: {type: integer}
      x-kubernetes-validations:
      - rule: self.a < self.b
        messageExpression: "'a must be below b, got ' + string(self.a)"
`, "rules", `{"a": 2, "b": 1}`)
	f.Add(`[{"name": "s", "schema": {"openAPIV3Schema": {"type": "string", "pattern": "^a+$", "maxLength": 3, "enum": ["a", "aa"]}}}]`, "s", `"aaaa"`)
	f.Fuzz(func(t *testing.T, defsYAML, name, valueJSON string) {
		var defs []clusterv1.ClusterClassVariable
		if err := yaml.Unmarshal([]byte(defsYAML), &defs); err != nil {
			return
		}
		d, err := Compile(defs)
		if err != nil {
			return
		}
		values := []clusterv1.ClusterVariable{{Name: name, Value: apiextensionsv1.JSON{Raw: []byte(valueJSON)}}}
		path := field.NewPath("spec", "topology", "variables")
		defaulted, errs := d.Default(values, path)
		if len(errs) > 0 {
			return
		}
		ctx := context.Background()
		if errs := d.Validate(ctx, defaulted, nil, path); len(errs) > 0 {
			return
		}
		if _, err := d.Resolve(ctx, defaulted, path); err != nil {
			t.Fatalf("values that validate do not resolve: %v", err)
		}
	})
}

package yamlprocessor

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/capstan-dev/capstan/internal/manifest"
)

// marker stands for a variable in the fuzzed texts of FuzzSubstitution.
const marker = "@@"

// FuzzSubstitution checks, for any text with markers and any value: the text with each marker written as
// ${FUZZ_VALUE}, executed with FUZZ_VALUE set, is byte for byte the text with the value put in by hand,
// and so parses to the same objects. Backslashes, quotes and YAML syntax around the variable must come out
// as written. The seed corpus runs with `go test`; `make fuzz` explores further.
func FuzzSubstitution(f *testing.F) {
	seeds := []struct{ text, value string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: @@\ndata:\n  path: 'C:\\\\Windows'\n", "win"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  plain: C:\\\\Windows\\System32\n  v: @@\n", "x"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  dq: \"a\\\\b @@\"\n", "y"},
		{"kind: Cluster\nspec:\n  cidrBlocks: @@\n", "[\"10.0.0.0/8\"]"},
		{"a: '@@'\nb: \"@@\"\n---\nc: @@\n", "it's"},
		{"text: |\n  line \\\\ @@\n  next\n", "v"},
	}
	for _, s := range seeds {
		f.Add(s.text, s.value)
	}
	f.Fuzz(func(t *testing.T, text, value string) {
		if !strings.Contains(text, marker) || strings.Contains(text, "$") || strings.Contains(value, "$") ||
			strings.Contains(value, marker) || strings.Contains(text, "@@@") ||
			strings.ContainsRune(text+value, 0) { // Parse refuses NUL bytes (TestParseRefusesNUL)
			t.Skip()
		}
		tmpl, err := Parse([]byte(strings.ReplaceAll(text, marker, "${FUZZ_VALUE}")))
		if err != nil {
			t.Fatalf("parsing a template whose only variable is ${FUZZ_VALUE}: %v", err)
		}
		got, err := tmpl.Execute(func(name string) (string, bool) { return value, name == "FUZZ_VALUE" })
		if err != nil {
			t.Fatalf("executing: %v", err)
		}
		want := []byte(strings.ReplaceAll(text, marker, value))
		if !bytes.Equal(got, want) {
			t.Fatalf("substitution changed the text around the variable:\n got %q\nwant %q", got, want)
		}
		gotObjs, gotErr := manifest.Parse(got)
		wantObjs, wantErr := manifest.Parse(want)
		if (gotErr == nil) != (wantErr == nil) || !equality.Semantic.DeepEqual(gotObjs, wantObjs) {
			t.Fatalf("the substituted text parses differently from the text written by hand: %v / %v", gotErr, wantErr)
		}
	})
}

// FuzzParse checks that no template makes Parse or Execute panic, and that a template that parses
// executes when every variable has a value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"name: ${CLUSTER_NAME}", "a: ${A:=x}\nb: ${B:-y}", "a: ${ A }", "a: ${A:=${B}}", "a: ${A,,} ${B:0:2} ${#C}",
		"a: ${", "a: ${A", "a: ${A:=", "a: $${A}", "a: \\${A}", "a: ${A^^}", "a: ${A/x/y}", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmpl, err := Parse(data)
		if err != nil {
			return
		}
		_ = tmpl.Variables()
		_ = tmpl.VariableMap()
		if _, err := tmpl.Execute(func(string) (string, bool) { return "v", true }); err != nil {
			var syntax *SyntaxError
			if !errors.As(err, &syntax) {
				t.Fatalf("a parsed template failed to execute with every variable set: %v", err)
			}
		}
	})
}

package yamlprocessor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

func ptr(s string) *string { return &s }

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestVariables(t *testing.T) {
	tests := []struct {
		name string
		text string
		want map[string]*string
	}{
		{name: "no variables", text: "kind: Cluster\nname: $NAME\n", want: map[string]*string{}},
		{name: "plain", text: "name: ${CLUSTER_NAME}\nns: ${NAMESPACE}", want: map[string]*string{"CLUSTER_NAME": nil, "NAMESPACE": nil}},
		{
			name: "defaults",
			text: "a: ${A:=x}\nb: ${B=y}\nc: ${C:-z}\nd: ${D:=[\"10.0.0.0/8\"]}\ne: ${E:=\"quoted\"}\nf: ${F:=}",
			want: map[string]*string{"A": ptr("x"), "B": ptr("y"), "C": ptr("z"), "D": ptr(`["10.0.0.0/8"]`), "E": ptr(`"quoted"`), "F": ptr("")},
		},
		{name: "spaced forms", text: "a: ${ A }\nb: ${ B}\nc: ${C }\nd: ${\tD\t}", want: map[string]*string{"A": nil, "B": nil, "C": nil, "D": nil}},
		{name: "required when any use has no default", text: "a: ${A:=x}\nb: ${A}\nc: ${B}\nd: ${B:=y}", want: map[string]*string{"A": nil, "B": nil}},
		{name: "the first default wins", text: "a: ${A:=x}\nb: ${A:=y}", want: map[string]*string{"A": ptr("x")}},
		{name: "a nested default shows as written", text: "a: ${A:=${B}}", want: map[string]*string{"A": ptr("${B}")}},
		{name: "other functions need a value", text: "a: ${A,,}\nb: ${B:0:2}\nc: ${#C}", want: map[string]*string{"A": nil, "B": nil, "C": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tmpl, err := Parse([]byte(tt.text))
			g.Expect(err).NotTo(HaveOccurred())
			if diff := cmp.Diff(tt.want, tmpl.VariableMap()); diff != "" {
				t.Errorf("VariableMap() mismatch (-want +got):\n%s", diff)
			}
			g.Expect(tmpl.Variables()).To(HaveLen(len(tt.want)))
		})
	}
}

func TestExecute(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		vars    map[string]string
		want    string
		missing []string
	}{
		{name: "substitution", text: "name: ${CLUSTER_NAME}", vars: map[string]string{"CLUSTER_NAME": "demo"}, want: "name: demo"},
		{name: "defaults", text: "a: ${A:=x}\nb: ${B:-y}\nc: ${C=z}", vars: map[string]string{"A": "set"}, want: "a: set\nb: y\nc: z"},
		{name: "empty values take the default", text: "a: ${A:=x}", vars: map[string]string{"A": ""}, want: "a: x"},
		{name: "spaced forms", text: "a: ${ A }-${ A}-${A }", vars: map[string]string{"A": "v"}, want: "a: v-v-v"},
		{name: "spaces inside defaults are kept", text: "a: ${A:=x y}", want: "a: x y"},
		{name: "nested default", text: "a: ${A:=${B}}", vars: map[string]string{"B": "b"}, want: "a: b"},
		{name: "shell variables without braces are left alone", text: "run: echo $HOME $$", want: "run: echo $HOME $$"},
		{name: "functions", text: "a: ${A^^}", vars: map[string]string{"A": "up"}, want: "a: UP"},
		{
			name: "backslashes are kept as written, as upstream clusterctl keeps them",
			text: "name: ${NAME}\nother: 'C:\\\\Windows'\nplain: C:\\\\Windows\\System32\ndouble: \"a\\\\b\"\nescaped: \\$x\n",
			vars: map[string]string{"NAME": "win"},
			want: "name: win\nother: 'C:\\\\Windows'\nplain: C:\\\\Windows\\System32\ndouble: \"a\\\\b\"\nescaped: \\$x\n",
		},
		{
			name:    "every missing variable is named at once",
			text:    "a: ${ZED}\nb: ${ALPHA}\nc: ${WITH_DEFAULT:=ok}\nd: ${MIDDLE}",
			vars:    map[string]string{},
			missing: []string{"ALPHA", "MIDDLE", "ZED"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tmpl, err := Parse([]byte(tt.text))
			g.Expect(err).NotTo(HaveOccurred())
			got, err := tmpl.Execute(lookup(tt.vars))
			if tt.missing != nil {
				var m *MissingVariablesError
				g.Expect(errors.As(err, &m)).To(BeTrue())
				g.Expect(m.Names).To(Equal(tt.missing))
				g.Expect(err).To(MatchError("value for variables [ALPHA, MIDDLE, ZED] is not set. Please set the value using os environment variables or the clusterctl config file"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(got)).To(Equal(tt.want))
		})
	}
}

func TestSyntaxError(t *testing.T) {
	g := NewWithT(t)
	_, err := Parse([]byte("kind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME\n  namespace: x\n"))
	var syntax *SyntaxError
	g.Expect(errors.As(err, &syntax)).To(BeTrue())
	g.Expect(syntax.Line).To(Equal(3))
	g.Expect(err).To(MatchError(ContainSubstring(`invalid variable syntax at line 3`)))
	g.Expect(err).To(MatchError(ContainSubstring(`"${CLUSTER_NAME"`)))
}

func TestNormalizeSpaced(t *testing.T) {
	tests := map[string]string{
		"${ A }":         "${A}",
		"x${ A}y${B }z":  "x${A}y${B}z",
		"${A}":           "${A}",
		"${ A:=x }":      "${ A:=x }",
		"${ }":           "${ }",
		"no variables":   "no variables",
		"${ A } ${ 1B }": "${A} ${ 1B }",
	}
	for in, want := range tests {
		if got := normalizeSpaced(in); got != want {
			t.Errorf("normalizeSpaced(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseRefusesNUL: a text with a NUL byte (a binary file given as a template) is refused with the line
// of the byte, instead of being cut there.
func TestParseRefusesNUL(t *testing.T) {
	g := NewWithT(t)
	_, err := Parse([]byte("a: ${A}\nb: x\x00y\n"))
	g.Expect(err).To(MatchError(`invalid variable syntax at line 2: the text contains a NUL byte, which YAML does not allow (is it a binary file?) in "\x00"`))
}

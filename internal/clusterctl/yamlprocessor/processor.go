// Package yamlprocessor substitutes variables in YAML with clusterctl's syntax, the syntax of the
// drone/envsubst library: ${VAR}, ${VAR:=default}, ${VAR=default}, ${VAR:-default} and the library's other
// functions, plus the legacy spaced forms ${ VAR }, ${ VAR} and ${VAR }.
//
// A template is parsed once; it then reports its variables (those without a default are required) and is
// executed against a lookup function. A required variable that the lookup does not know is an error, and
// the error names every such variable at once.
package yamlprocessor

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drone/envsubst/v2"
	"github.com/drone/envsubst/v2/parse"
)

// Template is a text with clusterctl variables.
type Template struct {
	text      string
	parsed    bool
	variables map[string]variable
}

type variable struct {
	// required is true when at least one occurrence of the variable has no default.
	required bool
	// def is the first default found for the variable.
	def *string
}

// Parse parses data and collects its variables. An error names the line of the first malformed variable.
func Parse(data []byte) (*Template, error) {
	// envsubst stops at a NUL byte and would drop the rest of the text; YAML never contains one.
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &SyntaxError{Line: bytes.Count(data[:i], []byte("\n")) + 1, Fragment: "\x00",
			Err: errors.New("the text contains a NUL byte, which YAML does not allow (is it a binary file?)")}
	}
	t := &Template{text: normalizeSpaced(string(data)), variables: map[string]variable{}}
	if !strings.Contains(t.text, "${") {
		return t, nil
	}
	tree, err := parse.Parse(t.text)
	if err != nil {
		return nil, locate(t.text, err)
	}
	t.parsed = true
	t.collect(tree.Root)
	return t, nil
}

// Variables returns the names of the template's variables, sorted.
func (t *Template) Variables() []string {
	return slices.Sorted(maps.Keys(t.variables))
}

// VariableMap maps each variable to its default, or to nil when the variable is required.
func (t *Template) VariableMap() map[string]*string {
	m := make(map[string]*string, len(t.variables))
	for name, v := range t.variables {
		if v.required {
			m[name] = nil
			continue
		}
		def := *v.def
		m[name] = &def
	}
	return m
}

// Execute substitutes every variable with the value lookup returns for it; a variable that lookup does
// not know takes its default. It fails with a *MissingVariablesError when required variables are unknown.
func (t *Template) Execute(lookup func(name string) (string, bool)) ([]byte, error) {
	var missing []string
	for name, v := range t.variables {
		if !v.required {
			continue
		}
		if _, ok := lookup(name); !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, &MissingVariablesError{Names: missing}
	}
	if !t.parsed {
		return []byte(t.text), nil
	}
	out, err := envsubst.Eval(t.text, func(name string) string {
		v, _ := lookup(name)
		return v
	})
	if err != nil {
		return nil, locate(t.text, err)
	}
	return []byte(out), nil
}

// MissingVariablesError lists the required variables that have no value.
type MissingVariablesError struct {
	// Names are the missing variables, sorted.
	Names []string
}

func (e *MissingVariablesError) Error() string {
	return fmt.Sprintf("value for variables [%s] is not set. Please set the value using os environment variables or the clusterctl config file",
		strings.Join(e.Names, ", "))
}

// defaultFunctions are the envsubst functions that fall back to their argument when the variable is unset
// or empty.
var defaultFunctions = map[string]bool{"=": true, ":=": true, ":-": true, ":?": true, ":+": true}

// collect walks the parse tree and records each variable. Variables nested in another variable's default
// are not recorded on their own: they only matter when the outer variable is unset, and an unset nested
// variable expands to the empty string (as in upstream clusterctl).
func (t *Template) collect(node parse.Node) {
	switch n := node.(type) {
	case *parse.ListNode:
		for _, child := range n.Nodes {
			t.collect(child)
		}
	case *parse.FuncNode:
		if n.Param == "" {
			return
		}
		v, seen := t.variables[n.Param]
		if !defaultFunctions[n.Name] {
			v.required = true
			t.variables[n.Param] = v
			return
		}
		if v.def == nil {
			def := defaultText(n.Args)
			v.def = &def
		}
		if !seen {
			v.required = false
		}
		t.variables[n.Param] = v
	}
}

// defaultText renders the arguments of a default function as the user wrote them.
func defaultText(args []parse.Node) string {
	var b strings.Builder
	for _, a := range args {
		switch n := a.(type) {
		case *parse.TextNode:
			b.WriteString(n.Value)
		case *parse.FuncNode:
			b.WriteString("${" + n.Param + "}")
		}
	}
	return b.String()
}

// locate finds the line of the first malformed variable, so that the error points the user at it.
func locate(text string, err error) error {
	for i, line := range strings.Split(text, "\n") {
		start := strings.Index(line, "${")
		if start < 0 {
			continue
		}
		if _, lineErr := parse.Parse(line); lineErr != nil {
			fragment := line[start:]
			if len(fragment) > 60 {
				fragment = fragment[:60] + "..."
			}
			return &SyntaxError{Line: i + 1, Fragment: fragment, Err: lineErr}
		}
	}
	return &SyntaxError{Err: err}
}

// SyntaxError is a malformed variable.
type SyntaxError struct {
	// Line is the 1-based line of the variable, 0 when unknown.
	Line int
	// Fragment is the text from the variable on.
	Fragment string
	// Err is the parser's error.
	Err error
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("invalid variable syntax: %v", e.Err)
	}
	return fmt.Sprintf("invalid variable syntax at line %d: %v in %q", e.Line, e.Err, e.Fragment)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// normalizeSpaced rewrites the legacy spaced forms ${ VAR }, ${ VAR} and ${VAR } to ${VAR}; envsubst does not
// accept them. Only plain variables are rewritten: spaces inside a default are part of the default.
func normalizeSpaced(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		start := i + j
		k := start + 2
		lead := k
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		spaced := k > lead
		nameStart := k
		for k < len(s) && isIdent(s[k], k == nameStart) {
			k++
		}
		nameEnd := k
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		spaced = spaced || k > nameEnd
		if nameEnd > nameStart && k < len(s) && s[k] == '}' && spaced {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:start])
			b.WriteString("${")
			b.WriteString(s[nameStart:nameEnd])
			b.WriteString("}")
			last = k + 1
		}
		i = start + 2
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isIdent(c byte, first bool) bool {
	switch {
	case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

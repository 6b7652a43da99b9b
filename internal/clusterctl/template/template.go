// Package template turns a workload cluster template (or any YAML given to clusterctl's YAML processor)
// into objects: variables substituted, and every namespaced object put in the target namespace. It also
// finds the ClusterClasses that Clusters with a managed topology use, and merges templates (a cluster
// template with the ClusterClass definitions it needs).
package template

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// Input is what New needs.
type Input struct {
	// Raw is the template YAML.
	Raw []byte
	// Variables looks up the value of a variable.
	Variables func(name string) (string, bool)
	// TargetNamespace is set on every namespaced object; empty leaves namespaces as they are.
	TargetNamespace string
	// ListVariablesOnly skips substitution and parsing: the template only reports its variables.
	ListVariablesOnly bool
	// RenderOnly keeps the documents rendered as YAML and not the objects (Objects returns none): for a
	// template that is only printed (WriteYAML), which then never holds its objects all at once. It is
	// ignored when TargetNamespace is set.
	RenderOnly bool
}

// Template is a processed template.
type Template struct {
	variableMap     map[string]*string
	targetNamespace string
	objs            []unstructured.Unstructured
	// rendered are the documents of a RenderOnly template.
	rendered [][]byte
}

// New processes a template.
func New(in Input) (*Template, error) {
	tmpl, err := yamlprocessor.Parse(in.Raw)
	if err != nil {
		return nil, err
	}
	t := &Template{variableMap: tmpl.VariableMap(), targetNamespace: in.TargetNamespace}
	if in.ListVariablesOnly {
		return t, nil
	}
	processed, err := tmpl.Execute(in.Variables)
	if err != nil {
		return nil, err
	}
	if in.RenderOnly && in.TargetNamespace == "" {
		if t.rendered, err = manifest.Reformat(processed); err != nil {
			return nil, err
		}
		return t, nil
	}
	if t.objs, err = manifest.Parse(processed); err != nil {
		return nil, err
	}
	if in.TargetNamespace != "" {
		scope := manifest.NewScope(t.objs)
		for i := range t.objs {
			if !scope.IsClusterScoped(&t.objs[i]) {
				t.objs[i].SetNamespace(in.TargetNamespace)
			}
		}
	}
	return t, nil
}

// Variables returns the names of the template's variables, sorted.
func (t *Template) Variables() []string {
	names := slices.Collect(maps.Keys(t.variableMap))
	slices.Sort(names)
	return names
}

// VariableMap maps each variable to its default, nil for required variables.
func (t *Template) VariableMap() map[string]*string { return maps.Clone(t.variableMap) }

// TargetNamespace returns the namespace the objects were put in.
func (t *Template) TargetNamespace() string { return t.targetNamespace }

// Objects returns the template's objects.
func (t *Template) Objects() []unstructured.Unstructured { return t.objs }

// YAML renders the template's objects.
func (t *Template) YAML() ([]byte, error) {
	if t.rendered != nil {
		return bytes.TrimSuffix(bytes.Join(t.rendered, []byte("---\n")), []byte("\n")), nil
	}
	return manifest.Marshal(t.objs)
}

// WriteYAML writes YAML's bytes and a final newline to w (as commands print it), a document at a time.
func (t *Template) WriteYAML(w io.Writer) error {
	if t.rendered == nil {
		out, err := t.YAML()
		if err != nil {
			return err
		}
		_, err = w.Write(append(out, '\n'))
		return err
	}
	if len(t.rendered) == 0 {
		_, err := io.WriteString(w, "\n")
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for i, doc := range t.rendered {
		if i > 0 {
			_, _ = bw.WriteString("---\n")
		}
		if _, err := bw.Write(doc); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Merge concatenates templates: variables are merged (a default wins over none), objects are kept in
// order. Templates must share their target namespace.
func Merge(templates ...*Template) (*Template, error) {
	merged := &Template{variableMap: map[string]*string{}}
	for i, t := range templates {
		if t == nil {
			continue
		}
		if t.rendered != nil {
			return nil, fmt.Errorf("cannot merge a template that only holds rendered documents (RenderOnly)")
		}
		if i > 0 && merged.targetNamespace != "" && t.targetNamespace != "" && merged.targetNamespace != t.targetNamespace {
			return nil, fmt.Errorf("cannot merge templates for the namespaces %q and %q", merged.targetNamespace, t.targetNamespace)
		}
		if t.targetNamespace != "" {
			merged.targetNamespace = t.targetNamespace
		}
		for k, v := range t.variableMap {
			if cur, ok := merged.variableMap[k]; !ok || cur == nil {
				merged.variableMap[k] = v
			}
		}
		merged.objs = append(merged.objs, t.objs...)
	}
	return merged, nil
}

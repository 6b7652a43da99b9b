package conformance

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/drone/envsubst/v2"
	"github.com/drone/envsubst/v2/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/capstan-dev/capstan/internal/manifest"
)

const (
	metadataFile   = "metadata.yaml"
	componentsFile = "infrastructure-components.yaml"
)

// release is one version of the provider in its repository.
type release struct {
	// dir is the version's folder in the repository, <label>/<version>.
	dir     string
	version *utilversion.Version
	// metadata is metadata.yaml; nil when there is none.
	metadata []byte
	// components is the components YAML; nil when there is none.
	components *components
	// templates, classes and others are the YAML files of the release other than metadata.yaml and the
	// components: cluster-template*.yaml, clusterclass-*.yaml and the rest.
	templates, classes, others []artifact
}

// artifact is a YAML file of a release.
type artifact struct {
	name string
	text string
}

// components is a decoded components YAML.
type components struct {
	file    string
	text    string
	objects []*unstructured.Unstructured
	// decodeErr says why there are no objects.
	decodeErr error
}

var (
	templateName     = regexp.MustCompile(`^cluster-template(-[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?\.yaml$`)
	clusterClassName = regexp.MustCompile(`^clusterclass-([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\.yaml$`)
)

// loadRepository reads the newest release of a provider from a clusterctl local repository. It returns
// the problems of the repository's layout, and why there is no release when it returns nil.
func loadRepository(fsys fs.FS, label string) (*release, []string, string) {
	var problems []string
	entries, err := fs.ReadDir(fsys, label)
	if err != nil {
		var found []string
		if root, rootErr := fs.ReadDir(fsys, "."); rootErr == nil {
			for _, e := range root {
				found = append(found, e.Name())
			}
		}
		problems = append(problems, fmt.Sprintf("no folder %s at the root of the repository (found: %s)", label, strings.Join(found, ", ")))
		return nil, problems, "Not checked: the repository has no release of the provider"
	}
	var newest *release
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, err := utilversion.ParseSemantic(e.Name())
		if err != nil {
			problems = append(problems, fmt.Sprintf("folder %s/%s is not a semantic version", label, e.Name()))
			continue
		}
		r, err := loadRelease(fsys, path.Join(label, e.Name()), v)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if r.metadata == nil {
			problems = append(problems, fmt.Sprintf("%s has no %s", r.dir, metadataFile))
		}
		if r.components == nil {
			problems = append(problems, fmt.Sprintf("%s has no components YAML", r.dir))
		}
		if newest == nil || v.GreaterThan(newest.version) {
			newest = r
		}
	}
	if newest == nil {
		problems = append(problems, fmt.Sprintf("no version folder under %s", label))
		return nil, problems, "Not checked: the repository has no release of the provider"
	}
	return newest, problems, ""
}

func loadRelease(fsys fs.FS, dir string, v *utilversion.Version) (*release, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	r := &release{dir: dir, version: v}
	var componentsCandidates []artifact
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading %s/%s: %w", dir, e.Name(), err)
		}
		a := artifact{name: e.Name(), text: string(data)}
		switch {
		case a.name == metadataFile:
			r.metadata = data
		case strings.HasSuffix(a.name, "components.yaml"):
			componentsCandidates = append(componentsCandidates, a)
		case strings.HasPrefix(a.name, "cluster-template"):
			r.templates = append(r.templates, a)
		case strings.HasPrefix(a.name, "clusterclass-"):
			r.classes = append(r.classes, a)
		default:
			r.others = append(r.others, a)
		}
	}
	if len(componentsCandidates) > 0 {
		i := slices.IndexFunc(componentsCandidates, func(a artifact) bool { return a.name == componentsFile })
		if i < 0 {
			i = 0
		}
		a := componentsCandidates[i]
		c := &components{file: a.name, text: a.text}
		c.objects, c.decodeErr = decodeDocuments(a.text)
		r.components = c
	}
	return r, nil
}

// decodeDocuments decodes the objects of a multi-document YAML, skipping empty documents and objects.
func decodeDocuments(text string) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Parse([]byte(text))
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for i := range objs {
		u := &objs[i]
		if len(u.Object) == 0 {
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("object %d is not a Kubernetes object: it has no apiVersion or kind", i+1)
		}
		out = append(out, u)
	}
	return out, nil
}

// spacedVariable matches the variable forms with spaces inside the braces, which clusterctl still accepts
// but has deprecated: ${ VAR }, ${ VAR}, ${VAR }.
var spacedVariable = regexp.MustCompile(`\$\{\s+([A-Za-z_][A-Za-z0-9_]*)\s*\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\s+\}`)

// variableName is what a clusterctl variable name looks like.
var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// variableUse is what a YAML file does with clusterctl variables.
type variableUse struct {
	// names are the variables used, sorted.
	names []string
	// problems are the uses clusterctl cannot substitute, with their line.
	problems []string
	// spaced are the lines using the deprecated forms with spaces.
	spaced []int
}

// variables finds the clusterctl variables in a YAML text, line by line (variables do not span lines).
func variables(text string) variableUse {
	var use variableUse
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "${") {
			continue
		}
		if spacedVariable.MatchString(line) {
			use.spaced = append(use.spaced, i+1)
			line = spacedVariable.ReplaceAllStringFunc(line, func(m string) string {
				return "${" + strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(m, "${"), "}")) + "}"
			})
		}
		tree, err := parse.Parse(line)
		if err != nil {
			use.problems = append(use.problems, fmt.Sprintf("line %d: %v", i+1, err))
			continue
		}
		for _, name := range paramNames(tree.Root) {
			if !variableName.MatchString(name) {
				use.problems = append(use.problems, fmt.Sprintf("line %d: %q is not a variable name", i+1, name))
				continue
			}
			seen[name] = true
		}
	}
	use.names = sortedKeys(seen)
	return use
}

// paramNames returns the variable names of a parsed envsubst template.
func paramNames(n parse.Node) []string {
	switch n := n.(type) {
	case *parse.FuncNode:
		out := []string{n.Param}
		for _, a := range n.Args {
			out = append(out, paramNames(a)...)
		}
		return out
	case *parse.ListNode:
		var out []string
		for _, c := range n.Nodes {
			out = append(out, paramNames(c)...)
		}
		return out
	default:
		return nil
	}
}

// substitute replaces the variables of a YAML text the way clusterctl does, with the given values;
// variables without a value take their default or become empty.
func substitute(text string, values map[string]string) (string, error) {
	text = spacedVariable.ReplaceAllStringFunc(text, func(m string) string {
		return "${" + strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(m, "${"), "}")) + "}"
	})
	return envsubst.Eval(text, func(name string) string { return values[name] })
}

// objectNames renders objects as Kind/name for messages, sorted.
func objectNames(objs []*unstructured.Unstructured) string {
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

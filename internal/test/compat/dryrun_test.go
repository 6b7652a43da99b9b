package compat

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// templateVariable matches clusterctl's variable forms: ${VAR}, ${VAR:=default}, ${VAR=default}, ${VAR:-default}.
var templateVariable = regexp.MustCompile(`\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:(?::?=|:-)\s*([^}]*?))?\s*\}`)

// substitute fills the variables of a cluster template with the values a user would typically give.
func substitute(text, namespace string) string {
	values := map[string]string{
		"CLUSTER_NAME": "demo", "NAMESPACE": namespace, "KUBERNETES_VERSION": "v1.31.0",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "2",
	}
	return templateVariable.ReplaceAllStringFunc(text, func(m string) string {
		parts := templateVariable.FindStringSubmatch(m)
		if v, ok := values[parts[1]]; ok {
			return v
		}
		if parts[2] != "" {
			return parts[2]
		}
		return "value"
	})
}

// fileFormats are kinds that are files read by clusterctl, not served resources: they are decoded strictly.
var fileFormats = map[string]any{
	clusterctlv1.GroupVersion.WithKind("Metadata").String(): &clusterctlv1.Metadata{},
}

// TestDocumentsApply applies, with a server-side dry run, every YAML document of the seeds and of upstream's
// templates whose kind the API server serves, as a user would with `kubectl apply --dry-run=server`.
func TestDocumentsApply(t *testing.T) {
	seeds, _ := filepath.Glob("testdata/seeds/*.md")
	templates, _ := filepath.Glob("testdata/upstream-v1.10/templates/*.yaml")
	ctx := context.Background()
	ns := env.NewNamespace(t)
	applied := 0
	for _, file := range append(seeds, templates...) {
		docs, err := DocumentsInFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			if doc.Object == nil {
				t.Logf("skipped %s: %s", doc.Source, doc.Problem)
				continue
			}
			if strings.Contains(file, "templates") {
				raw := substitute(doc.Raw, ns)
				if doc = decode(rawDocument{text: raw}); doc.Object == nil {
					t.Errorf("%s: after substituting variables: %s", file, doc.Problem)
					continue
				}
				doc.Source = filepath.Base(file)
			}
			obj := doc.Object
			gvk := obj.GroupVersionKind()
			if target, ok := fileFormats[gvk.String()]; ok {
				if err := yaml.UnmarshalStrict([]byte(doc.Raw), target); err != nil {
					t.Errorf("%s: %s does not decode: %v", doc.Source, gvk.Kind, err)
				}
				continue
			}
			mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				t.Logf("skipped %s: %s is not served (yet)", doc.Source, gvk)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", doc.Source, err)
			}
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				obj.SetNamespace(ns)
			}
			// As `kubectl apply --dry-run=server` does for an object that does not exist yet.
			err = env.Client.Create(ctx, obj, client.DryRunAll, client.FieldOwner("kubectl-client-side-apply"))
			if err != nil {
				t.Errorf("%s: %s %s is rejected: %v", doc.Source, gvk.Kind, obj.GetName(), err)
				continue
			}
			applied++
			t.Logf("applied %s: %s %s", doc.Source, gvk.Kind, obj.GetName())
		}
	}
	if applied == 0 {
		t.Fatal("no document was applied: the extraction of YAML documents is broken")
	}
}

package components

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// FuzzNew checks that no components YAML makes New panic, and that components it accepts are what
// clusterctl installs: every object carries the provider label, and every namespaced object is in the
// target namespace.
func FuzzNew(f *testing.F) {
	f.Add(capdSeed(f), "")
	f.Add(capdSeed(f), "fuzzed")
	for _, s := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: m\n  namespace: capi-system\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NAME}\n  namespace: ns\ndata:\n  path: 'C:\\\\x'\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nsubjects:\n- kind: ServiceAccount\n  name: m\n  namespace: capi-system\n",
		"---\n---\n", "kind: 1", "",
	} {
		f.Add([]byte(s), "target")
	}
	f.Fuzz(func(t *testing.T, raw []byte, target string) {
		c, err := New(Input{Provider: docker, Version: "v1.0.0", Raw: raw, Variables: func(string) (string, bool) { return "v", true }, TargetNamespace: target})
		if err != nil {
			return
		}
		scope := manifest.NewScope(c.Objects())
		for i := range c.Objects() {
			o := &c.Objects()[i]
			if o.GetLabels()[clusterv1.ProviderNameLabel] != docker.ManifestLabel() {
				t.Fatalf("%s %s has no provider label", o.GetKind(), o.GetName())
			}
			if !scope.IsClusterScoped(o) && !isNamespace(o) && o.GetNamespace() != c.TargetNamespace() {
				t.Fatalf("%s %s is in namespace %q, not the target %q", o.GetKind(), o.GetName(), o.GetNamespace(), c.TargetNamespace())
			}
		}
	})
}

func isNamespace(o *unstructured.Unstructured) bool {
	return o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace"
}

func capdSeed(f *testing.F) []byte {
	data, err := readTestdata("testdata/capd-components.yaml")
	if err != nil {
		f.Fatal(err)
	}
	return data
}

func readTestdata(path string) ([]byte, error) { return os.ReadFile(path) }

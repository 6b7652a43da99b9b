package cluster

import (
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// newClient returns a Client of the test API server through a kubeconfig file, as clusterctl makes it.
func newClient(t *testing.T) *Client {
	t.Helper()
	return New(Kubeconfig{Path: env.KubeconfigFile(t, "")}, WithPollInterval(20*time.Millisecond))
}

// parse decodes YAML documents, with fmt.Sprintf arguments.
func parse(t *testing.T, format string, args ...any) []unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Parse([]byte(fmt.Sprintf(format, args...)))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// uniqueGroup returns an API group no other test uses.
func uniqueGroup() string { return "t" + utilrand.String(6) + ".fixture.capstan.dev" }

// crdYAML is a CRD of kind Widget in group with versions (name, served, storage) and any schema.
func crdYAML(group, label string, versions ...[3]any) string {
	s := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%s
  labels: {cluster.x-k8s.io/provider: %s, clusterctl.cluster.x-k8s.io: ""}
spec:
  group: %s
  scope: Namespaced
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  versions:
`, group, label, group)
	for _, v := range versions {
		s += fmt.Sprintf(`  - name: %s
    served: %t
    storage: %t
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, v[0], v[1], v[2])
	}
	return s
}

package template

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/manifest"
)

func vars(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

const clusterTemplate = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
  namespace: somewhere-else
spec:
  topology:
    class: quick-start
    version: ${KUBERNETES_VERSION:=v1.31.0}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${CLUSTER_NAME}-role
`

func TestNew(t *testing.T) {
	g := NewWithT(t)
	tmpl, err := New(Input{Raw: []byte(clusterTemplate), Variables: vars(map[string]string{"CLUSTER_NAME": "demo"}), TargetNamespace: "ns"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.Variables()).To(Equal([]string{"CLUSTER_NAME", "KUBERNETES_VERSION"}))
	g.Expect(tmpl.Objects()).To(HaveLen(2))
	g.Expect(tmpl.Objects()[0].GetNamespace()).To(Equal("ns"), "namespaced objects go to the target namespace")
	g.Expect(tmpl.Objects()[1].GetNamespace()).To(BeEmpty(), "cluster-scoped objects have none")
	g.Expect(tmpl.Objects()[1].GetName()).To(Equal("demo-role"))
	out, err := tmpl.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("version: v1.31.0"))

	_, err = New(Input{Raw: []byte(clusterTemplate), Variables: vars(nil), TargetNamespace: "ns"})
	g.Expect(err).To(MatchError(ContainSubstring("value for variables [CLUSTER_NAME] is not set")))

	onlyVars, err := New(Input{Raw: []byte("not: [yaml\nname: ${X}"), ListVariablesOnly: true})
	g.Expect(err).NotTo(HaveOccurred(), "listing variables needs neither values nor valid YAML")
	g.Expect(onlyVars.Variables()).To(Equal([]string{"X"}))
	g.Expect(onlyVars.Objects()).To(BeEmpty())

	plain, err := New(Input{Raw: []byte("kind: ConfigMap\nmetadata: {name: a, namespace: keep}\n"), Variables: vars(nil)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plain.Objects()[0].GetNamespace()).To(Equal("keep"), "without a target namespace, namespaces stay")
}

func TestMerge(t *testing.T) {
	g := NewWithT(t)
	a, err := New(Input{Raw: []byte("kind: A\nx: ${ONE:=1}\ny: ${TWO}\n"), Variables: vars(map[string]string{"TWO": "2"}), TargetNamespace: "ns"})
	g.Expect(err).NotTo(HaveOccurred())
	b, err := New(Input{Raw: []byte("kind: B\nx: ${TWO:=2}\nz: ${THREE:=3}\n"), Variables: vars(nil), TargetNamespace: "ns"})
	g.Expect(err).NotTo(HaveOccurred())
	merged, err := Merge(a, b)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(merged.Objects()).To(HaveLen(2))
	g.Expect(merged.Objects()[0].GetKind()).To(Equal("A"))
	g.Expect(merged.TargetNamespace()).To(Equal("ns"))
	one, two, three := "1", "2", "3"
	g.Expect(merged.VariableMap()).To(Equal(map[string]*string{"ONE": &one, "TWO": &two, "THREE": &three}))

	other, err := New(Input{Raw: []byte("kind: C\n"), Variables: vars(nil), TargetNamespace: "other"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Merge(a, other)
	g.Expect(err).To(MatchError(`cannot merge templates for the namespaces "ns" and "other"`))
}

func TestClusterClasses(t *testing.T) {
	g := NewWithT(t)
	objs, err := manifest.Parse([]byte(`apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: a, namespace: ns}
spec: {topology: {class: quick-start}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: b, namespace: ns}
spec: {topology: {class: quick-start}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c}
spec: {topology: {class: shared, classNamespace: classes}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: d}
spec: {topology: {classRef: {name: next}}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: e}
spec: {}
---
apiVersion: example.com/v1
kind: Cluster
metadata: {name: f}
spec: {topology: {class: not-capi}}
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ClusterClasses(objs, "default")).To(Equal([]types.NamespacedName{
		{Namespace: "ns", Name: "quick-start"},
		{Namespace: "classes", Name: "shared"},
		{Namespace: "default", Name: "next"},
	}))
	g.Expect(ClusterClassFile("quick-start")).To(Equal("clusterclass-quick-start.yaml"))
	g.Expect(ClusterTemplateFile("")).To(Equal("cluster-template.yaml"))
	g.Expect(ClusterTemplateFile("ha")).To(Equal("cluster-template-ha.yaml"))
}

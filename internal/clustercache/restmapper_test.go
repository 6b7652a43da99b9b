package clustercache

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func newTestRESTMapper(t *testing.T, cfg *rest.Config) *restMapper {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newRESTMapper(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRESTMapperIsSharedByClustersWithTheSameDiscovery: two workload clusters serving the same API (here
// the same API server, reached as two users) share one mapper; it maps the built-in kinds with their scope.
func TestRESTMapperIsSharedByClustersWithTheSameDiscovery(t *testing.T) {
	g := NewWithT(t)
	cfg1, err := env.AddUser("mapper-1", "system:masters")
	g.Expect(err).NotTo(HaveOccurred())
	cfg2, err := env.AddUser("mapper-2", "system:masters")
	g.Expect(err).NotTo(HaveOccurred())
	m1, m2 := newTestRESTMapper(t, cfg1), newTestRESTMapper(t, cfg2)

	node, err := m1.RESTMapping(schema.GroupKind{Kind: "Node"}, "v1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Resource).To(Equal(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}))
	g.Expect(node.Scope.Name()).To(Equal(meta.RESTScopeNameRoot))
	pod, err := m2.RESTMapping(schema.GroupKind{Kind: "Pod"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Scope.Name()).To(Equal(meta.RESTScopeNameNamespace))
	gvk, err := m2.KindFor(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gvk.Kind).To(Equal("ClusterRoleBinding"))

	s1, err := m1.mapper()
	g.Expect(err).NotTo(HaveOccurred())
	s2, err := m2.mapper()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s1).To(BeIdenticalTo(s2), "the clusters share one mapper")
}

// TestRESTMapperFindsKindsInstalledLater: a kind the mapper does not know (a CRD installed after the
// connection was made, as a ClusterResourceSet may do) is looked up again in the cluster's discovery.
func TestRESTMapperFindsKindsInstalledLater(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m := newTestRESTMapper(t, env.Config)
	gk := schema.GroupKind{Group: "mapper.test.capstan.dev", Kind: "Widget"}
	_, err := m.RESTMapping(gk)
	g.Expect(meta.IsNoMatchError(err)).To(BeTrue(), "an unknown kind is no match: %v", err)
	before, err := m.mapper()
	g.Expect(err).NotTo(HaveOccurred())

	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.mapper.test.capstan.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gk.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, crd)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })

	g.Eventually(func(g Gomega) {
		mapping, err := m.RESTMapping(gk)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mapping.Resource).To(Equal(schema.GroupVersionResource{Group: gk.Group, Version: "v1", Resource: "widgets"}))
		g.Expect(mapping.Scope.Name()).To(Equal(meta.RESTScopeNameNamespace))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	after, err := m.mapper()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).NotTo(BeIdenticalTo(before), "the discovery changed: the cluster has another mapper")
}

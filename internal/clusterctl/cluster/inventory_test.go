package cluster

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

func TestInventory(t *testing.T) {
	g := NewWithT(t)
	c := newClient(t)
	ns := env.NewNamespace(t)

	g.Expect(c.EnsureInventoryCRD(t.Context())).To(Succeed())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "providers.clusterctl.cluster.x-k8s.io"}, crd)).To(Succeed())
	g.Expect(crd.Labels).To(HaveKeyWithValue(clusterctlv1.ClusterctlCoreLabel, clusterctlv1.ClusterctlCoreLabelInventoryValue))

	p := clusterctlv1.Provider{
		ObjectMeta:   metav1.ObjectMeta{Namespace: ns, Name: "infrastructure-widget", Labels: map[string]string{clusterctlv1.ClusterctlLabel: ""}},
		ProviderName: "widget", Type: string(clusterctlv1.InfrastructureProviderType), Version: "v0.1.0",
	}
	g.Expect(c.SaveProvider(t.Context(), p)).To(Succeed())
	g.Expect(c.SetUpgradeTo(t.Context(), p, "v0.2.0")).To(Succeed())
	got := &clusterctlv1.Provider{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: p.Name}, got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(UpgradeToAnnotation, "v0.2.0"))

	// Saving the new version clears the upgrade record in the same write.
	p.Version = "v0.2.0"
	g.Expect(c.SaveProvider(t.Context(), p)).To(Succeed())
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: p.Name}, got)).To(Succeed())
	g.Expect(got.Version).To(Equal("v0.2.0"))
	g.Expect(got.Annotations).NotTo(HaveKey(UpgradeToAnnotation))

	installed, err := c.InstalledProviders(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(installed).To(ContainElement(HaveField("ObjectMeta.Name", "infrastructure-widget")))

	g.Expect(c.DeleteProvider(t.Context(), p)).To(Succeed())
	g.Expect(c.DeleteProvider(t.Context(), p)).To(Succeed(), "deleting twice is fine")
	installed, err = c.InstalledProviders(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(installed).NotTo(ContainElement(HaveField("ObjectMeta.Namespace", ns)))
}

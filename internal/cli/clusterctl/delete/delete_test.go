package delete_test

import (
	"os"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// TestDelete installs providers, then deletes them step by step: each step starts from the state the
// previous one left.
func TestDelete(t *testing.T) {
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	kubeconfig := env.KubeconfigFile(t, "")
	run := func(t *testing.T, args ...string) clusterctltest.Result {
		t.Helper()
		return repo.Run(t, kubeconfig, args...)
	}
	inventory := func(g Gomega) []string {
		list := &clusterctlv1.ProviderList{}
		g.Expect(env.Client.List(t.Context(), list)).To(Succeed())
		var out []string
		for _, p := range list.Items {
			out = append(out, p.Name)
		}
		return out
	}
	exists := func(obj client.Object) bool {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil && obj.GetDeletionTimestamp() == nil
	}
	fixtureDeployment := &appsv1.Deployment{}
	fixtureDeployment.Namespace, fixtureDeployment.Name = "fixture-system", "fixture-controller-manager"
	fixtureCRD := &apiextensionsv1.CustomResourceDefinition{}
	fixtureCRD.Name = "fixtureclusters.infrastructure.fixture.capstan.dev"

	g := NewWithT(t)
	// Without the kubeadm bootstrap and control plane providers a first init adds (the init tests cover it).
	res := run(t, "init", "-b", "-", "-c", "-", "-i", "local", "-i", "fixture:v0.1.0")
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	ns := env.NewNamespace(t)
	objs, err := manifest.Parse([]byte(`apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: one, namespace: ` + ns + `}
spec: {}
---
apiVersion: infrastructure.fixture.capstan.dev/v1alpha1
kind: FixtureCluster
metadata: {name: one, namespace: ` + ns + `}
---
apiVersion: infrastructure.fixture.capstan.dev/v1alpha1
kind: FixtureCluster
metadata: {name: two, namespace: ` + ns + `}
`))
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(env.CreateServed(t.Context(), &objs[i])).To(Succeed())
	}

	t.Run("the CRDs of objects that exist are not deleted", func(t *testing.T) {
		tests := []struct {
			args    []string
			wantErr string
		}{
			{args: []string{"delete", "-i", "fixture", "--include-crd"},
				wantErr: "Error: cannot delete the CRDs of infrastructure-fixture: 2 FixtureClusters still exist; delete the Clusters first or run without --include-crd\n"},
			{args: []string{"delete", "--all", "--include-crd"},
				wantErr: "Error: cannot delete the CRDs of infrastructure-fixture and cluster-api: 2 FixtureClusters and 1 Cluster still exist; delete the Clusters first or run without --include-crd\n"},
		}
		for _, tt := range tests {
			g := NewWithT(t)
			res := run(t, tt.args...)
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stderr).To(Equal(tt.wantErr))
			g.Expect(inventory(g)).To(ConsistOf("cluster-api", "infrastructure-local", "infrastructure-fixture"))
			g.Expect(exists(fixtureDeployment)).To(BeTrue())
			g.Expect(exists(fixtureCRD)).To(BeTrue())
		}
	})

	t.Run("a provider's components go, its CRDs, namespace and objects stay", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "delete", "--infrastructure", "fixture")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stderr).To(Equal("Deleting Provider=\"infrastructure-fixture\" Version=\"v0.1.0\" Namespace=\"fixture-system\"\n"))
		g.Expect(inventory(g)).To(ConsistOf("cluster-api", "infrastructure-local"))
		g.Expect(exists(fixtureDeployment)).To(BeFalse())
		g.Expect(exists(&rbacv1.ClusterRole{ObjectMeta: metaName("fixture-manager-role")})).To(BeFalse())
		g.Expect(exists(&corev1.ConfigMap{ObjectMeta: metaName("fixture-settings", "fixture-system")})).To(BeFalse())
		g.Expect(exists(fixtureCRD)).To(BeTrue())
		g.Expect(exists(&corev1.Namespace{ObjectMeta: metaName("fixture-system")})).To(BeTrue())
		fc := &unstructured.Unstructured{}
		fc.SetAPIVersion("infrastructure.fixture.capstan.dev/v1alpha1")
		fc.SetKind("FixtureCluster")
		fc.SetNamespace(ns)
		fc.SetName("one")
		g.Expect(exists(fc)).To(BeTrue())

		res = run(t, "delete", "--infrastructure", "fixture")
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal("Error: infrastructure-fixture is not installed in the management cluster; installed are: cluster-api v0.2.0, infrastructure-local v0.2.0\n"))
	})

	t.Run("reset the management cluster once the clusters are gone", func(t *testing.T) {
		g := NewWithT(t)
		for i := range objs {
			g.Expect(env.Client.Delete(t.Context(), &objs[i])).To(Succeed())
		}
		res := run(t, "delete", "--all", "--include-crd", "--include-namespace")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stderr).To(Equal("Deleting Provider=\"infrastructure-local\" Version=\"v0.2.0\" Namespace=\"capl-system\"\n" +
			"Deleting Provider=\"cluster-api\" Version=\"v0.2.0\" Namespace=\"capi-system\"\n"))
		g.Expect(inventory(g)).To(BeEmpty())
		for _, crd := range []string{"clusters.cluster.x-k8s.io", "localclusters.infrastructure.cluster.x-k8s.io"} {
			g.Eventually(func() bool { return exists(&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metaName(crd)}) }).Should(BeFalse(), crd)
		}
		for _, namespace := range []string{"capi-system", "capl-system"} {
			g.Expect(exists(&corev1.Namespace{ObjectMeta: metaName(namespace)})).To(BeFalse(), "namespace %s is being deleted", namespace)
		}
	})
}

package initialize_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// TestInit runs init against an empty cluster, then again and again: each step starts from the state
// the previous one left.
func TestInit(t *testing.T) {
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
			out = append(out, p.Namespace+"/"+p.Name+" "+p.Version)
		}
		return out
	}

	t.Run("an empty cluster gets the core and kubeadm bootstrap and control plane providers and the provider asked for", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "init", "--infrastructure", "local")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(BeEmpty())
		golden.Assert(t, "init-first-run.golden.txt", []byte(res.Stderr))

		g.Expect(inventory(g)).To(ConsistOf("capi-system/cluster-api v0.2.0", "capi-kubeadm-bootstrap-system/bootstrap-kubeadm v0.2.0",
			"capi-kubeadm-control-plane-system/control-plane-kubeadm v0.2.0", "capl-system/infrastructure-local v0.2.0"))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "clusters.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "cluster-api"))
		g.Expect(crd.Labels).To(HaveKey("clusterctl.cluster.x-k8s.io"))
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "localclusters.infrastructure.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "kubeadmconfigs.bootstrap.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "bootstrap-kubeadm"))
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "control-plane-kubeadm"))
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "providers.clusterctl.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io/core", "inventory"))
		d := &appsv1.Deployment{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "capl-system", Name: "capl-controller-manager"}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("ghcr.io/capstan-dev/capstan:v0.2.0"))
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "certificates.cert-manager.io"}, crd)).NotTo(Succeed(), "no provider needs cert-manager")
	})

	t.Run("the same init again changes nothing", func(t *testing.T) {
		g := NewWithT(t)
		before := resourceVersions(t, g)
		res := run(t, "init", "--infrastructure", "local")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		golden.Assert(t, "init-again.golden.txt", []byte(res.Stderr))
		g.Expect(resourceVersions(t, g)).To(Equal(before))
	})

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{
			name:    "a provider that follows another contract",
			args:    []string{"init", "-i", "fixture:v0.3.0"},
			wantErr: "Error: infrastructure-fixture v0.3.0 follows the v1beta3 contract, but the installed core provider cluster-api v0.2.0 follows v1beta1 and works with providers of the v1beta1 and v1beta2 contracts: choose a version of infrastructure-fixture for one of them (see its metadata.yaml)\n",
		},
		{
			name:    "another version of an installed provider",
			args:    []string{"init", "-i", "local:v0.1.0"},
			wantErr: "Error: infrastructure-local v0.2.0 is already installed in namespace capl-system; init does not change installed providers: run 'clusterctl upgrade apply --infrastructure local:v0.1.0' to move to v0.1.0\n",
		},
		{
			name:    "an installed provider in another namespace",
			args:    []string{"init", "-i", "local", "-n", "elsewhere"},
			wantErr: "Error: infrastructure-local is already installed in namespace capl-system, and clusterctl supports one instance of a provider: delete it first to install it in elsewhere\n",
		},
		{
			name:    "a CRD not named plural.group",
			args:    []string{"init", "-i", "badcrd", "-i", "fixture:v0.1.0"},
			wantErr: "Error: the components of infrastructure-badcrd have CRDs not named <plural>.<group>: badcrdclusters.fixture.capstan.dev (want badcrdclusters.infrastructure.badcrd.capstan.dev); ask the provider's maintainers to fix them (or to annotate them with clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check)\n",
		},
		{
			name:    "a provider given twice",
			args:    []string{"init", "-i", "fixture", "-i", "fixture:v0.1.0"},
			wantErr: "Error: infrastructure-fixture is given more than once: name each provider once\n",
		},
	}
	for _, tt := range tests {
		t.Run("fails before any change: "+tt.name, func(t *testing.T) {
			g := NewWithT(t)
			before := resourceVersions(t, g)
			inventoryBefore := inventory(g)
			res := run(t, tt.args...)
			g.Expect(res.Code).To(Equal(1))
			g.Expect(res.Stderr).To(Equal("Fetching providers\n" + tt.wantErr))
			g.Expect(resourceVersions(t, g)).To(Equal(before))
			g.Expect(inventory(g)).To(Equal(inventoryBefore))
			for _, ns := range []string{"fixture-system", "badcrd-system", "elsewhere"} {
				g.Expect(apierrors.IsNotFound(env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, &corev1.Namespace{}))).To(BeTrue(), "namespace %s", ns)
			}
		})
	}

	t.Run("list-images leaves out what is installed", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "init", "list-images", "-i", "local", "-i", "fixture:v0.1.0")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(Equal("ghcr.io/capstan-dev/fixture:v0.1.0\n"))
		res = run(t, "init", "list-images", "-i", "webhooks")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(Equal("quay.io/jetstack/cert-manager-cainjector:v1.21.1\nquay.io/jetstack/cert-manager-controller:v1.21.1\nquay.io/jetstack/cert-manager-webhook:v1.21.1\nghcr.io/capstan-dev/webhooks:v0.1.0\n"))
	})

	// The webhooks provider follows the v1beta2 contract (its metadata.yaml), which capstan's v1beta1 core,
	// serving v1beta2, works with.
	t.Run("cert-manager is installed when a provider needs it", func(t *testing.T) {
		g := NewWithT(t)
		clusterctltest.MarkDeploymentsAvailable(t, env.Client, "cert-manager", "webhooks-system")
		res := run(t, "init", "-i", "webhooks", "--wait-providers")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		golden.Assert(t, "init-cert-manager.golden.txt", []byte(res.Stderr))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "certificates.cert-manager.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io/core", "cert-manager"))
		g.Expect(crd.Annotations).To(HaveKeyWithValue("cert-manager.clusterctl.cluster.x-k8s.io/version", "v1.21.1"))
		issuer := &unstructured.Unstructured{}
		issuer.SetAPIVersion("cert-manager.io/v1")
		issuer.SetKind("Issuer")
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "webhooks-system", Name: "webhooks-selfsigned-issuer"}, issuer)).To(Succeed())
		g.Expect(inventory(g)).To(ContainElement("webhooks-system/infrastructure-webhooks v0.1.0"))

		res = run(t, "init", "list-images", "-i", "webhooks")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stdout).To(BeEmpty())
	})

	t.Run("a target namespace, and providers that do not become available", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "init", "-i", "fixture:v0.1.0", "-n", "custom-fixture", "--wait-providers", "--wait-provider-timeout", "1")
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(HaveSuffix("Error: provider infrastructure-fixture is not available after 1s: Deployment custom-fixture/fixture-controller-manager (no status yet): look at their Pods with kubectl describe (--wait-provider-timeout sets how long to wait)\n"))
		g.Expect(inventory(g)).To(ContainElement("custom-fixture/infrastructure-fixture v0.1.0"), "installed, though not available")
		binding := &rbacv1.ClusterRoleBinding{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "fixture-manager-rolebinding"}, binding)).To(Succeed())
		g.Expect(binding.Subjects[0].Namespace).To(Equal("custom-fixture"))
	})
}

// resourceVersions returns the resource version of every object clusterctl installed, by kind and name.
func resourceVersions(t *testing.T, g Gomega) map[string]string {
	t.Helper()
	out := map[string]string{}
	sel := client.HasLabels{"clusterctl.cluster.x-k8s.io"}
	for _, list := range []client.ObjectList{
		&apiextensionsv1.CustomResourceDefinitionList{}, &appsv1.DeploymentList{}, &corev1.NamespaceList{},
		&corev1.ServiceAccountList{}, &rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &clusterctlv1.ProviderList{},
	} {
		g.Expect(env.Client.List(t.Context(), list, sel)).To(Succeed())
		items, err := meta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range items {
			obj := o.(client.Object)
			out[fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName())] = obj.GetResourceVersion()
		}
	}
	return out
}

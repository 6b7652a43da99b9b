package upgrade_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// TestUpgrade installs the first releases, then plans and applies upgrades step by step: each step
// starts from the state the previous one left.
func TestUpgrade(t *testing.T) {
	// The first releases are installed with the default cert-manager; the upgrade configures a newer one.
	before := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{CertManagerVersion: "v1.22.0"})
	kubeconfig := env.KubeconfigFile(t, "")
	runWith := func(t *testing.T, r clusterctltest.ManagementRepository, args ...string) clusterctltest.Result {
		t.Helper()
		return r.Run(t, kubeconfig, args...)
	}
	run := func(t *testing.T, args ...string) clusterctltest.Result { t.Helper(); return runWith(t, repo, args...) }
	inventory := func(g Gomega) map[string]string {
		list := &clusterctlv1.ProviderList{}
		g.Expect(env.Client.List(t.Context(), list)).To(Succeed())
		out := map[string]string{}
		for _, p := range list.Items {
			out[p.Name] = p.Version
			if to := p.Annotations[cluster.UpgradeToAnnotation]; to != "" {
				out[p.Name] += " upgrading to " + to
			}
		}
		return out
	}
	clusterctltest.MarkDeploymentsAvailable(t, env.Client, "cert-manager")

	g := NewWithT(t)
	// Without the kubeadm bootstrap and control plane providers a first init adds (the init tests cover it).
	res := runWith(t, before, "init", "-b", "-", "-c", "-", "--core", "cluster-api:v0.1.0", "-i", "local:v0.1.0", "-i", "fixture:v0.1.0", "-i", "webhooks")
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
spec: {size: 1}
---
apiVersion: infrastructure.fixture.capstan.dev/v1alpha1
kind: FixtureCluster
metadata: {name: two, namespace: ` + ns + `}
spec: {size: 2}
`))
	g.Expect(err).NotTo(HaveOccurred())
	uids := map[string]types.UID{}
	for i := range objs {
		g.Expect(env.CreateServed(t.Context(), &objs[i])).To(Succeed())
		uids[objs[i].GetKind()+"/"+objs[i].GetName()] = objs[i].GetUID()
	}

	t.Run("plan", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "upgrade", "plan")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stderr).To(Equal("Checking cert-manager version...\nChecking new release availability...\n"))
		golden.Assert(t, "plan.golden.txt", []byte(res.Stdout))
	})

	t.Run("fails before any change", func(t *testing.T) {
		tests := []struct {
			args    []string
			wantErr string
		}{
			{args: []string{"upgrade", "apply", "--contract", "v1beta2"},
				wantErr: "Error: this clusterctl upgrades management clusters to the v1beta1 contract only, not v1beta2: use a clusterctl for v1beta2\n"},
			{args: []string{"upgrade", "apply", "--contract", "v1beta1", "-i", "local:v0.2.0"},
				wantErr: "Error: the --contract flag can't be used in combination with --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension, --addon\n"},
			{args: []string{"upgrade", "apply"},
				wantErr: "Error: either the --contract flag or at least one of the following flags has to be set: --core, --bootstrap, --control-plane, --infrastructure, --ipam, --runtime-extension, --addon\n"},
			{args: []string{"upgrade", "apply", "-i", "fixture:v0.3.0"},
				wantErr: "Error: infrastructure-fixture v0.3.0 follows the v1beta3 contract, but the management cluster's core provider follows v1beta1 and works with providers of the v1beta1 and v1beta2 contracts: choose a release of infrastructure-fixture for one of them (see 'clusterctl upgrade plan')\n"},
			{args: []string{"upgrade", "apply", "-i", "local"},
				wantErr: "Error: no version in --infrastructure \"local\": use name:version, for example --infrastructure local:v1.2.3\n"},
			{args: []string{"upgrade", "apply", "-i", "badcrd:v0.1.0"},
				wantErr: "Error: infrastructure-badcrd is not installed in the management cluster: install it with 'clusterctl init --infrastructure badcrd:v0.1.0'\n"},
			{args: []string{"upgrade", "apply", "--core", "cluster-api:v0.9.0"},
				wantErr: "Error: version v0.9.0 of cluster-api not found"},
		}
		for _, tt := range tests {
			g := NewWithT(t)
			res := run(t, tt.args...)
			g.Expect(res.Code).To(Equal(1), strings.Join(tt.args, " "))
			g.Expect(res.Stderr).To(ContainSubstring(tt.wantErr), strings.Join(tt.args, " "))
			g.Expect(inventory(g)).To(Equal(map[string]string{"cluster-api": "v0.1.0", "infrastructure-local": "v0.1.0", "infrastructure-fixture": "v0.1.0", "infrastructure-webhooks": "v0.1.0"}))
		}
	})

	components := filepath.Join(repo.Path, "infrastructure-fixture", "v0.2.0", "infrastructure-components.yaml")
	good, err := os.ReadFile(components)
	g.Expect(err).NotTo(HaveOccurred())

	t.Run("an upgrade that fails part way says where it stopped", func(t *testing.T) {
		g := NewWithT(t)
		broken := append(append([]byte{}, good...), []byte("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Valid_Name, namespace: fixture-system}\n")...)
		g.Expect(os.WriteFile(components, broken, 0o600)).To(Succeed())
		res := run(t, "upgrade", "apply", "--contract", "v1beta1")
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(ContainSubstring("Error: upgrading infrastructure-fixture (v0.1.0 to v0.2.0): installing infrastructure-fixture v0.2.0: applying ConfigMap fixture-system/Not_A_Valid_Name: "))
		g.Expect(res.Stderr).To(HaveSuffix("; upgraded: cluster-api v0.2.0; stopped part way: infrastructure-fixture (v0.1.0 to v0.2.0), whose controllers are scaled down; not started: infrastructure-local (v0.1.0 to v0.2.0); run the same command again to finish the upgrade\n"))
		g.Expect(inventory(g)).To(Equal(map[string]string{
			"cluster-api": "v0.2.0", "infrastructure-fixture": "v0.1.0 upgrading to v0.2.0", "infrastructure-local": "v0.1.0", "infrastructure-webhooks": "v0.1.0",
		}))
		local := &appsv1.Deployment{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "capl-system", Name: "capl-controller-manager"}, local)).To(Succeed())
		g.Expect(*local.Spec.Replicas).To(Equal(int32(1)), "the provider not reached runs again")
		g.Expect(local.Annotations).NotTo(HaveKey(cluster.ReplicasBeforeUpgradeAnnotation))
	})

	t.Run("running the same command again finishes the upgrade", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(os.WriteFile(components, good, 0o600)).To(Succeed())
		res := run(t, "upgrade", "apply", "--contract", "v1beta1")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		golden.Assert(t, "apply-again.golden.txt", []byte(res.Stderr))
		g.Expect(inventory(g)).To(Equal(map[string]string{
			"cluster-api": "v0.2.0", "infrastructure-fixture": "v0.2.0", "infrastructure-local": "v0.2.0", "infrastructure-webhooks": "v0.1.0",
		}))
		assertUpgraded(t, g, ns, uids)
	})

	t.Run("plan once up to date", func(t *testing.T) {
		g := NewWithT(t)
		res := run(t, "upgrade", "plan")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		golden.Assert(t, "plan-up-to-date.golden.txt", []byte(res.Stdout))
		res = run(t, "upgrade", "apply", "--contract", "v1beta1")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(res.Stderr).To(HaveSuffix("Every provider is at the release asked for: nothing to upgrade\n"))
		res = run(t, "upgrade", "apply", "-i", "local:v0.1.0")
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(Equal("Error: infrastructure-local is installed at v0.2.0, newer than v0.1.0: clusterctl does not downgrade providers\n"))
	})

	// An upgrade killed after deleting a provider's old components leaves the provider marked in the
	// inventory and without controllers; running the upgrade again installs it.
	for _, args := range [][]string{{"--contract", "v1beta1"}, {"-i", "fixture:v0.2.0"}} {
		t.Run("an upgrade killed part way, then "+strings.Join(args, " "), func(t *testing.T) {
			g := NewWithT(t)
			p := &clusterctlv1.Provider{}
			g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "fixture-system", Name: "infrastructure-fixture"}, p)).To(Succeed())
			p.Annotations = map[string]string{cluster.UpgradeToAnnotation: "v0.2.0"}
			g.Expect(env.Client.Update(t.Context(), p)).To(Succeed())
			d := &appsv1.Deployment{}
			d.Namespace, d.Name = "fixture-system", "fixture-controller-manager"
			g.Expect(env.Client.Delete(t.Context(), d)).To(Succeed())

			res := run(t, append([]string{"upgrade", "apply"}, args...)...)
			g.Expect(res.Code).To(Equal(0), res.Stderr)
			g.Expect(res.Stderr).To(ContainSubstring("Installing Provider=\"infrastructure-fixture\" Version=\"v0.2.0\" TargetNamespace=\"fixture-system\"\n"))
			g.Expect(inventory(g)).To(HaveKeyWithValue("infrastructure-fixture", "v0.2.0"))
			g.Expect(env.Client.Get(t.Context(), client.ObjectKeyFromObject(d), d)).To(Succeed())
			assertUpgraded(t, g, ns, uids)
		})
	}
}

// assertUpgraded checks the state every successful upgrade leaves.
func assertUpgraded(t *testing.T, g Gomega, ns string, uids map[string]types.UID) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: "fixtureclusters.infrastructure.fixture.capstan.dev"}, crd)).To(Succeed())
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1alpha2"}), "the stored objects are migrated")
	for key, uid := range uids {
		kind, name, _ := strings.Cut(key, "/")
		obj := &unstructured.Unstructured{}
		if kind == "Cluster" {
			obj.SetAPIVersion("cluster.x-k8s.io/v1beta1")
		} else {
			obj.SetAPIVersion("infrastructure.fixture.capstan.dev/v1alpha2")
		}
		obj.SetKind(kind)
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed(), key)
		g.Expect(obj.GetUID()).To(Equal(uid), "%s is the same object", key)
	}
	g.Expect(apierrors.IsNotFound(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "fixture-system", Name: "fixture-settings"}, &corev1.ConfigMap{}))).To(BeTrue(), "components of the old release are gone")
	g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: "fixture-system", Name: "fixture-config"}, &corev1.ConfigMap{})).To(Succeed())
	for key, image := range map[string]string{
		"fixture-system/fixture-controller-manager": "ghcr.io/capstan-dev/fixture:v0.2.0",
		"capl-system/capl-controller-manager":       "ghcr.io/capstan-dev/capstan:v0.2.0",
		"capi-system/capi-controller-manager":       "ghcr.io/capstan-dev/capstan:v0.2.0",
		"cert-manager/cert-manager":                 "quay.io/jetstack/cert-manager-controller:v1.22.0",
	} {
		namespace, name, _ := strings.Cut(key, "/")
		d := &appsv1.Deployment{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, d)).To(Succeed(), key)
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image), key)
		g.Expect(*d.Spec.Replicas).To(Equal(int32(1)), key)
	}
	list := &clusterctlv1.ProviderList{}
	g.Expect(env.Client.List(t.Context(), list)).To(Succeed())
	for _, p := range list.Items {
		g.Expect(p.Annotations).NotTo(HaveKey(cluster.UpgradeToAnnotation), p.Name)
	}
}

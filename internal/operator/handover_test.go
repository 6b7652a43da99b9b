package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	clioperator "github.com/capstan-dev/capstan/internal/cli/capstan/operator"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
	"github.com/capstan-dev/capstan/internal/release"
)

// TestClusterctlHandsProvidersToTheOperator: providers that `clusterctl init` installed are taken over by
// `clusterctl init --operator`, which installs the operator first (from the core's release) and creates
// their provider objects, with a Secret of the variables clusterctl's configuration gives them and
// ConfigMaps of their releases (they come from a repository on this machine): the operator applies what
// clusterctl applied, so their Deployments are not rolled out again. `clusterctl upgrade plan` then reads
// the operator's objects: the versions of their sources, not of clusterctl's configuration.
func TestClusterctlHandsProvidersToTheOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	releases := operatortest.Releases(t, "")
	dir := t.TempDir()
	operatortest.WriteRepository(t, dir, releases["cluster-api"][operatortest.V1], releases["infrastructure-local"][operatortest.V1], releases["infrastructure-local"][operatortest.V2])
	operatorComponents, err := release.OperatorComponents(operatortest.V1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "cluster-api", operatortest.V1, release.OperatorComponentsFile), operatorComponents, 0o644)).To(Succeed())
	cfgFile := "providers:\n" +
		"- {name: cluster-api, type: CoreProvider, url: " + filepath.Join(dir, "cluster-api", "latest", "core-components.yaml") + "}\n" +
		"- {name: local, type: InfrastructureProvider, url: " + filepath.Join(dir, "infrastructure-local", "latest", "infrastructure-components.yaml") + "}\n"
	variables := map[string]string{"HOME": t.TempDir(), "CAPL_LOG_LEVEL": "3"}
	cfg, err := config.New([]byte(cfgFile), func(k string) (string, bool) { v, ok := variables[k]; return v, ok })
	g.Expect(err).NotTo(HaveOccurred())
	clusterctl := clusterctlclient.New(clusterctlclient.Options{Config: cfg, Cluster: cluster.NewForConfig(env.Config)})
	ns := env.NewNamespace(t)
	clusterctltest.MarkDeploymentsAvailable(t, env.Client)
	providers := clusterctlclient.Providers{CoreProvider: "cluster-api:" + operatortest.V1, InfrastructureProviders: []string{"local:" + operatortest.V1},
		BootstrapProviders: []string{clusterctlclient.NoProvider}, ControlPlaneProviders: []string{clusterctlclient.NoProvider}}

	// clusterctl installs the core and the local provider.
	_, err = clusterctl.Init(ctx, clusterctlclient.InitOptions{Providers: providers, TargetNamespace: ns})
	g.Expect(err).NotTo(HaveOccurred())
	before := map[string]*appsv1.Deployment{}
	for _, name := range []string{"capi-controller-manager", "capl-controller-manager"} {
		g.Eventually(func(g Gomega) {
			d := deployment(g, ns, name)
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			before[name] = d
		}, timeout, poll).Should(Succeed())
	}
	g.Expect(before["capl-controller-manager"].Spec.Template.Spec.Containers[0].Args).To(ContainElement("--v=3"))

	// The operator runs (in this process); init --operator hands the providers to it.
	operatortest.Start(t, env.Config, operator.Options{CheckManagerArgs: clioperator.CheckManagerArgs})
	result, err := clusterctl.Init(ctx, clusterctlclient.InitOptions{Providers: providers, TargetNamespace: ns, Operator: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.Installed).To(HaveLen(2))
	// The operator's manifests came from the core's release; no webhook server of theirs runs in this test.
	g.Expect(deployment(g, "capi-operator-system", "capi-operator-controller-manager").Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "capi-operator"))
	g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "capi-operator-validating-webhook-configuration"}}))).To(Succeed())
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-operator-system", Name: "capi-operator-controller-manager"}})
	})

	core := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-api"}}
	local := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}}
	t.Cleanup(func() { deleteAndWait(t, local, core) })
	waitInstalled(t, core, operatortest.V1, "v1beta1")
	waitInstalled(t, local, operatortest.V1, "v1beta1")
	for _, p := range []operatorv1.GenericProvider{core, local} {
		c := condition(g, p, operatorv1.ProviderUpgradedCondition)
		g.Expect(c.Reason).To(Equal(operatorv1.TakenOverReason))
		g.Expect(c.Message).To(Equal("Took " + operatorv1.ManifestLabel(p) + " v0.1.0 over from clusterctl's installation"))
	}
	g.Expect(local.Spec.ConfigSecret).To(Equal(&operatorv1.SecretReference{Name: "infrastructure-local-variables"}))
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "infrastructure-local-variables"}, secret)).To(Succeed())
	g.Expect(secret.Data).To(HaveKeyWithValue("CAPL_LOG_LEVEL", []byte("3")), "the variables clusterctl's configuration gives")
	g.Expect(local.Spec.FetchConfig).To(Equal(&operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{
		MatchLabels: map[string]string{clusterctlclient.ReleaseLabel: "infrastructure-local"}}}), "a local repository is carried into ConfigMaps")

	// No downtime: the same objects, not rolled out again.
	for name, d := range before {
		after := deployment(g, ns, name)
		g.Expect(after.UID).To(Equal(d.UID), name)
		g.Expect(after.Generation).To(Equal(d.Generation), "%s is not rolled out again", name)
	}
	g.Expect(inventory(g)).To(ConsistOf(ns+"/cluster-api v0.1.0", ns+"/infrastructure-local v0.1.0"))

	// upgrade plan reads the local provider's releases where the operator does: its ConfigMaps hold v0.1.0
	// only, although clusterctl's repository has v0.2.0.
	plans, err := clusterctl.PlanUpgrade(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).To(HaveLen(1))
	g.Expect(plans[0].Providers).To(ContainElement(And(
		HaveField("Name", "infrastructure-local"), HaveField("NextVersion", ""), HaveField("Operator", "InfrastructureProvider "+ns+"/local"))))
	v2 := operatortest.ConfigMap(t, ns, map[string]string{clusterctlclient.ReleaseLabel: "infrastructure-local",
		operatorv1.ConfigMapVersionLabelName: operatortest.V2}, releases["infrastructure-local"][operatortest.V2], true)
	v2.Name = "infrastructure-local-v0.2.0"
	create(t, v2)
	plans, err = clusterctl.PlanUpgrade(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans[0].Providers).To(ContainElement(And(HaveField("Name", "infrastructure-local"), HaveField("NextVersion", operatortest.V2))))

	// upgrade apply leaves operator-managed providers to the operator, which would put them back.
	err = clusterctl.ApplyUpgrade(ctx, clusterctlclient.ApplyUpgradeOptions{Providers: clusterctlclient.Providers{InfrastructureProviders: []string{"local:" + operatortest.V2}}})
	g.Expect(err).To(MatchError(ContainSubstring("the provider operator manages providers this upgrade would change, and would put them back: upgrade them by setting spec.version of their objects (kubectl edit), the operator does the rest: InfrastructureProvider " + ns + "/local: spec.version: v0.2.0")))
	g.Expect(deployment(g, ns, "capl-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + operatortest.V1))
}

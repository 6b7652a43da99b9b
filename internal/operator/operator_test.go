package operator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	clioperator "github.com/capstan-dev/capstan/internal/cli/capstan/operator"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{operatorv1.AddToScheme, managementv1.AddToScheme, infrav1.AddToScheme}},
		func(e *envtest.Environment) { env = e }))
}

const (
	timeout = 90 * time.Second
	poll    = 100 * time.Millisecond
)

// countingServer serves a folder over http on loopback and counts the requests.
type countingServer struct {
	URL string
	mu  sync.Mutex
	n   int
}

func (s *countingServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func serve(t *testing.T, dir string) *countingServer {
	cs := &countingServer{}
	fs := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.n++
		cs.mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cs.URL = srv.URL
	return cs
}

func namespace(t *testing.T, name string) {
	t.Helper()
	err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func get(g Gomega, p operatorv1.GenericProvider) operatorv1.GenericProvider {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: p.GetNamespace(), Name: p.GetName()}, p)).To(Succeed())
	return p
}

func condition(g Gomega, p operatorv1.GenericProvider, t string) metav1.Condition {
	get(g, p)
	c := meta.FindStatusCondition(p.GetProviderStatus().Conditions, t)
	g.Expect(c).NotTo(BeNil(), "%s has no %s condition yet: %v", p.GetName(), t, p.GetProviderStatus().Conditions)
	return *c
}

// waitInstalled waits until p is installed at version, Ready, and recorded in clusterctl's inventory.
func waitInstalled(t *testing.T, p operatorv1.GenericProvider, version, contract string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		get(g, p)
		st := p.GetProviderStatus()
		g.Expect(st.InstalledVersion).To(HaveValue(Equal(version)), "conditions: %v", st.Conditions)
		g.Expect(st.Contract).To(HaveValue(Equal(contract)))
		g.Expect(condition(g, p, operatorv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue), "conditions: %v", st.Conditions)
		g.Expect(inventory(g)).To(ContainElement(p.GetNamespace() + "/" + operatorv1.ManifestLabel(p) + " " + version))
	}, timeout, poll).Should(Succeed())
}

// waitVersion waits until p is installed at version (paused: not Ready) and recorded in clusterctl's
// inventory.
func waitVersion(t *testing.T, p operatorv1.GenericProvider, version, contract string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		get(g, p)
		st := p.GetProviderStatus()
		g.Expect(st.InstalledVersion).To(HaveValue(Equal(version)), "conditions: %v", st.Conditions)
		g.Expect(st.Contract).To(HaveValue(Equal(contract)))
		g.Expect(inventory(g)).To(ContainElement(p.GetNamespace() + "/" + operatorv1.ManifestLabel(p) + " " + version))
	}, timeout, poll).Should(Succeed())
}

// inventory returns clusterctl's inventory as "namespace/name version".
func inventory(g Gomega) []string {
	list := &clusterctlv1.ProviderList{}
	err := env.Client.List(context.Background(), list)
	if meta.IsNoMatchError(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Namespace+"/"+p.Name+" "+p.Version)
	}
	return out
}

func deployment(g Gomega, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

func update(t *testing.T, p operatorv1.GenericProvider, change func(*operatorv1.ProviderSpec)) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		change(p.GetProviderSpec())
		return env.Client.Update(context.Background(), p)
	}, timeout, poll).Should(Succeed())
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// TestOperator drives the operator through a management cluster's life, air-gapped: the core, the kubeadm
// bootstrap provider and the local infrastructure provider from ConfigMaps, bad input, an upgrade and a
// refused downgrade, changes of fetchConfig (an http server in clusterctl's repository layout and an OCI
// registry, both on loopback), a tampered cache, changes of the configSecret and the additional manifests
// applied as upgrades, a contract upgrade with pause, and deletions blocked while in use.
func TestOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	operatortest.Start(t, env.Config, operator.Options{CheckManagerArgs: clioperator.CheckManagerArgs})
	clusterctltest.MarkDeploymentsAvailable(t, env.Client)
	releases := operatortest.Releases(t, "")
	core := releases["cluster-api"]
	local := releases["infrastructure-local"]
	kubeadm := releases["bootstrap-kubeadm"]
	coreV3 := operatortest.ReleaseAt(t, "cluster-api", "v0.3.0", "v1beta2")
	localV3 := operatortest.ReleaseAt(t, "infrastructure-local", "v0.3.0", "v1beta2")
	kubeadmV3 := operatortest.ReleaseAt(t, "bootstrap-kubeadm", "v0.3.0", "v1beta2")

	const bootstrapNS = "capi-kubeadm-bootstrap-system"
	namespace(t, "capi-system")
	namespace(t, "capl-system")
	namespace(t, bootstrapNS)
	coreLabels := map[string]string{"provider-components": "core"}
	localLabels := map[string]string{"provider-components": "local"}
	kubeadmLabels := map[string]string{"provider-components": "kubeadm"}
	create(t,
		operatortest.ConfigMap(t, "capi-system", coreLabels, core[operatortest.V1], true),
		operatortest.ConfigMap(t, "capi-system", coreLabels, coreV3, false),
		operatortest.ConfigMap(t, "capl-system", localLabels, local[operatortest.V1], false),
		operatortest.ConfigMap(t, "capl-system", localLabels, local[operatortest.V2], true),
		operatortest.ConfigMap(t, "capl-system", localLabels, localV3, false),
		operatortest.ConfigMap(t, bootstrapNS, kubeadmLabels, kubeadm[operatortest.V1], false),
		operatortest.ConfigMap(t, bootstrapNS, kubeadmLabels, kubeadmV3, false),
	)

	coreProvider := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-system", Name: "cluster-api"}}
	coreProvider.Spec.Version = operatortest.V1
	coreProvider.Spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: coreLabels}}
	localProvider := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local"}}
	localProvider.Spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: localLabels}}
	localProvider.Spec.Version = operatortest.V1
	localProvider.Spec.Manager = &operatorv1.ManagerSpec{FeatureGates: map[string]bool{"MachinePool": true}, Verbosity: 1}
	kubeadmProvider := &operatorv1.BootstrapProvider{ObjectMeta: metav1.ObjectMeta{Namespace: bootstrapNS, Name: "kubeadm"}}
	kubeadmProvider.Spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: kubeadmLabels}}
	kubeadmProvider.Spec.Version = operatortest.V1

	t.Run("air-gapped install of the core and the other providers from ConfigMaps", func(t *testing.T) {
		g := NewWithT(t)
		// The local provider waits for the core.
		create(t, localProvider)
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.PreflightCheckCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.WaitingForCoreProviderReadyReason))
			g.Expect(c.Message).To(Equal("Waiting for the core provider: create a CoreProvider named cluster-api"))
		}, timeout, poll).Should(Succeed())

		create(t, coreProvider, kubeadmProvider)
		waitInstalled(t, coreProvider, operatortest.V1, "v1beta1")
		waitInstalled(t, localProvider, operatortest.V1, "v1beta1")
		waitInstalled(t, kubeadmProvider, operatortest.V1, "v1beta1")
		d := deployment(g, "capl-system", "capl-controller-manager")
		g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--feature-gates=MachinePool=true"))
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("ghcr.io/capstan-dev/capstan:" + operatortest.V1))
		g.Expect(deployment(g, "capi-system", "capi-controller-manager").Labels).To(HaveKeyWithValue(clusterv1.ProviderNameLabel, "cluster-api"))
		// Nothing was cached: ConfigMaps are not a remote source.
		for _, ns := range []string{"capi-system", "capl-system", bootstrapNS} {
			cms := &corev1.ConfigMapList{}
			g.Expect(env.Client.List(ctx, cms, client.InNamespace(ns), client.MatchingLabels{operatorv1.ManagedByLabel: "true"})).To(Succeed())
			g.Expect(cms.Items).To(BeEmpty())
		}
	})

	// A workload cluster of the local provider: its objects must survive every upgrade, and block deletions.
	wns := env.NewNamespace(t)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: wns, Name: "w1"}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: &corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster", Name: "w1", Namespace: wns},
	}}
	localCluster := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: wns, Name: "w1"}}
	// The installed core registers its admission webhooks, Cluster's among them (validating and defaulting),
	// but no manager runs in this test to serve them: take the core's webhook configurations away while the
	// Cluster is created (the operator may apply them again meanwhile, hence the retry).
	g.Eventually(func(g Gomega) {
		webhooks := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "capi-validating-webhook-configuration"}}
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, webhooks))).To(Succeed())
		defaulting := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "capi-mutating-webhook-configuration"}}
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, defaulting))).To(Succeed())
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, cluster))).To(Succeed())
	}, time.Minute, time.Second).Should(Succeed())
	create(t, localCluster)
	uids := func(g Gomega) []string {
		c, lc := &clusterv1.Cluster{}, &infrav1.LocalCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(localCluster), lc)).To(Succeed())
		return []string{string(c.UID), string(lc.UID)}
	}
	before := uids(g)

	t.Run("bad input is a condition that says what to do, and installs nothing", func(t *testing.T) {
		ns := env.NewNamespace(t)
		noMeta := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nometa", Labels: map[string]string{"p": "nometa", operatorv1.ConfigMapVersionLabelName: "v0.1.0"}},
			Data: map[string]string{"components": string(local[operatortest.V1].Components())}}
		create(t, noMeta, operatortest.ConfigMap(t, ns, map[string]string{"p": "missing"}, local[operatortest.V1], false),
			operatortest.ConfigMap(t, ns, map[string]string{"p": "newcontract"}, localV3, false))
		tests := []struct {
			name, condition, reason, message string
			fetch                            *operatorv1.FetchConfiguration
			version                          string
			manager                          *operatorv1.ManagerSpec
		}{
			{name: "nosuch", condition: operatorv1.PreflightCheckCondition, reason: operatorv1.UnknownProviderReason,
				message: `"nosuch" is not one of clusterctl's built-in InfrastructureProviders: set spec.fetchConfig (url, selector or oci) to say where its releases are, or use the name of a built-in provider`},
			{name: "unreachable", version: "v0.1.0", fetch: &operatorv1.FetchConfiguration{URL: "http://127.0.0.1:1/releases"},
				condition: operatorv1.ProviderInstalledCondition, reason: operatorv1.ComponentsFetchErrorReason,
				message: "Fetching version v0.1.0 of infrastructure-unreachable from http://127.0.0.1:1/releases/infrastructure-unreachable/latest/infrastructure-components.yaml: "},
			{name: "nometa", version: "v0.1.0", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "nometa"}}},
				condition: operatorv1.ProviderInstalledCondition, reason: operatorv1.ComponentsFetchErrorReason,
				message: `ConfigMap ` + ns + `/nometa has no "metadata" key: it must hold the release's metadata.yaml under "metadata" and its components under "components"`},
			{name: "missing", version: "v9.9.9", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "missing"}}},
				condition: operatorv1.ProviderInstalledCondition, reason: operatorv1.ComponentsFetchErrorReason,
				message: "Version v9.9.9 of infrastructure-missing not found in the ConfigMaps of namespace " + ns + " selected by p=missing: use one of v0.1.0"},
			// A second local provider: refused, and deletable although the first one is in use.
			{name: "local", version: "v0.1.0", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "missing"}}},
				condition: operatorv1.PreflightCheckCondition, reason: operatorv1.MoreThanOneProviderInstanceExistsReason,
				message: "InfrastructureProvider capl-system/local already installs this provider, and a provider can be installed once: delete one of them"},
			{name: "cluster-api", condition: operatorv1.PreflightCheckCondition, reason: operatorv1.IncorrectCoreProviderNameReason,
				message: "The name cluster-api is the core provider's: use a CoreProvider for it, or another name"},
			{name: "newcontract", version: "v0.3.0", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "newcontract"}}},
				condition: operatorv1.PreflightCheckCondition, reason: operatorv1.CAPIVersionIncompatibilityReason,
				message: "Infrastructure-newcontract v0.3.0 follows the v1beta2 contract, but the core provider follows v1beta1: choose a version for v1beta1, or pause the provider (spec.paused: true) while the core changes contract"},
			// capstan's local provider reconciles no KubeadmConfigs: its manager has no flag for their concurrency.
			{name: "concurrency", version: "v0.1.0", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "missing"}}},
				manager: &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
					Controller: &operatorv1.ControllerConfigurationSpec{GroupKindConcurrency: map[string]int{"KubeadmConfig.bootstrap.cluster.x-k8s.io": 3}}}},
				condition: operatorv1.ProviderInstalledCondition, reason: operatorv1.UnsupportedFieldReason,
				message: "The container manager of Deployment capl-controller-manager would not start (capstan infra-local: unknown flag: --kubeadmconfig-concurrency): remove what sets it in spec.manager, spec.deployment or spec.additionalDeployments"},
			{name: "gates", version: "v0.1.0", fetch: &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"p": "missing"}}},
				manager:   &operatorv1.ManagerSpec{FeatureGates: map[string]bool{"NoSuchGate": true}},
				condition: operatorv1.ProviderInstalledCondition, reason: operatorv1.UnsupportedFieldReason,
				message: `The container manager of Deployment capl-controller-manager would not start (capstan infra-local: invalid argument`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				g := NewWithT(t)
				p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name}}
				p.Spec.Version, p.Spec.FetchConfig, p.Spec.Manager = tt.version, tt.fetch, tt.manager
				create(t, p)
				g.Eventually(func(g Gomega) {
					c := condition(g, p, tt.condition)
					g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
					g.Expect(c.Reason).To(Equal(tt.reason))
					g.Expect(c.Message).To(HavePrefix(tt.message))
				}, timeout, poll).Should(Succeed())
				g.Expect(inventory(g)).NotTo(ContainElement(HavePrefix(ns + "/")))
				ds := &appsv1.DeploymentList{}
				g.Expect(env.Client.List(ctx, ds, client.InNamespace(ns))).To(Succeed())
				g.Expect(ds.Items).To(BeEmpty())
				// Nothing uses it: it goes away at once.
				g.Expect(env.Client.Delete(ctx, p)).To(Succeed())
				g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)) }, timeout, poll).Should(BeTrue())
			})
		}
	})

	t.Run("an upgrade from ConfigMaps keeps the workload cluster's objects; a downgrade across minors is refused", func(t *testing.T) {
		g := NewWithT(t)
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Version = operatortest.V2 })
		waitInstalled(t, localProvider, operatortest.V2, "v1beta1")
		g.Expect(condition(g, localProvider, operatorv1.ProviderUpgradedCondition).Message).To(Equal("Upgraded from v0.1.0 to v0.2.0"))
		g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + operatortest.V2))
		g.Expect(uids(g)).To(Equal(before))

		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Version = operatortest.V1 })
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.PreflightCheckCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1.UnsupportedProviderDowngradeReason))
			g.Expect(c.Message).To(Equal("Downgrading from v0.2.0 to v0.1.0 is not supported: a provider goes back to an older patch release of its minor version only; set spec.version to v0.2.x or later"))
		}, timeout, poll).Should(Succeed())
		g.Consistently(func(g Gomega) {
			g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + operatortest.V2))
			g.Expect(get(g, localProvider).GetProviderStatus().InstalledVersion).To(HaveValue(Equal(operatortest.V2)))
		}, 2*time.Second, poll).Should(Succeed())
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Version = operatortest.V2 })
		g.Eventually(func(g Gomega) {
			g.Expect(condition(g, localProvider, operatorv1.PreflightCheckCondition).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, poll).Should(Succeed())
	})

	t.Run("a change of fetchConfig to an http server is applied and reported; no network call once cached; a tampered cache is refused", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		operatortest.WriteRepository(t, dir, local[operatortest.V1], local[operatortest.V2])
		srv := serve(t, dir)
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.FetchConfig = &operatorv1.FetchConfiguration{URL: srv.URL} })
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.ProviderUpgradedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.FetchConfigChangedReason))
			g.Expect(c.Message).To(Equal("Applied v0.2.0 again as an upgrade: spec.fetchConfig changed"))
		}, timeout, poll).Should(Succeed())
		waitInstalled(t, localProvider, operatortest.V2, "v1beta1")
		g.Expect(uids(g)).To(Equal(before))
		cacheKey := client.ObjectKey{Namespace: "capl-system", Name: operatortest.CacheName("infrastructure-local", operatortest.V2)}
		cached := &corev1.ConfigMap{}
		g.Expect(env.Client.Get(ctx, cacheKey, cached)).To(Succeed())
		g.Expect(cached.OwnerReferences).To(HaveLen(1))
		pin := get(g, localProvider).GetProviderStatus().FetchedRelease
		g.Expect(pin).NotTo(BeNil())
		g.Expect(pin.Version).To(Equal(operatortest.V2))
		g.Expect(pin.Digest).To(Equal(source.Digest(&source.Release{Metadata: local[operatortest.V2].Metadata(), Components: local[operatortest.V2].Components()})))

		// Steady state: a change that does not touch the release reconciles from the cache.
		n := srv.requests()
		update(t, localProvider, func(s *operatorv1.ProviderSpec) {
			s.Deployment = &operatorv1.DeploymentSpec{Containers: []operatorv1.ContainerSpec{{Name: "manager", Args: map[string]string{"--sync-period": "5m"}}}}
		})
		g.Eventually(func(g Gomega) {
			g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Args).To(ContainElement("--sync-period=5m"))
			c := condition(g, localProvider, operatorv1.ProviderUpgradedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.SpecChangedReason))
		}, timeout, poll).Should(Succeed())
		g.Consistently(srv.requests, 2*time.Second, poll).Should(Equal(n))

		// Someone changes the cached release: the operator refuses it, and changes nothing.
		g.Expect(env.Client.Get(ctx, cacheKey, cached)).To(Succeed())
		cached.Data[operatorv1.MetadataConfigMapKey] += "# changed after the fetch\n"
		g.Expect(env.Client.Update(ctx, cached)).To(Succeed())
		update(t, localProvider, func(s *operatorv1.ProviderSpec) {
			s.Deployment.Containers[0].Args["--sync-period"] = "4m"
		})
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.ProviderInstalledCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1.CachedReleaseModifiedReason))
			g.Expect(c.Message).To(HavePrefix("The cached release infrastructure-local v0.2.0 (ConfigMap capl-system/infrastructure-local-v0.2.0) is not what the operator fetched: its digest is sha256:"))
			g.Expect(c.Message).To(HaveSuffix(pin.Digest + " was recorded when it was fetched; delete the ConfigMap and the operator fetches the release again"))
		}, timeout, poll).Should(Succeed())
		g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Args).To(ContainElement("--sync-period=5m"))

		// Deleted, it is fetched again, and the change applied.
		g.Expect(env.Client.Delete(ctx, cached)).To(Succeed())
		operatortest.Nudge(t, env.Client, localProvider)
		g.Eventually(func(g Gomega) {
			g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Args).To(ContainElement("--sync-period=4m"))
			g.Expect(condition(g, localProvider, operatorv1.ProviderInstalledCondition).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, poll).Should(Succeed())
		g.Expect(srv.requests()).To(BeNumerically(">", n))
	})

	t.Run("a change of fetchConfig to an OCI registry", func(t *testing.T) {
		g := NewWithT(t)
		reg := operatortest.NewRegistry(t)
		r := local[operatortest.V2]
		reg.Push(t, "providers/local", operatortest.V2, map[string][]byte{"metadata.yaml": r.Metadata(), "infrastructure-components.yaml": r.Components()})
		update(t, localProvider, func(s *operatorv1.ProviderSpec) {
			s.FetchConfig = &operatorv1.FetchConfiguration{OCIConfiguration: operatorv1.OCIConfiguration{OCI: "http://" + reg.Host + "/providers/local"}}
		})
		g.Eventually(func(g Gomega) {
			cached := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "capl-system", Name: operatortest.CacheName("infrastructure-local", operatortest.V2)}, cached)).To(Succeed())
			g.Expect(cached.Annotations).To(HaveKeyWithValue("operator.cluster.x-k8s.io/source", "the OCI artifact http://"+reg.Host+"/providers/local"))
			g.Expect(condition(g, localProvider, operatorv1.ProviderUpgradedCondition).Reason).To(Equal(operatorv1.FetchConfigChangedReason))
		}, timeout, poll).Should(Succeed())
		waitInstalled(t, localProvider, operatortest.V2, "v1beta1")
		g.Expect(uids(g)).To(Equal(before))
		// Back to the air-gapped ConfigMaps for what follows.
		update(t, localProvider, func(s *operatorv1.ProviderSpec) {
			s.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: localLabels}}
		})
	})

	t.Run("changes of the configSecret and the additional manifests are applied as upgrades; what is no longer rendered is deleted", func(t *testing.T) {
		g := NewWithT(t)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local-variables"}, StringData: map[string]string{"TEAM": "blue"}}
		extras := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local-extras"}, Data: map[string]string{"manifests": operatortest.AdditionalManifests("capl-system", true)}}
		create(t, secret, extras)
		update(t, localProvider, func(s *operatorv1.ProviderSpec) {
			s.ConfigSecret = &operatorv1.SecretReference{Name: secret.Name}
			s.AdditionalManifestsRef = &operatorv1.ConfigmapReference{Name: extras.Name}
		})
		extra := func(g Gomega, name string) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "capl-system", Name: name}, cm)).To(Succeed())
			return cm
		}
		g.Eventually(func(g Gomega) {
			g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "blue"))
			g.Expect(extra(g, "extra-b").Labels).To(HaveKeyWithValue(clusterv1.ProviderNameLabel, "infrastructure-local"))
		}, timeout, poll).Should(Succeed())

		g.Eventually(func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
				return err
			}
			secret.Data["TEAM"] = []byte("green")
			return env.Client.Update(ctx, secret)
		}, timeout, poll).Should(Succeed())
		operatortest.Nudge(t, env.Client, localProvider)
		g.Eventually(func(g Gomega) {
			g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "green"))
			c := condition(g, localProvider, operatorv1.ProviderUpgradedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.ConfigSecretChangedReason), "condition: %v", c)
			g.Expect(c.Message).To(Equal("Applied v0.2.0 again as an upgrade: the content of the configSecret capl-system/local-variables changed"))
		}, timeout, poll).Should(Succeed())

		g.Eventually(func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(extras), extras); err != nil {
				return err
			}
			extras.Data["manifests"] = operatortest.AdditionalManifests("capl-system", false)
			return env.Client.Update(ctx, extras)
		}, timeout, poll).Should(Succeed())
		operatortest.Nudge(t, env.Client, localProvider)
		g.Eventually(func(g Gomega) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: "capl-system", Name: "extra-b"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the object no longer rendered is deleted")
			c := condition(g, localProvider, operatorv1.ProviderUpgradedCondition)
			g.Expect(c.Message).To(Equal("Applied v0.2.0 again as an upgrade: the additional manifests changed; deleted what it no longer has: ConfigMap capl-system/extra-b"))
		}, timeout, poll).Should(Succeed())
		g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "green"))
		g.Expect(uids(g)).To(Equal(before))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(extras), &corev1.ConfigMap{})).To(Succeed(), "the ConfigMap of the additional manifests is kept")
	})

	t.Run("a contract upgrade of the core waits until the providers on the old contract are paused; nothing of a paused provider changes; unpausing waits for every provider's upgrade", func(t *testing.T) {
		g := NewWithT(t)
		update(t, coreProvider, func(s *operatorv1.ProviderSpec) { s.Version = "v0.3.0" })
		g.Eventually(func(g Gomega) {
			c := condition(g, coreProvider, operatorv1.ProviderUpgradedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.WaitingForProvidersPausedReason))
			g.Expect(c.Message).To(Equal("Waiting to upgrade from the v1beta1 to the v1beta2 contract until the providers on the v1beta1 contract are paused: BootstrapProvider " + bootstrapNS + "/kubeadm, InfrastructureProvider capl-system/local; set spec.paused: true on them"))
		}, timeout, poll).Should(Succeed())
		g.Consistently(func(g Gomega) {
			g.Expect(get(g, coreProvider).GetProviderStatus().InstalledVersion).To(HaveValue(Equal(operatortest.V1)))
		}, 2*time.Second, poll).Should(Succeed())

		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Paused = true })
		update(t, kubeadmProvider, func(s *operatorv1.ProviderSpec) { s.Paused = true })
		for _, d := range []client.ObjectKey{{Namespace: "capl-system", Name: "capl-controller-manager"}, {Namespace: bootstrapNS, Name: "capi-kubeadm-bootstrap-controller-manager"}} {
			g.Eventually(func(g Gomega) {
				d := deployment(g, d.Namespace, d.Name)
				g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
				g.Expect(d.Annotations).To(HaveKeyWithValue(operatorv1.OriginalReplicasAnnotation, "1"))
			}, timeout, poll).Should(Succeed())
		}
		g.Eventually(func(g Gomega) {
			g.Expect(condition(g, localProvider, operatorv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, poll).Should(Succeed())

		// A paused provider's spec changes wait until it is unpaused.
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Deployment.Containers[0].Args["--sync-period"] = "6m" })
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.PausedCondition)
			g.Expect(c.Message).To(HaveSuffix("changes to the spec other than spec.version wait until the provider is unpaused"))
		}, timeout, poll).Should(Succeed())
		g.Consistently(func(g Gomega) {
			g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Template.Spec.Containers[0].Args).To(ContainElement("--sync-period=4m"))
		}, 2*time.Second, poll).Should(Succeed())
		waitInstalled(t, coreProvider, "v0.3.0", "v1beta2")

		// Unpausing the local provider while it, and the kubeadm provider, are still on v1beta1 is refused.
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Paused = false })
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.PausedCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(operatorv1.UnpauseRefusedReason))
			g.Expect(c.Message).To(Equal("Unpausing is refused while installed providers follow another contract than the core's v1beta2: BootstrapProvider " + bootstrapNS + "/kubeadm (v0.1.0 v1beta1), InfrastructureProvider capl-system/local (v0.2.0 v1beta1); set their spec.version to releases for v1beta2 first"))
		}, timeout, poll).Should(Succeed())
		g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))

		// Upgraded to the new contract, it stays paused while the kubeadm provider is on the old one.
		update(t, localProvider, func(s *operatorv1.ProviderSpec) { s.Version = "v0.3.0" })
		waitVersion(t, localProvider, "v0.3.0", "v1beta2")
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.PausedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.UnpauseRefusedReason))
			g.Expect(c.Message).To(Equal("Unpausing is refused while installed providers follow another contract than the core's v1beta2: BootstrapProvider " + bootstrapNS + "/kubeadm (v0.1.0 v1beta1); set their spec.version to releases for v1beta2 first"))
		}, timeout, poll).Should(Succeed())
		g.Expect(deployment(g, "capl-system", "capl-controller-manager").Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))

		// Once the kubeadm provider is upgraded too, the local provider runs again, with its original
		// replicas and the change that waited; then the kubeadm provider is unpaused.
		update(t, kubeadmProvider, func(s *operatorv1.ProviderSpec) { s.Version = "v0.3.0" })
		waitVersion(t, kubeadmProvider, "v0.3.0", "v1beta2")
		g.Eventually(func(g Gomega) {
			d := deployment(g, "capl-system", "capl-controller-manager")
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
			g.Expect(d.Annotations).NotTo(HaveKey(operatorv1.OriginalReplicasAnnotation))
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--sync-period=6m"))
			g.Expect(condition(g, localProvider, operatorv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
		}, timeout, poll).Should(Succeed())
		g.Expect(deployment(g, bootstrapNS, "capi-kubeadm-bootstrap-controller-manager").Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
		update(t, kubeadmProvider, func(s *operatorv1.ProviderSpec) { s.Paused = false })
		g.Eventually(func(g Gomega) {
			g.Expect(deployment(g, bootstrapNS, "capi-kubeadm-bootstrap-controller-manager").Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
		}, timeout, poll).Should(Succeed())
		g.Expect(uids(g)).To(Equal(before))
	})

	t.Run("deletions wait while in use, then remove what was installed", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(env.Client.Delete(ctx, localProvider)).To(Succeed())
		g.Eventually(func(g Gomega) {
			c := condition(g, localProvider, operatorv1.DeletionBlockedCondition)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(operatorv1.ClustersExistReason))
			g.Expect(c.Message).To(Equal(fmt.Sprintf("InfrastructureProvider capl-system/local cannot be deleted while Clusters use it: %s/w1 (LocalCluster %s/w1); delete them first", wns, wns)))
		}, timeout, poll).Should(Succeed())
		g.Expect(env.Client.Delete(ctx, kubeadmProvider)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(kubeadmProvider), kubeadmProvider))
		}, timeout, poll).Should(BeTrue())
		g.Expect(env.Client.Delete(ctx, coreProvider)).To(Succeed())
		g.Eventually(func(g Gomega) {
			c := condition(g, coreProvider, operatorv1.DeletionBlockedCondition)
			g.Expect(c.Reason).To(Equal(operatorv1.OtherProvidersExistReason))
			g.Expect(c.Message).To(Equal("CoreProvider capi-system/cluster-api cannot be deleted while other providers exist: InfrastructureProvider capl-system/local; delete them first"))
		}, timeout, poll).Should(Succeed())
		g.Expect(deployment(g, "capl-system", "capl-controller-manager")).NotTo(BeNil())

		g.Expect(env.Client.Delete(ctx, localCluster)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
		for _, p := range []client.Object{localProvider, coreProvider} {
			g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)) }, timeout, poll).Should(BeTrue(), "%s is not deleted", p.GetName())
		}
		g.Expect(inventory(g)).To(BeEmpty())
		ds := &appsv1.DeploymentList{}
		g.Expect(env.Client.List(ctx, ds, client.MatchingLabels{clusterv1.ProviderNameLabel: "infrastructure-local"})).To(Succeed())
		g.Expect(ds.Items).To(BeEmpty())
		// CRDs stay, as clusterctl delete keeps them.
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "localclusters.infrastructure.cluster.x-k8s.io"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
	})
}

package operator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/operator/validation"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	// The API server calls webhooks through the EndpointSlices of their Service, which the test writes as
	// the embedded cluster's local runtime would.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true,
		SchemeBuilders: []func(*runtime.Scheme) error{operatorv1.AddToScheme, managementv1.AddToScheme, infrav1.AddToScheme}},
		func(e *envtest.Environment) { env = e }))
}

// install applies the operator's webhook manifests for an operator in namespace ns, limited to ns and
// the namespaces also.
func install(t *testing.T, ns string, also ...string) {
	t.Helper()
	objs, err := Webhooks(nil, validation.Options{}).Manifests(env.Scheme, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if vwc, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			vwc.Name += "-" + ns
			for i := range vwc.Webhooks {
				vwc.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: append([]string{ns}, also...)}}}
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), vwc) })
		}
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

// startOperator runs a manager that serves the operator's webhooks (and no controllers) in namespace ns,
// points the webhook Service at it, and waits until the API server can call it.
func startOperator(t *testing.T, ns string, opts ...validation.Options) {
	t.Helper()
	g := NewWithT(t)
	webhookPort, err := loopback.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	healthPort, err := loopback.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", healthPort),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	o := webhooks.DefaultOptions()
	o.Port = webhookPort
	var vo validation.Options
	if len(opts) > 0 {
		vo = opts[0]
	}
	g.Expect(Webhooks(mgr.GetAPIReader(), vo).Setup(mgr, o, ns)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "capi-operator-webhook-service-local", Labels: map[string]string{discoveryv1.LabelServiceName: "capi-operator-webhook-service"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		// An address of the pod network stands for 127.0.0.1 (package localnet).
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: ptr.To(int32(webhookPort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	g.Expect(env.Client.Create(ctx, slice)).To(Succeed())
	g.Eventually(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "the operator becomes ready once the API server can call its webhooks")
}

// labelProviderCRDs labels the local provider's CRDs as its installation does (clusterctl's
// cluster.x-k8s.io/provider label), which is how a provider's kinds are known.
func labelProviderCRDs(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	for _, name := range []string{"localclusters.infrastructure.cluster.x-k8s.io", "localmachines.infrastructure.cluster.x-k8s.io"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(t.Context(), client.ObjectKey{Name: name}, crd)).To(Succeed())
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels[clusterv1.ProviderNameLabel] = "infrastructure-local"
		g.Expect(env.Client.Patch(t.Context(), crd, patch)).To(Succeed())
	}
}

func TestDeletingAProviderInUseIsRefusedAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	other := env.NewNamespace(t)
	install(t, ns, other)
	labelProviderCRDs(t)
	startOperator(t, ns)

	// No operator controller runs here: the providers have no finalizer, so only the webhook stands
	// between a DELETE and their removal.
	core := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-api"}}
	local := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: &corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalCluster", Name: "demo", Namespace: ns},
	}}
	localCluster := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"}}
	// What the operator records once it has installed them: clusterctl's inventory.
	coreRecord := &clusterctlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-api"},
		ProviderName: "cluster-api", Type: string(clusterctlv1.CoreProviderType), Version: "v0.1.0"}
	localRecord := &clusterctlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infrastructure-local"},
		ProviderName: "local", Type: string(clusterctlv1.InfrastructureProviderType), Version: "v0.1.0"}
	for _, obj := range []client.Object{core, local, coreRecord, localRecord, cluster, localCluster} {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	}

	err := env.Client.Delete(ctx, local)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused as forbidden, got: %v", err)
	g.Expect(err.Error()).To(And(
		ContainSubstring(`admission webhook "validation.infrastructureprovider.operator.cluster.x-k8s.io" denied the request`),
		ContainSubstring(fmt.Sprintf("InfrastructureProvider %s/local cannot be deleted while Clusters use it: %s/demo (LocalCluster %s/demo); delete them first", ns, ns, ns))))

	err = env.Client.Delete(ctx, core)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused as forbidden, got: %v", err)
	g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf(
		"CoreProvider %s/cluster-api cannot be deleted while other providers exist: InfrastructureProvider %s/local; delete them first", ns, ns)))

	// The operator proposal's InfrastructureProvider local of the namespace stands for the same provider.
	proposed := &managementv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}}
	g.Expect(env.Client.Create(ctx, proposed)).To(Succeed())
	err = env.Client.Delete(ctx, proposed)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused as forbidden, got: %v", err)
	g.Expect(err.Error()).To(And(
		ContainSubstring(`admission webhook "validation.infrastructureprovider.management.cluster.x-k8s.io" denied the request`),
		ContainSubstring(fmt.Sprintf("InfrastructureProvider %s/local cannot be deleted while Clusters use it", ns))))

	// Both are still there, untouched.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(local), local)).To(Succeed())
	g.Expect(local.DeletionTimestamp).To(BeNil())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(core), core)).To(Succeed())
	g.Expect(core.DeletionTimestamp).To(BeNil())

	// A second InfrastructureProvider local, in another namespace, is a duplicate the operator refuses to
	// install: it installs nothing, so deleting it is admitted although the provider is in use.
	duplicate := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "local"}}
	g.Expect(env.Client.Create(ctx, duplicate)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, duplicate)).To(Succeed())

	// Once the cluster is gone, the provider is unused: deleting it is admitted, then the core.
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, localCluster)).To(Succeed())
	g.Eventually(func() error { return env.Client.Delete(ctx, local) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(local), local))).To(BeTrue())
	g.Expect(env.Client.Delete(ctx, proposed)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, core)).To(Succeed())
}

// TestSpecsRefusedAtAdmission: the fields no manager has a flag for, probe paths managers do not serve,
// references to ConfigMaps and Secrets of other namespaces (unless allowed) and changes in debug mode are
// refused at admission, naming the field; the namespace key of container args is admitted with a warning.
func TestSpecsRefusedAtAdmission(t *testing.T) {
	ctx := t.Context()
	ns := env.NewNamespace(t)
	allowed := env.NewNamespace(t)
	install(t, ns)
	startOperator(t, ns, validation.Options{ReferenceNamespaces: []string{allowed}})

	tests := []struct {
		name    string
		spec    func(*operatorv1.ProviderSpec)
		wantErr string
	}{
		{name: "cache sync timeout", spec: func(s *operatorv1.ProviderSpec) {
			s.Manager = &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
				Controller: &operatorv1.ControllerConfigurationSpec{CacheSyncTimeout: ptr.To(time.Minute)}}}
		}, wantErr: "spec.manager.controller.cacheSyncTimeout: Forbidden: Cluster API controller managers have no flag for it: remove it"},
		{name: "recover panic in an additional Deployment", spec: func(s *operatorv1.ProviderSpec) {
			s.AdditionalDeployments = map[string]operatorv1.AdditionalDeployments{"aso": {Manager: &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
				Controller: &operatorv1.ControllerConfigurationSpec{RecoverPanic: ptr.To(true)}}}}}
		}, wantErr: "spec.additionalDeployments[aso].manager.controller.recoverPanic: Forbidden"},
		{name: "a lock of ConfigMaps", spec: func(s *operatorv1.ProviderSpec) {
			s.Manager = &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
				LeaderElection: &operatorv1.LeaderElectionConfiguration{LeaderElect: ptr.To(true), ResourceLock: "configmaps"}}}
		}, wantErr: `spec.manager.leaderElection.resourceLock: Unsupported value: "configmaps": supported values: "leases"`},
		{name: "a readiness path managers do not serve", spec: func(s *operatorv1.ProviderSpec) {
			s.Manager = &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
				Health: operatorv1.ControllerHealth{ReadinessEndpointName: "ready"}}}
		}, wantErr: `spec.manager.health.readinessEndpointName: Invalid value: "ready": managers serve this probe at /readyz (and /readyz/<check>) only`},
		{name: "a Secret of another namespace", spec: func(s *operatorv1.ProviderSpec) {
			s.ConfigSecret = &operatorv1.SecretReference{Name: "creds", Namespace: "kube-system"}
		}, wantErr: "spec.configSecret.namespace: Forbidden: a provider may use a Secret of its own namespace " + ns + " only, unless the operator's --allowed-reference-namespaces lists kube-system"},
		{name: "a ConfigMap of another namespace", spec: func(s *operatorv1.ProviderSpec) {
			s.AdditionalManifestsRef = &operatorv1.ConfigmapReference{Name: "extra", Namespace: "kube-system"}
		}, wantErr: "spec.additionalManifests.namespace: Forbidden"},
		{name: "a Secret of an allowed namespace", spec: func(s *operatorv1.ProviderSpec) {
			s.ConfigSecret = &operatorv1.SecretReference{Name: "creds", Namespace: allowed}
		}},
		{name: "probes below readyz and healthz, a graceful shutdown", spec: func(s *operatorv1.ProviderSpec) {
			s.Manager = &operatorv1.ManagerSpec{ControllerManagerConfiguration: operatorv1.ControllerManagerConfiguration{
				GracefulShutdownTimeout: &metav1.Duration{Duration: time.Minute},
				Health:                  operatorv1.ControllerHealth{ReadinessEndpointName: "readyz/ping", LivenessEndpointName: "healthz"}}}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i)}}
			tt.spec(p.GetProviderSpec())
			err := env.Client.Create(ctx, p)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused as invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
			// An update to it is refused the same way.
			ok := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("u%d", i)}}
			g.Expect(env.Client.Create(ctx, ok)).To(Succeed())
			tt.spec(ok.GetProviderSpec())
			err = env.Client.Update(ctx, ok)
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}

	t.Run("the operator proposal's kinds: what cannot be translated, and the same rules", func(t *testing.T) {
		g := NewWithT(t)
		for name, spec := range map[string]string{
			`spec.deployment.containers[0].image: Invalid value: "42": give a string, or an object of repository, name and tag`: `{"deployment": {"containers": [{"name": "manager", "image": 42}]}}`,
			`spec.manager.syncPeriod: Invalid value: "often": give a number of seconds (660) or a duration (11m)`:               `{"manager": {"syncPeriod": "often"}}`,
			`spec.configSecret.namespace: Forbidden`: `{"secretName": "creds", "secretNamespace": "kube-system"}`,
		} {
			p := &unstructured.Unstructured{}
			g.Expect(p.UnmarshalJSON([]byte(`{"apiVersion": "management.cluster.x-k8s.io/v1alpha1", "kind": "InfrastructureProvider",
				"metadata": {"generateName": "proposed-", "namespace": "` + ns + `"}, "spec": ` + spec + `}`))).To(Succeed())
			err := env.Client.Create(ctx, p)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused as invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(name))
		}
	})

	t.Run("debug mode allows no other change", func(t *testing.T) {
		g := NewWithT(t)
		p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "debugging"}}
		p.Spec.Manager = &operatorv1.ManagerSpec{Debug: true}
		g.Expect(env.Client.Create(ctx, p)).To(Succeed())
		p.Spec.Version = "v0.1.0" // filling in the version, as the operator does, is admitted
		g.Expect(env.Client.Update(ctx, p)).To(Succeed())
		p.Spec.Manager.FeatureGates = map[string]bool{"MachinePool": true}
		err := env.Client.Update(ctx, p)
		g.Expect(err).To(MatchError(ContainSubstring("the provider is in debug mode (spec.manager.debug: true): no other field may change while it is; set spec.manager.debug to false first, alone")))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Spec.Manager.Debug = false
		g.Expect(env.Client.Update(ctx, p)).To(Succeed(), "leaving debug mode alone is admitted")
		p.Spec.Manager.FeatureGates = map[string]bool{"MachinePool": true}
		g.Expect(env.Client.Update(ctx, p)).To(Succeed(), "then the change is admitted")
	})

	t.Run("the namespace key of container args is admitted with a warning", func(t *testing.T) {
		g := NewWithT(t)
		var warnings []string
		cfg := rest.CopyConfig(env.Config)
		cfg.WarningHandler = warningRecorder(func(w string) { warnings = append(warnings, w) })
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		p := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "namespaced"}}
		p.Spec.Deployment = &operatorv1.DeploymentSpec{Containers: []operatorv1.ContainerSpec{{Name: "manager", Args: map[string]string{"namespace": "team-a"}}}}
		g.Expect(c.Create(ctx, p)).To(Succeed())
		g.Expect(warnings).To(ContainElement("spec.deployment.containers[0].args[namespace] is ignored: providers watch every namespace; spec.manager.cacheNamespace sets --namespace"))
	})
}

type warningRecorder func(string)

func (w warningRecorder) HandleWarningHeader(_ int, _ string, text string) { w(text) }

func TestManifestsAreUpToDate(t *testing.T) {
	for file, render := range map[string]func() ([]byte, error){ManifestsFile: Manifests, ChartFile: ChartManifests} {
		t.Run(file, func(t *testing.T) {
			g := NewWithT(t)
			want, err := render()
			g.Expect(err).NotTo(HaveOccurred())
			got, err := os.ReadFile("../../../" + file)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(got)).To(Equal(string(want)), "run `make generate` to write %s from the registered webhooks", file)
		})
	}
}

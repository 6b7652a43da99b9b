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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	// The API server calls webhooks through the EndpointSlices of their Service, which the test writes as
	// the embedded cluster's local runtime would.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true,
		SchemeBuilders: []func(*runtime.Scheme) error{operatorv1.AddToScheme, infrav1.AddToScheme}},
		func(e *envtest.Environment) { env = e }))
}

// install applies the operator's webhook manifests for an operator in namespace ns, limited to ns and
// the namespaces also.
func install(t *testing.T, ns string, also ...string) {
	t.Helper()
	objs, err := Webhooks(nil).Manifests(env.Scheme, ns)
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
func startOperator(t *testing.T, ns string) {
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
	g.Expect(Webhooks(mgr.GetAPIReader()).Setup(mgr, o, ns)).To(Succeed())
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
	g.Expect(env.Client.Delete(ctx, core)).To(Succeed())
}

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

package core

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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/webhooks"
	"github.com/capstan-dev/capstan/internal/webhooks/certs"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	// The API server calls webhooks through the EndpointSlices of their Service, which the tests write as
	// the embedded cluster's local runtime would.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true, CRDs: builder.CRDs()},
		func(e *envtest.Environment) { env = e }))
}

// install applies the core's webhook manifests for a manager in namespace ns. The configuration is
// renamed and limited to ns so that tests do not see each other's webhooks.
func install(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	objs, err := Webhooks(nil).Manifests(env.Scheme, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if vwc, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			vwc.Name += "-" + ns
			for i := range vwc.Webhooks {
				vwc.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), vwc) })
		}
		if mwc, ok := obj.(*admissionregistrationv1.MutatingWebhookConfiguration); ok {
			mwc.Name += "-" + ns
			for i := range mwc.Webhooks {
				mwc.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), mwc) })
		}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// route points the webhook Service of ns at a local port, as an EndpointSlice controller would.
func route(t *testing.T, ns string, port int) {
	t.Helper()
	ctx := context.Background()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "capi-webhook-service-local", Labels: map[string]string{discoveryv1.LabelServiceName: "capi-webhook-service"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		// An address of the pod network stands for 127.0.0.1 (package localnet).
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	existing := &discoveryv1.EndpointSlice{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(slice), existing); err == nil {
		slice.ResourceVersion = existing.ResourceVersion
		if err := env.Client.Update(ctx, slice); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := env.Client.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
}

// manager is a running manager that serves the core's webhooks.
type manager struct {
	webhookPort int
	readyz      string
	stop        func()
}

// startManager runs a manager with the core's webhooks in namespace ns, routes the webhook Service to it
// and waits until it is ready. opts change the webhook options.
func startManager(t *testing.T, ns string, opts ...func(*webhooks.Options)) *manager {
	t.Helper()
	return startManagerWith(t, ns, Options{}, opts...)
}

// startManagerWith is startManager with the webhooks' options.
func startManagerWith(t *testing.T, ns string, hookOptions Options, opts ...func(*webhooks.Options)) *manager {
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
	for _, opt := range opts {
		opt(&o)
	}
	g.Expect(Webhooks(mgr.GetClient(), hookOptions).Setup(mgr, o, ns)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	m := &manager{webhookPort: webhookPort, readyz: fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort),
		stop: func() { cancel(); <-done }}
	t.Cleanup(m.stop)
	route(t, ns, webhookPort)
	g.Eventually(m.ready, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "the manager becomes ready once the API server can call it")
	return m
}

func (m *manager) ready() error {
	resp, err := http.Get(m.readyz + "?verbose")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// badMachineDeployment has a selector that does not match its template's labels.
func badMachineDeployment(ns, name string) *clusterv1.MachineDeployment {
	md := builder.MachineDeployment(ns, name, "c", 1, builder.V1Beta1.InfraMachineTemplate(ns, "t"), nil)
	md.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
	md.Spec.Template.Labels = map[string]string{"pool": "b"}
	return md
}

// expectRefused checks that the webhook refuses a MachineDeployment whose selector does not match its
// template, with a message that names both.
func expectRefused(g Gomega, ns string) {
	err := env.Client.Create(context.Background(), badMachineDeployment(ns, "bad"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused as invalid by the webhook, got: %v", err)
	g.Expect(err.Error()).To(And(
		ContainSubstring("admission webhook \"validation.machinedeployment.cluster.x-k8s.io\" denied the request"),
		ContainSubstring("spec.template.metadata.labels"),
		ContainSubstring(`must match spec.selector "cluster.x-k8s.io/cluster-name=c,pool=a"`)))
}

func TestMachineDeploymentWithSelectorNotMatchingItsTemplateIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)
	startManager(t, ns)

	expectRefused(g, ns)
	g.Expect(env.Client.Create(ctx, builder.MachineDeployment(ns, "good", "c", 1, builder.V1Beta1.InfraMachineTemplate(ns, "t"), nil))).
		To(Succeed(), "a MachineDeployment whose selector matches its template is admitted")

	// A MachineSet and a MachineHealthCheck are checked too.
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ms"}, Spec: clusterv1.MachineSetSpec{
		ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
		Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{ClusterName: "c", InfrastructureRef: *builder.Ref(builder.V1Beta1.InfraMachineTemplate(ns, "t"))}},
	}}
	err := env.Client.Create(ctx, ms)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.metadata.labels")))
	mhc := &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mhc"}, Spec: clusterv1.MachineHealthCheckSpec{
		ClusterName: "c", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
		NodeStartupTimeout: &metav1.Duration{Duration: 10 * time.Second},
	}}
	g.Expect(env.Client.Create(ctx, mhc)).To(MatchError(ContainSubstring("spec.nodeStartupTimeout: Invalid value: \"10s\": must be at least 30s")))
}

func TestCertificateSecretIsRecreatedAndReused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	install(t, ns)

	// A CRD whose conversion webhook is the manager's gets the CA bundle too.
	crd := conversionCRD(ns)
	g.Expect(env.Client.Create(ctx, crd)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })

	m := startManager(t, ns)
	expectRefused(g, ns)
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: "capi-webhook-service-cert"}
	g.Expect(env.Client.Get(ctx, key, secret)).To(Succeed())
	ca := secret.Data[certs.CAKey]
	g.Expect(ca).NotTo(BeEmpty())
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
	g.Expect(bundleOf(g, ns)).To(Equal(ca), "the configuration trusts the Secret's CA")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.CABundle).To(Equal(ca))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// Deleting the Secret: it comes back with the same certificates, and the webhooks keep answering.
	uid := secret.UID
	g.Expect(env.Client.Delete(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, secret)).To(Succeed())
		g.Expect(secret.UID).NotTo(Equal(uid))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "the Secret is recreated")
	g.Expect(secret.Data[certs.CAKey]).To(Equal(ca), "the recreated Secret holds the CA in use")
	g.Eventually(func(g Gomega) { expectRefused(g, ns) }, 60*time.Second, 500*time.Millisecond).Should(Succeed())

	// A restart reuses the Secret: same CA, no new bundle to distribute.
	m.stop()
	startManager(t, ns)
	g.Expect(env.Client.Get(ctx, key, secret)).To(Succeed())
	g.Expect(secret.Data[certs.CAKey]).To(Equal(ca), "a restarted manager keeps the CA")
	g.Expect(bundleOf(g, ns)).To(Equal(ca))
	expectRefused(g, ns)
}

// bundleOf returns the CA bundle of the MachineDeployment webhook of ns.
func bundleOf(g Gomega, ns string) []byte {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "capi-validating-webhook-configuration-" + ns}, vwc)).To(Succeed())
	return vwc.Webhooks[0].ClientConfig.CABundle
}

// conversionCRD is a CRD whose conversion webhook is the webhook Service of ns.
func conversionCRD(ns string) *apiextensionsv1.CustomResourceDefinition {
	group := ns + ".conversion.test"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1"},
				ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
					Namespace: ns, Name: "capi-webhook-service", Path: ptr.To("/convert")}},
			}},
		},
	}
}

func TestManifestsFileIsUpToDate(t *testing.T) {
	g := NewWithT(t)
	want, err := Manifests()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := os.ReadFile("../../../" + ManifestsFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(string(want)), "run `make generate` to write %s from the registered webhooks", ManifestsFile)
}

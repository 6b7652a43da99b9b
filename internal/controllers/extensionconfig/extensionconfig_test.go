package extensionconfig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/localnet"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/pkg/extension"
)

var env *envtest.Environment

const (
	timeout  = 90 * time.Second
	interval = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// startManager runs the ExtensionConfig controller until the test ends and returns its registry. The
// Runtime SDK client reaches Services as in the embedded management cluster: through their EndpointSlices.
func startManager(t *testing.T) *registry.Registry {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating the manager: %v", err)
	}
	reg := registry.New()
	rc := &runtimeclient.Client{Registry: reg, Namespaces: mgr.GetClient(), Dial: (&localnet.Dialer{Client: mgr.GetAPIReader()}).DialContext}
	ctx, cancel := context.WithCancel(context.Background())
	if err := (&Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Runtime: rc, Registry: reg}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		t.Fatalf("setting up the controller: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("running the manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return reg
}

func holdHandler(calls *atomic.Int32) extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse] {
	return extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]{
		Hook: hooksv1.BeforeClusterCreate, Name: "hold",
		Func: func(context.Context, *hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse) {
			calls.Add(1)
		},
	}
}

// create creates a cluster-scoped ExtensionConfig, deleted when the test ends.
func create(t *testing.T, ec *runtimev1.ExtensionConfig) {
	t.Helper()
	if err := env.Client.Create(context.Background(), ec); err != nil {
		t.Fatalf("creating ExtensionConfig %s: %v", ec.Name, err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ec) })
}

func discovered(g Gomega, name string) *metav1.Condition {
	ec := &runtimev1.ExtensionConfig{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, ec)).To(Succeed())
	c := conditions.GetV1Beta2(ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)
	g.Expect(c).NotTo(BeNil())
	return c
}

func events(g Gomega, name, reason string) []string {
	list := &corev1.EventList{}
	g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "ExtensionConfig" && e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

// An Extension behind a Service, its CA injected from a Secret: discovered, registered, and followed when
// the Secret's CA changes.
func TestDiscoversAnExtensionBehindAServiceWithTheCAOfASecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startManager(t)
	ns := env.NewNamespace(t)
	ext := runtimetest.Start(t, "ext."+ns+".svc")
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, holdHandler(&calls))).To(Succeed())

	g.Expect(env.Client.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(9443)}}}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "ext-1", Labels: map[string]string{discoveryv1.LabelServiceName: "ext"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.3.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(ext.Port))}},
	})).To(Succeed())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ext-cert"}, Data: map[string][]byte{"ca.crt": ext.CA}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())

	name := "svc-" + ns
	create(t, &runtimev1.ExtensionConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{runtimev1.InjectCAFromSecretAnnotation: ns + "/ext-cert"}},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{
			Service: &runtimev1.ServiceReference{Namespace: ns, Name: "ext", Port: ptr.To[int32](443)}}},
	})

	g.Eventually(func(g Gomega) {
		ec := &runtimev1.ExtensionConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, ec)).To(Succeed())
		g.Expect(ec.Spec.ClientConfig.CABundle).To(Equal(ext.CA), "the CA of the Secret is injected")
		g.Expect(ec.Status.Handlers).To(ConsistOf(runtimev1.ExtensionHandler{
			Name:           "hold." + name,
			RequestHook:    runtimev1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: "BeforeClusterCreate"},
			TimeoutSeconds: ptr.To[int32](10), FailurePolicy: ptr.To(runtimev1.FailurePolicyFail),
		}))
		g.Expect(conditions.IsTrue(ec, runtimev1.RuntimeExtensionDiscoveredCondition)).To(BeTrue())
		g.Expect(discovered(g, name).Status).To(Equal(metav1.ConditionTrue))
		_, ok := reg.Get("hold." + name)
		g.Expect(ok).To(BeTrue(), "the handler is registered")
		g.Expect(events(g, name, "Discovered")).To(ContainElement("Discovered 1 handlers: hold." + name + " (BeforeClusterCreate)"))
	}, timeout, interval).Should(Succeed())

	// The Secret gets another CA: the controller follows, and says the server's certificate does not match.
	_, otherCA := runtimetest.TLS(t)
	secret.Data["ca.crt"] = otherCA
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := discovered(g, name)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(runtimev1.ExtensionConfigNotDiscoveredV1Beta2Reason))
		g.Expect(c.Message).To(ContainSubstring("the server's certificate is not signed by the CA of spec.clientConfig.caBundle"))
	}, timeout, interval).Should(Succeed())
	_, ok := reg.Get("hold." + name)
	g.Expect(ok).To(BeTrue(), "a failed discovery keeps the handlers discovered before")

	// Deleted: its handlers are unregistered.
	g.Expect(env.Client.Delete(ctx, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	g.Eventually(func() bool { _, ok := reg.Get("hold." + name); return ok }, timeout, interval).Should(BeFalse())
}

// Failing discoveries — wrong CA, refused connection, bad JSON, no answer in time, a missing CA Secret —
// are each reported on their ExtensionConfig while the others are discovered, and are retried until the
// Extension is there.
func TestFailingDiscoveriesAreReportedAndRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startManager(t)
	ns := env.NewNamespace(t)

	release := make(chan struct{})
	hanging := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hanging.Close() })
	badJSON := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{\"status\": ")) }))
	t.Cleanup(badJSON.Close)
	good := runtimetest.Start(t)
	other := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(good.Server, holdHandler(&calls))).To(Succeed())
	// Nothing listens on late's port until later.
	late := runtimetest.Prepare(t)
	g.Expect(extension.AddHandler(late.Server, holdHandler(&calls))).To(Succeed())
	latePort := runtimetest.FreePort(t)

	url := func(s string) runtimev1.ClientConfig { return runtimev1.ClientConfig{URL: ptr.To(s)} }
	tests := []struct {
		name        string
		config      runtimev1.ClientConfig
		annotations map[string]string
		want        string
	}{
		{"timeout", runtimev1.ClientConfig{URL: ptr.To(hanging.URL), CABundle: runtimetest.CAOf(hanging)}, nil, "no response within 10s"},
		{"wrong-ca", runtimev1.ClientConfig{URL: ptr.To(good.URL), CABundle: other.CA}, nil, "the server's certificate is not signed by the CA of spec.clientConfig.caBundle"},
		{"refused", runtimev1.ClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d", latePort)), CABundle: late.CA}, nil, "connection refused"},
		{"bad-json", runtimev1.ClientConfig{URL: ptr.To(badJSON.URL), CABundle: runtimetest.CAOf(badJSON)}, nil, "the response is not a DiscoveryResponse: unexpected end of JSON input"},
		{"no-secret", url(good.URL), map[string]string{runtimev1.InjectCAFromSecretAnnotation: ns + "/missing"},
			ns + "/missing of annotation runtime.cluster.x-k8s.io/inject-ca-from-secret does not exist"},
		{"good", runtimev1.ClientConfig{URL: ptr.To(good.URL), CABundle: good.CA}, nil, ""},
	}
	for _, tt := range tests {
		create(t, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: tt.name + "-" + ns, Annotations: tt.annotations},
			Spec: runtimev1.ExtensionConfigSpec{ClientConfig: tt.config}})
	}
	for _, tt := range tests {
		name := tt.name + "-" + ns
		g.Eventually(func(g Gomega) {
			c := discovered(g, name)
			if tt.want == "" {
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				return
			}
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring(tt.want))
			g.Expect(events(g, name, "DiscoveryFailed")).To(ContainElement(ContainSubstring(tt.want)))
		}, timeout, interval).Should(Succeed(), tt.name)
	}

	// The Extension comes up: the retries discover it.
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", latePort))
	g.Expect(err).NotTo(HaveOccurred())
	late.Serve(t, l)
	g.Eventually(func(g Gomega) {
		c := discovered(g, "refused-"+ns)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
	}, timeout, interval).Should(Succeed())
	ec := &runtimev1.ExtensionConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "refused-" + ns}, ec)).To(Succeed())
	g.Expect(ec.Status.Handlers).To(HaveLen(1))
	g.Expect(strings.HasPrefix(ec.Status.Handlers[0].Name, "hold.")).To(BeTrue())
}

// A restarted manager registers the handlers the ExtensionConfigs' status lists before any discovery, so
// hooks are called at once even if the Extension server is down.
func TestWarmUpRegistersTheDiscoveredHandlers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	name := "warm-" + ns
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"cluster.x-k8s.io/paused": ""}},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d", runtimetest.FreePort(t)))}}}
	create(t, ec)
	ec.Status.Handlers = []runtimev1.ExtensionHandler{{Name: "hold." + name,
		RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: "BeforeClusterDelete"}}}
	g.Expect(env.Client.Status().Update(ctx, ec)).To(Succeed())

	reg := startManager(t)
	g.Eventually(reg.Ready, timeout, interval).Should(BeTrue())
	r, ok := reg.Get("hold." + name)
	g.Expect(ok).To(BeTrue())
	g.Expect(r.Hook).To(Equal(hooksv1.BeforeClusterDelete))
	g.Expect(r.FailurePolicy).To(Equal(runtimev1.FailurePolicyFail))
	g.Expect(r.TimeoutSeconds).To(Equal(int32(10)))
	g.Eventually(func(g Gomega) {
		got := &runtimev1.ExtensionConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, got)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(got, "Paused")).To(BeTrue(), "a paused ExtensionConfig says so")
	}, timeout, interval).Should(Succeed())
}

// The schema refuses what upstream's admission webhook refuses, with a message saying what to do.
func TestSchemaRefusesInvalidClientConfigs(t *testing.T) {
	tests := []struct {
		name   string
		config runtimev1.ClientConfig
		want   string
	}{
		{"url and service", runtimev1.ClientConfig{URL: ptr.To("https://ext.example.com"), Service: &runtimev1.ServiceReference{Namespace: "ns", Name: "ext"}},
			"exactly one of url or service must be set"},
		{"neither", runtimev1.ClientConfig{}, "exactly one of url or service must be set"},
		{"http url", runtimev1.ClientConfig{URL: ptr.To("http://ext.example.com")}, "url must be an https:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), &runtimev1.ExtensionConfig{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "invalid-"}, Spec: runtimev1.ExtensionConfigSpec{ClientConfig: tt.config}})
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

// An Extension written for upstream v1.12+ serves the hooks of chained upgrades: it is discovered whole,
// those handlers are registered with the others, and the Discovered condition has nothing to add.
func TestHandlersOfChainedUpgradesAreRegistered(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startManager(t)
	ns := env.NewNamespace(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, holdHandler(&calls))).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse]{
		Hook: hooksv1.GenerateUpgradePlan, Name: "plan",
		Func: func(context.Context, *hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse) {},
	})).To(Succeed())

	name := "chained-" + ns
	create(t, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}})
	g.Eventually(func(g Gomega) {
		ec := &runtimev1.ExtensionConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, ec)).To(Succeed())
		g.Expect(ec.Status.Handlers).To(HaveLen(2))
		c := discovered(g, name)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(runtimev1.ExtensionConfigDiscoveredV1Beta2Reason))
		g.Expect(c.Message).To(BeEmpty())
		_, ok := reg.Get("hold." + name)
		g.Expect(ok).To(BeTrue())
		plan, ok := reg.Get("plan." + name)
		g.Expect(ok).To(BeTrue())
		g.Expect(plan.Hook).To(Equal(hooksv1.GenerateUpgradePlan))
	}, timeout, interval).Should(Succeed())
}

// An Extension written for upstream v1.14 may serve CanUpdateMachineSet, which capstan does not call yet:
// it is discovered whole, its other handlers (CanUpdateMachine and UpdateMachine, called with the
// InPlaceUpdates gate, among them) are registered and called as usual, and the Discovered condition names
// the handlers that are never called.
func TestHandlersOfHooksNotCalledYetAreNamedInTheCondition(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reg := startManager(t)
	ns := env.NewNamespace(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, holdHandler(&calls))).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.CanUpdateMachineSetRequest, *hooksv1.CanUpdateMachineSetResponse]{
		Hook: hooksv1.CanUpdateMachineSet, Name: "can-update-machineset",
		Func: func(context.Context, *hooksv1.CanUpdateMachineSetRequest, *hooksv1.CanUpdateMachineSetResponse) {},
	})).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse]{
		Hook: hooksv1.UpdateMachine, Name: "update-machine",
		Func: func(context.Context, *hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse) {},
	})).To(Succeed())

	name := "inplace-" + ns
	create(t, &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}})
	g.Eventually(func(g Gomega) {
		ec := &runtimev1.ExtensionConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, ec)).To(Succeed())
		g.Expect(ec.Status.Handlers).To(HaveLen(3))
		c := discovered(g, name)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(runtimev1.ExtensionConfigDiscoveredV1Beta2Reason))
		g.Expect(c.Message).To(Equal("Handlers of hooks capstan does not call yet: can-update-machineset." + name + " (CanUpdateMachineSet)"))
		_, ok := reg.Get("hold." + name)
		g.Expect(ok).To(BeTrue(), "the handlers of called hooks are registered")
		update, ok := reg.Get("update-machine." + name)
		g.Expect(ok).To(BeTrue())
		g.Expect(update.Hook).To(Equal(hooksv1.UpdateMachine))
		_, ok = reg.Get("can-update-machineset." + name)
		g.Expect(ok).To(BeTrue(), "the handlers of hooks not called yet are registered too")
	}, timeout, interval).Should(Succeed())
}

func TestUpdateStatus(t *testing.T) {
	handler := func(name, hook string) runtimev1.ExtensionHandler {
		return runtimev1.ExtensionHandler{Name: name, RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: hook}}
	}
	tests := []struct {
		name        string
		handlers    []runtimev1.ExtensionHandler
		failure     error
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{name: "hooks capstan calls", handlers: []runtimev1.ExtensionHandler{handler("hold.ext", "BeforeClusterCreate"), handler("patch.ext", "GeneratePatches")},
			wantStatus: metav1.ConditionTrue, wantReason: "Discovered"},
		{name: "no handler", wantStatus: metav1.ConditionTrue, wantReason: "Discovered"},
		{name: "hooks of chained upgrades", handlers: []runtimev1.ExtensionHandler{
			handler("hold.ext", "BeforeClusterUpgrade"), handler("plan.ext", "GenerateUpgradePlan"), handler("after-workers.ext", "AfterWorkersUpgrade"),
			handler("before-workers.ext", "BeforeWorkersUpgrade"), handler("before-cp.ext", "BeforeControlPlaneUpgrade"), handler("after-cp.ext", "AfterControlPlaneUpgrade"),
		},
			wantStatus: metav1.ConditionTrue, wantReason: "Discovered"},
		{name: "in-place update hooks", handlers: []runtimev1.ExtensionHandler{
			handler("hold.ext", "BeforeClusterCreate"), handler("update.ext", "UpdateMachine"), handler("can-update-ms.ext", "CanUpdateMachineSet"),
			handler("can-update.ext", "CanUpdateMachine"), handler("plan.ext", "GenerateUpgradePlan"),
		},
			wantStatus: metav1.ConditionTrue, wantReason: "Discovered",
			wantMessage: "Handlers of hooks capstan does not call yet: can-update-ms.ext (CanUpdateMachineSet)"},
		{name: "failed discovery", failure: fmt.Errorf("calling https://ext/discovery: connection refused"),
			wantStatus: metav1.ConditionFalse, wantReason: "NotDiscovered", wantMessage: "Calling https://ext/discovery: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &scope{ec: &runtimev1.ExtensionConfig{}, handlers: tt.handlers, failure: tt.failure}
			updateStatus(s)
			c := conditions.GetV1Beta2(s.ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.wantStatus))
			g.Expect(c.Reason).To(Equal(tt.wantReason))
			g.Expect(c.Message).To(Equal(tt.wantMessage))
			if tt.failure == nil {
				g.Expect(s.ec.Status.Handlers).To(Equal(tt.handlers))
			}
		})
	}
}

package client

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/pkg/extension"
)

type beforeCreate = extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]

// blocking is a BeforeClusterCreate handler that answers retryAfterSeconds and a message, and counts its
// calls.
func blocking(name string, retry int32, message string, calls *atomic.Int32, opts ...func(*beforeCreate)) beforeCreate {
	h := beforeCreate{Hook: hooksv1.BeforeClusterCreate, Name: name,
		Func: func(_ context.Context, req *hooksv1.BeforeClusterCreateRequest, resp *hooksv1.BeforeClusterCreateResponse) {
			calls.Add(1)
			resp.RetryAfterSeconds = retry
			resp.Message = message
			if s := req.Settings["echo"]; s != "" {
				resp.Message = message + " settings=" + fmt.Sprint(req.Settings)
			}
		}}
	for _, o := range opts {
		o(&h)
	}
	return h
}

type fixture struct {
	client   *Client
	registry *registry.Registry
}

func newFixture(t *testing.T, namespaces ...*corev1.Namespace) *fixture {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, ns := range namespaces {
		b = b.WithObjects(ns)
	}
	reg := registry.New()
	if err := reg.WarmUp(nil); err != nil {
		t.Fatal(err)
	}
	return &fixture{client: &Client{Registry: reg, Namespaces: b.Build()}, registry: reg}
}

// register discovers an ExtensionConfig of ext and registers its handlers, as the controller does.
func (f *fixture) register(t *testing.T, name string, ext *runtimetest.Extension, mutate ...func(*runtimev1.ExtensionConfig)) {
	t.Helper()
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}}
	for _, m := range mutate {
		m(ec)
	}
	handlers, err := f.client.Discover(context.Background(), ec)
	if err != nil {
		t.Fatalf("discovering %s: %v", name, err)
	}
	ec.Status.Handlers = handlers
	if err := f.registry.Add(ec); err != nil {
		t.Fatal(err)
	}
}

func cluster(namespace string) *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "c1"}}
}

func callBeforeCreate(f *fixture, namespace string, settings map[string]string) (*hooksv1.BeforeClusterCreateResponse, error) {
	c := cluster(namespace)
	req := &hooksv1.BeforeClusterCreateRequest{Cluster: *c}
	req.Settings = settings
	resp := &hooksv1.BeforeClusterCreateResponse{}
	err := f.client.CallAll(context.Background(), hooksv1.BeforeClusterCreate, c, req, resp)
	return resp, err
}

func TestDiscoverNamesAndDefaultsHandlers(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, blocking("hold", 0, "", &calls))).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, blocking("lenient", 0, "", &calls, func(h *beforeCreate) {
		h.TimeoutSeconds, h.FailurePolicy = ptr.To[int32](3), ptr.To(hooksv1.FailurePolicyIgnore)
	}))).To(Succeed())

	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext1"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA}}}
	handlers, err := f.client.Discover(context.Background(), ec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(handlers).To(Equal([]runtimev1.ExtensionHandler{
		{Name: "hold.ext1", RequestHook: runtimev1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"},
			TimeoutSeconds: ptr.To[int32](10), FailurePolicy: ptr.To(runtimev1.FailurePolicyFail)},
		{Name: "lenient.ext1", RequestHook: runtimev1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterCreate"},
			TimeoutSeconds: ptr.To[int32](3), FailurePolicy: ptr.To(runtimev1.FailurePolicyIgnore)},
	}))
}

// The hooks of chained upgrades (upstream v1.12) are discovered like the others, and their handlers can
// be called: the request carries the plan's fields, the response the plan, and AfterWorkersUpgrade's
// retryAfterSeconds is aggregated as every blocking hook's.
func TestHooksOfChainedUpgradesAreDiscoveredAndCalled(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	ext := runtimetest.Start(t)
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse]{
		Hook: hooksv1.GenerateUpgradePlan, Name: "plan",
		Func: func(_ context.Context, req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
			resp.Message = req.FromControlPlaneKubernetesVersion + " " + req.FromWorkersKubernetesVersion + " " + req.ToKubernetesVersion
			resp.ControlPlaneUpgrades = []hooksv1.UpgradeStep{{Version: "v1.31.4"}, {Version: "v1.32.2"}}
		},
	})).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.AfterWorkersUpgradeRequest, *hooksv1.AfterWorkersUpgradeResponse]{
		Hook: hooksv1.AfterWorkersUpgrade, Name: "after-workers",
		Func: func(_ context.Context, req *hooksv1.AfterWorkersUpgradeRequest, resp *hooksv1.AfterWorkersUpgradeResponse) {
			resp.RetryAfterSeconds = 7
			resp.Message = fmt.Sprintf("%s %v %v", req.KubernetesVersion, req.ControlPlaneUpgrades, req.WorkersUpgrades)
		},
	})).To(Succeed())
	f.register(t, "ext1", ext)
	_, ok := f.registry.Get("plan.ext1")
	g.Expect(ok).To(BeTrue())

	c := cluster("default")
	plan := &hooksv1.GenerateUpgradePlanResponse{}
	err := f.client.Call(context.Background(), hooksv1.GenerateUpgradePlan, "plan.ext1", c, &hooksv1.GenerateUpgradePlanRequest{
		Cluster: *c, FromControlPlaneKubernetesVersion: "v1.30.1", FromWorkersKubernetesVersion: "v1.29.3", ToKubernetesVersion: "v1.32.2",
	}, plan)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Message).To(Equal("v1.30.1 v1.29.3 v1.32.2"))
	g.Expect(plan.ControlPlaneUpgrades).To(Equal([]hooksv1.UpgradeStep{{Version: "v1.31.4"}, {Version: "v1.32.2"}}))
	g.Expect(plan.WorkersUpgrades).To(BeEmpty())

	after := &hooksv1.AfterWorkersUpgradeResponse{}
	err = f.client.CallAll(context.Background(), hooksv1.AfterWorkersUpgrade, c, &hooksv1.AfterWorkersUpgradeRequest{
		Cluster: *c, KubernetesVersion: "v1.31.4",
		ControlPlaneUpgrades: []hooksv1.UpgradeStepInfo{{Version: "v1.32.2"}}, WorkersUpgrades: []hooksv1.UpgradeStepInfo{{Version: "v1.32.2"}},
	}, after)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.RetryAfterSeconds).To(Equal(int32(7)))
	g.Expect(after.Message).To(Equal("v1.31.4 [{v1.32.2}] [{v1.32.2}]"))
}

// The in-place update hooks (upstream v1.14) are discovered like the others, and their handlers can be
// called, though capstan does not call them yet: the request carries the Machine and the provider's
// objects, the response the patches, and UpdateMachine's retryAfterSeconds is aggregated as every
// blocking hook's.
func TestInPlaceUpdateHooksAreDiscoveredAndCanBeCalled(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	ext := runtimetest.Start(t)
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
		Hook: hooksv1.CanUpdateMachine, Name: "can-update",
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
			resp.Message = req.Current.Machine.Spec.Version + " " + req.Desired.Machine.Spec.Version + " " + string(req.Desired.InfrastructureMachine.Raw)
			resp.MachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONPatchType,
				Patch: []byte(`[{"op":"replace","path":"/spec/version","value":"` + req.Desired.Machine.Spec.Version + `"}]`)}
		},
	})).To(Succeed())
	g.Expect(extension.AddHandler(ext.Server, extension.Handler[*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse]{
		Hook: hooksv1.UpdateMachine, Name: "update",
		Func: func(_ context.Context, req *hooksv1.UpdateMachineRequest, resp *hooksv1.UpdateMachineResponse) {
			resp.RetryAfterSeconds = 5
			resp.Message = "updating " + req.Desired.Machine.Name
		},
	})).To(Succeed())
	f.register(t, "ext1", ext)
	reg, ok := f.registry.Get("can-update.ext1")
	g.Expect(ok).To(BeTrue())
	g.Expect(reg.Hook).To(Equal(hooksv1.CanUpdateMachine))

	machine := func(version string) clusterv1beta2.Machine {
		return clusterv1beta2.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "m1"}, Spec: clusterv1beta2.MachineSpec{ClusterName: "c1", Version: version}}
	}
	current, desired := machine("v1.33.0"), machine("v1.33.1")
	can := &hooksv1.CanUpdateMachineResponse{}
	err := f.client.Call(context.Background(), hooksv1.CanUpdateMachine, "can-update.ext1", &desired, &hooksv1.CanUpdateMachineRequest{
		Current: hooksv1.CanUpdateMachineRequestObjects{Machine: current, InfrastructureMachine: runtime.RawExtension{Raw: []byte(`{"kind":"DevMachine"}`)}},
		Desired: hooksv1.CanUpdateMachineRequestObjects{Machine: desired, InfrastructureMachine: runtime.RawExtension{Raw: []byte(`{"kind":"DevMachine"}`)}},
	}, can)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(can.Message).To(Equal(`v1.33.0 v1.33.1 {"kind":"DevMachine"}`))
	g.Expect(can.MachinePatch).To(Equal(hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: []byte(`[{"op":"replace","path":"/spec/version","value":"v1.33.1"}]`)}))
	g.Expect(can.InfrastructureMachinePatch.IsDefined()).To(BeFalse())
	g.Expect(can.BootstrapConfigPatch.IsDefined()).To(BeFalse())

	update := &hooksv1.UpdateMachineResponse{}
	err = f.client.CallAll(context.Background(), hooksv1.UpdateMachine, &desired, &hooksv1.UpdateMachineRequest{
		Desired: hooksv1.UpdateMachineRequestObjects{Machine: desired, InfrastructureMachine: runtime.RawExtension{Raw: []byte(`{"kind":"DevMachine"}`)}},
	}, update)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(update.RetryAfterSeconds).To(Equal(int32(5)))
	g.Expect(update.Message).To(Equal("updating m1"))
}

// A discovery that fails says why, in the same words at every attempt.
func TestDiscoveryFailuresSayWhatFailed(t *testing.T) {
	good := runtimetest.Start(t)
	other := runtimetest.Start(t)
	plainHTTP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	t.Cleanup(plainHTTP.Close)
	badJSON := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>not json")) }))
	t.Cleanup(badJSON.Close)
	notFound := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	failure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryResponse","status":"Failure","message":"not configured"}`))
	}))
	t.Cleanup(failure.Close)
	invalid := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryResponse","status":"Success",
			"handlers":[{"name":"Bad_Name","requestHook":{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","hook":"BeforeMachineCreate"},"timeoutSeconds":60}]}`))
	}))
	t.Cleanup(invalid.Close)

	tests := []struct {
		name   string
		config runtimev1.ClientConfig
		want   []string
	}{
		{"wrong CA", runtimev1.ClientConfig{URL: ptr.To(good.URL), CABundle: other.CA},
			[]string{"calling " + good.URL + "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", "the server's certificate is not signed by the CA of spec.clientConfig.caBundle"}},
		{"no CA", runtimev1.ClientConfig{URL: ptr.To(good.URL)},
			[]string{"not signed by a CA the manager trusts: set spec.clientConfig.caBundle or the runtime.cluster.x-k8s.io/inject-ca-from-secret annotation"}},
		{"connection refused", runtimev1.ClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d", runtimetest.FreePort(t))), CABundle: good.CA},
			[]string{"connection refused: no Extension server listens there"}},
		{"plain HTTP", runtimev1.ClientConfig{URL: ptr.To(strings.Replace(plainHTTP.URL, "http:", "https:", 1)), CABundle: good.CA},
			[]string{"the server does not speak TLS"}},
		{"bad JSON", runtimev1.ClientConfig{URL: ptr.To(badJSON.URL), CABundle: runtimetest.CAOf(badJSON)},
			[]string{"the response is not a DiscoveryResponse: invalid character '<'"}},
		{"HTTP 404", runtimev1.ClientConfig{URL: ptr.To(notFound.URL), CABundle: runtimetest.CAOf(notFound)},
			[]string{"the server answered HTTP 404"}},
		{"failure response", runtimev1.ClientConfig{URL: ptr.To(failure.URL), CABundle: runtimetest.CAOf(failure)},
			[]string{"the Extension server answered discovery with a failure: not configured"}},
		{"invalid handlers", runtimev1.ClientConfig{URL: ptr.To(invalid.URL), CABundle: runtimetest.CAOf(invalid)},
			[]string{`handler name "Bad_Name" is not valid`, `"BeforeMachineCreate" is not a Runtime Hook`, "timeoutSeconds 60 must be between 0 and 30"}},
		{"http URL", runtimev1.ClientConfig{URL: ptr.To("http://127.0.0.1:1")}, []string{`must use https`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture(t)
			ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"}, Spec: runtimev1.ExtensionConfigSpec{ClientConfig: tt.config}}
			_, err := f.client.Discover(context.Background(), ec)
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
			_, again := f.client.Discover(context.Background(), ec)
			g.Expect(again).To(MatchError(err.Error()), "the message is the same at every attempt")
		})
	}
}

func TestDiscoveryTimesOut(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	slow := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	f := newFixture(t)
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(slow.URL), CABundle: runtimetest.CAOf(slow)}}}
	_, err := f.client.Discover(context.Background(), ec)
	g.Expect(err).To(MatchError(ContainSubstring("no response within 10s")))
}

func TestCallAllAggregatesBlockingResponses(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	var a, b, c atomic.Int32
	extA := runtimetest.Start(t)
	g.Expect(extension.AddHandler(extA.Server, blocking("hold", 10, "a waits", &a))).To(Succeed())
	extB := runtimetest.Start(t)
	g.Expect(extension.AddHandler(extB.Server, blocking("hold", 5, "b waits", &b))).To(Succeed())
	g.Expect(extension.AddHandler(extB.Server, blocking("go", 0, "", &c))).To(Succeed())
	f.register(t, "ext-a", extA)
	f.register(t, "ext-b", extB)

	resp, err := callBeforeCreate(f, "default", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusSuccess))
	g.Expect(resp.RetryAfterSeconds).To(Equal(int32(5)), "the shortest non-zero retryAfterSeconds wins")
	g.Expect(resp.Message).To(Equal("a waits, b waits"))
	g.Expect([]int32{a.Load(), b.Load(), c.Load()}).To(Equal([]int32{1, 1, 1}))
}

func TestCallAllFailurePolicy(t *testing.T) {
	down := fmt.Sprintf("https://127.0.0.1:%d", runtimetest.FreePort(t))
	tests := []struct {
		name    string
		policy  hooksv1.FailurePolicy
		answer  hooksv1.ResponseStatus
		down    bool
		wantErr []string
	}{
		{name: "Ignore: an unreachable handler is skipped", policy: hooksv1.FailurePolicyIgnore, down: true},
		{name: "Fail: an unreachable handler fails the hook, naming the handler and its ExtensionConfig", policy: hooksv1.FailurePolicyFail, down: true,
			wantErr: []string{`BeforeClusterCreate handler "hold.ext1" of ExtensionConfig ext1 failed: calling ` + down, "connection refused"}},
		{name: "Ignore does not ignore a Failure answer", policy: hooksv1.FailurePolicyIgnore, answer: hooksv1.ResponseStatusFailure,
			wantErr: []string{`handler "hold.ext1" of ExtensionConfig ext1 failed: the handler answered with a failure: no quota`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture(t)
			ext := runtimetest.Start(t)
			var calls atomic.Int32
			g.Expect(extension.AddHandler(ext.Server, blocking("hold", 0, "", &calls, func(h *beforeCreate) {
				h.FailurePolicy = ptr.To(tt.policy)
				if tt.answer == hooksv1.ResponseStatusFailure {
					h.Func = func(_ context.Context, _ *hooksv1.BeforeClusterCreateRequest, resp *hooksv1.BeforeClusterCreateResponse) {
						resp.Status, resp.Message = hooksv1.ResponseStatusFailure, "no quota"
					}
				}
			}))).To(Succeed())
			f.register(t, "ext1", ext, func(ec *runtimev1.ExtensionConfig) {
				if tt.down {
					// Discovered where it was, called where nothing listens any more.
					ec.Status.Handlers = nil
				}
			})
			if tt.down {
				reg, _ := f.registry.Get("hold.ext1")
				ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext1"},
					Spec:   runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(down), CABundle: ext.CA}},
					Status: runtimev1.ExtensionConfigStatus{Handlers: []runtimev1.ExtensionHandler{{Name: reg.Name, RequestHook: runtimev1.GroupVersionHook{APIVersion: reg.APIVersion, Hook: string(reg.Hook)}, FailurePolicy: ptr.To(reg.FailurePolicy)}}}}
				g.Expect(f.registry.Add(ec)).To(Succeed())
			}
			resp, err := callBeforeCreate(f, "default", nil)
			if len(tt.wantErr) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusSuccess))
				g.Expect(resp.RetryAfterSeconds).To(BeZero())
				return
			}
			g.Expect(err).To(HaveOccurred())
			var handlerErr *HandlerError
			g.Expect(errors.As(err, &handlerErr)).To(BeTrue())
			g.Expect(handlerErr.ExtensionConfig).To(Equal("ext1"))
			for _, w := range tt.wantErr {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}

func TestCallAllHonoursNamespaceSelectorSettingsAndTimeout(t *testing.T) {
	g := NewWithT(t)
	prod := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"env": "prod"}}}
	dev := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", Labels: map[string]string{"env": "dev"}}}
	f := newFixture(t, prod, dev)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, blocking("hold", 7, "held", &calls))).To(Succeed())
	f.register(t, "prod-only", ext, func(ec *runtimev1.ExtensionConfig) {
		ec.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		ec.Spec.Settings = map[string]string{"echo": "yes", "region": "eu"}
	})

	resp, err := callBeforeCreate(f, "dev", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.RetryAfterSeconds).To(BeZero(), "the handler is not called for a Cluster in dev")
	g.Expect(calls.Load()).To(BeZero())

	resp, err = callBeforeCreate(f, "prod", map[string]string{"region": "us"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.RetryAfterSeconds).To(Equal(int32(7)))
	g.Expect(resp.Message).To(Equal("held settings=map[echo:yes region:us]"), "the call's settings override the ExtensionConfig's")

	// A handler slower than its timeoutSeconds fails the call.
	slowExt := runtimetest.Start(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	g.Expect(extension.AddHandler(slowExt.Server, blocking("slow", 0, "", &calls, func(h *beforeCreate) {
		h.TimeoutSeconds = ptr.To[int32](1)
		// It answers only when the test ends, whatever its context says, so that its answer can
		// never reach the client before the client's own timeout fires.
		h.Func = func(context.Context, *hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse) {
			<-release
		}
	}))).To(Succeed())
	f.register(t, "slow", slowExt)
	_, err = callBeforeCreate(f, "dev", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`handler "slow.slow" of ExtensionConfig slow failed`)))
	g.Expect(err).To(MatchError(ContainSubstring("no response within 1s")))
}

func TestCallsBeforeWarmUpAreRefused(t *testing.T) {
	g := NewWithT(t)
	c := &Client{Registry: registry.New()}
	resp := &hooksv1.BeforeClusterDeleteResponse{}
	err := c.CallAll(context.Background(), hooksv1.BeforeClusterDelete, cluster("default"), &hooksv1.BeforeClusterDeleteRequest{}, resp)
	g.Expect(err).To(MatchError(ErrNotReady))
}

func TestURL(t *testing.T) {
	tests := []struct {
		name   string
		config runtimev1.ClientConfig
		want   string
	}{
		{"service with the default port", runtimev1.ClientConfig{Service: &runtimev1.ServiceReference{Namespace: "ns", Name: "ext"}},
			"https://ext.ns.svc:443/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/hold"},
		{"service with port and path", runtimev1.ClientConfig{Service: &runtimev1.ServiceReference{Namespace: "ns", Name: "ext", Port: ptr.To[int32](9443), Path: ptr.To("/prefix")}},
			"https://ext.ns.svc:9443/prefix/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/hold"},
		{"url with a path", runtimev1.ClientConfig{URL: ptr.To("https://ext.example.com:8443/base/")},
			"https://ext.example.com:8443/base/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			u, err := URL(tt.config, hooksv1.BeforeClusterCreate, "Hold")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(u.String()).To(Equal(tt.want))
		})
	}
	_, err := URL(runtimev1.ClientConfig{URL: ptr.To("https://user:pw@ext.example.com")}, hooksv1.Discovery, "")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("must have no user, query or fragment")))
}

// An Extension that asks for a client certificate gets the one of CertFile and KeyFile.
func TestClientCertificate(t *testing.T) {
	g := NewWithT(t)
	clientCA, err := pki.NewCA("clients")
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := clientCA.Sign(pki.CertConfig{CommonName: "capi-manager", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	key, err := pki.EncodeKey(pair.Key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.crt"), pair.CertPEM(), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)).To(Succeed())

	srv := httptest.NewUnstartedServer(extension.NewServer(extension.Options{}))
	pool := x509.NewCertPool()
	pool.AddCert(clientCA.Cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "mtls"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(srv.URL), CABundle: runtimetest.CAOf(srv)}}}

	_, err = (&Client{Registry: registry.New()}).Discover(context.Background(), ec)
	g.Expect(err).To(HaveOccurred(), "no client certificate")
	_, err = (&Client{Registry: registry.New(), CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}).Discover(context.Background(), ec)
	g.Expect(err).NotTo(HaveOccurred())
}

// A handler whose timeoutSeconds is 0 is called with upstream's default of 10 seconds, not without a
// deadline: a stalled Extension server cannot hold the caller.
func TestZeroTimeoutIsTenSeconds(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t)
	release := make(chan struct{})
	var timeouts []string
	var mu sync.Mutex
	stalled := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		timeouts = append(timeouts, r.URL.Query().Get("timeout"))
		mu.Unlock()
		<-release
	}))
	t.Cleanup(func() { close(release); stalled.Close() })
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "stalled"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(stalled.URL), CABundle: runtimetest.CAOf(stalled)}},
		Status: runtimev1.ExtensionConfigStatus{Handlers: []runtimev1.ExtensionHandler{{Name: "hold.stalled",
			RequestHook:    runtimev1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: string(hooksv1.BeforeClusterCreate)},
			TimeoutSeconds: ptr.To[int32](0), FailurePolicy: ptr.To(runtimev1.FailurePolicyFail)}}}}
	g.Expect(f.registry.Add(ec)).To(Succeed())

	start := time.Now()
	_, err := callBeforeCreate(f, "default", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`handler "hold.stalled" of ExtensionConfig stalled failed`)))
	g.Expect(err).To(MatchError(ContainSubstring("no response within 10s")))
	g.Expect(time.Since(start)).To(BeNumerically("<", 60*time.Second))
	mu.Lock()
	defer mu.Unlock()
	g.Expect(timeouts).To(Equal([]string{"10s"}))
}

// A call follows a redirect on the Extension server's host, never one to another host.
func TestRedirects(t *testing.T) {
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	g.Expect(extension.AddHandler(ext.Server, blocking("hold", 0, "", &calls))).To(Succeed())
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(100) }))
	t.Cleanup(other.Close)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/away/"):
			http.Redirect(w, r, other.URL+strings.TrimPrefix(r.URL.Path, "/away"), http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/here/"):
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/here"), http.StatusTemporaryRedirect)
		default:
			ext.Server.ServeHTTP(w, r)
		}
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := runtimetest.CAOf(srv)

	f := newFixture(t)
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "here"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(srv.URL + "/here"), CABundle: ca}}}
	handlers, err := f.client.Discover(context.Background(), ec)
	g.Expect(err).NotTo(HaveOccurred(), "a redirect on the same host is followed")
	g.Expect(handlers).To(HaveLen(1))

	ec = &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "away"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(srv.URL + "/away"), CABundle: ca}}}
	_, err = f.client.Discover(context.Background(), ec)
	g.Expect(err).To(MatchError(ContainSubstring("the server at " + srv.URL + " redirects to " + other.URL + "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery, another host: redirects to other hosts are not followed")))
	g.Expect(calls.Load()).To(BeZero(), "the other host was never called")
}

func TestResponseSizeLimit(t *testing.T) {
	g := NewWithT(t)
	big := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryResponse","status":"Success","message":"` + strings.Repeat("x", 4096) + `"}`))
	}))
	t.Cleanup(big.Close)
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(big.URL), CABundle: runtimetest.CAOf(big)}}}
	_, err := (&Client{Registry: registry.New(), Limits: httpclient.Limits{MaxResponseBytes: 1024}}).Discover(context.Background(), ec)
	g.Expect(err).To(MatchError(ContainSubstring("the response is larger than 1024 bytes (--runtime-extension-max-response-size)")))
	_, err = (&Client{Registry: registry.New()}).Discover(context.Background(), ec)
	g.Expect(err).NotTo(HaveOccurred(), "within the default limit")
}

// The clients kept per CA bundle are bounded: the least recently used goes.
func TestTransportsAreBounded(t *testing.T) {
	g := NewWithT(t)
	var tr transports
	var first []byte
	for i := range maxTransports + 10 {
		ca, err := pki.NewCA(fmt.Sprintf("ca-%d", i))
		g.Expect(err).NotTo(HaveOccurred())
		if i == 0 {
			first = ca.CertPEM()
		}
		c, err := tr.get(ca.CertPEM(), nil, nil, DefaultLimits)
		g.Expect(err).NotTo(HaveOccurred())
		again, err := tr.get(ca.CertPEM(), nil, nil, DefaultLimits)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(BeIdenticalTo(c), "a bundle's client is reused")
	}
	g.Expect(tr.clients.Len()).To(Equal(maxTransports))
	g.Expect(tr.clients.Contains(sha256.Sum256(first))).To(BeFalse(), "the least recently used went")
}

package controllermanager_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

// TestMain starts the API server without envtest.Run, which sets controller-runtime's logger: the tests of
// this package set it themselves (Options.SetupLogging) and read what the managers log, and controller-runtime
// takes only the first logger set.
func TestMain(m *testing.M) {
	e, err := envtest.Start(envtest.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API server: %v\n", err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "Stopping the test API server: %v\n", err)
	}
	os.Exit(code)
}

// TestDiagnosticsEndpoint runs a manager as the core provider's ServiceAccount, with the RBAC of the core's
// manifests, and calls its diagnostics endpoint as the Cluster API book does: with a token of the
// ServiceAccount the book's ClusterRoles are bound to, with a token of a ServiceAccount without them, and
// without a token.
func TestDiagnosticsEndpoint(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	identities := installProviders(t)
	applyBookRBAC(t)
	allowed := token(t, "default", "default")
	ns := env.NewNamespace(t)
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nobody"}})).To(Succeed())
	denied := token(t, ns, "nobody")

	logs := &syncBuffer{}
	addr := freeAddr(t)
	startManager(t, identities["cluster-api"], logs, "--diagnostics-address="+addr, "--tls-min-version=VersionTLS13")
	base := "https://" + addr

	t.Run("metrics", func(t *testing.T) {
		g := NewWithT(t)
		code, body := call(t, http.MethodGet, base+"/metrics", allowed, "")
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring("rest_client_requests_total"), "controller-runtime's metrics are served")
		code, body = call(t, http.MethodGet, base+"/metrics", denied, "")
		g.Expect(code).To(Equal(http.StatusForbidden), body)
		g.Expect(body).To(ContainSubstring("Authorization denied for user system:serviceaccount:" + ns + ":nobody"))
		code, body = call(t, http.MethodGet, base+"/metrics", "", "")
		g.Expect(code).To(Equal(http.StatusUnauthorized), body)
		// controller-runtime's filter answers a token the API server rejects with 500, as upstream's managers.
		code, body = call(t, http.MethodGet, base+"/metrics", "not-a-token", "")
		g.Expect(code).To(BeNumerically(">=", 400))
		g.Expect(body).To(ContainSubstring("Authentication failed"))
	})

	t.Run("pprof", func(t *testing.T) {
		g := NewWithT(t)
		code, body := call(t, http.MethodGet, base+"/debug/pprof/goroutine?debug=2", allowed, "")
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring("goroutine "), "a goroutine dump")
		code, body = call(t, http.MethodGet, base+"/debug/pprof/", allowed, "")
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring("heap"), "the index lists the profiles")
		code, _ = call(t, http.MethodGet, base+"/debug/pprof/profile?seconds=1", allowed, "")
		g.Expect(code).To(Equal(http.StatusOK), "a CPU profile")
		code, _ = call(t, http.MethodGet, base+"/debug/pprof/goroutine", denied, "")
		g.Expect(code).To(Equal(http.StatusForbidden))
	})

	t.Run("log verbosity", func(t *testing.T) {
		g := NewWithT(t)
		log := ctrl.Log.WithName("diagnostics-test")
		log.V(4).Info("Before the change")
		log.Info("Marker")
		g.Eventually(logs.String).Should(ContainSubstring("Marker"))
		g.Expect(logs.String()).NotTo(ContainSubstring("Before the change"), "verbosity 4 is not logged at -v=0")

		code, body := call(t, http.MethodPut, base+"/debug/flags/v", denied, "4")
		g.Expect(code).To(Equal(http.StatusForbidden), body)
		code, body = call(t, http.MethodGet, base+"/debug/flags/v", allowed, "")
		g.Expect(code).To(Equal(http.StatusForbidden), "the book's role allows put, not get: %s", body)
		code, body = call(t, http.MethodPut, base+"/debug/flags/v", allowed, "ten")
		g.Expect(code).To(Equal(http.StatusBadRequest), body)
		g.Expect(body).To(ContainSubstring(`invalid log verbosity "ten"`))
		log.V(4).Info("Still quiet")

		code, body = call(t, http.MethodPut, base+"/debug/flags/v", allowed, "4")
		g.Expect(code).To(Equal(http.StatusOK), body)
		log.V(4).Info("After the change")
		g.Eventually(logs.String).Should(ContainSubstring("After the change"))
		g.Expect(logs.String()).NotTo(ContainSubstring("Still quiet"))

		code, body = call(t, http.MethodPut, base+"/debug/flags/v", allowed, "0")
		g.Expect(code).To(Equal(http.StatusOK), body)
		log.V(4).Info("Quiet again")
		log.Info("Second marker")
		g.Eventually(logs.String).Should(ContainSubstring("Second marker"))
		g.Expect(logs.String()).NotTo(ContainSubstring("Quiet again"))
	})

	t.Run("TLS", func(t *testing.T) {
		g := NewWithT(t)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}}} //nolint:gosec // The endpoint's certificate is self-signed.
		_, err := c.Get(base + "/metrics")
		g.Expect(err).To(HaveOccurred(), "--tls-min-version=VersionTLS13 refuses TLS 1.2")
		code, body := call(t, http.MethodGet, "http://"+addr+"/metrics", "", "")
		g.Expect(code).To(Equal(http.StatusBadRequest), "plain HTTP is not served: %s", body)
	})
}

// TestInsecureDiagnostics: with --insecure-diagnostics metrics are served over HTTP to anyone, and pprof
// and the log level are not served at all; the deprecated --metrics-bind-addr still serves plain metrics,
// and 0 turns them off.
func TestInsecureDiagnostics(t *testing.T) {
	identities := installProviders(t)
	tests := []struct {
		name string
		args func(addr string) []string
		// served is false when nothing must listen on addr.
		served bool
	}{
		{name: "insecure diagnostics", args: func(a string) []string { return []string{"--diagnostics-address=" + a, "--insecure-diagnostics"} }, served: true},
		{name: "metrics-bind-addr", args: func(a string) []string {
			return []string{"--metrics-bind-addr=" + a, "--diagnostics-address=" + freeAddr(t)}
		}, served: true},
		{name: "metrics-bind-addr 0", args: func(a string) []string { return []string{"--metrics-bind-addr=0", "--diagnostics-address=" + a} }},
		{name: "diagnostics-address 0", args: func(string) []string { return []string{"--diagnostics-address=0"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			addr := freeAddr(t)
			startManager(t, identities["cluster-api"], io.Discard, tt.args(addr)...)
			if !tt.served {
				g.Consistently(func() error {
					_, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // A test.
					return err
				}, 2*time.Second, 200*time.Millisecond).Should(HaveOccurred(), "nothing listens on %s", addr)
				return
			}
			base := "http://" + addr
			code, body := call(t, http.MethodGet, base+"/metrics", "", "")
			g.Expect(code).To(Equal(http.StatusOK), body)
			g.Expect(body).To(ContainSubstring("rest_client_requests_total"))
			code, _ = call(t, http.MethodGet, base+"/debug/pprof/", "", "")
			g.Expect(code).To(Equal(http.StatusNotFound), "pprof is not served")
			code, _ = call(t, http.MethodGet, base+"/debug/pprof/goroutine?debug=2", "", "")
			g.Expect(code).To(Equal(http.StatusNotFound), "pprof is not served")
			code, _ = call(t, http.MethodPut, base+"/debug/flags/v", "", "8")
			g.Expect(code).To(Equal(http.StatusNotFound), "the log level cannot be changed")
		})
	}
}

// TestProvidersRBAC: every provider's manager, running as its ServiceAccount with the RBAC of its
// components, can authenticate and authorize the callers of its diagnostics endpoint; and every
// provider's Deployment serves it as upstream's do (the same flags, variables and port name).
func TestProvidersRBAC(t *testing.T) {
	identities := installProviders(t)
	applyBookRBAC(t)
	allowed := token(t, "default", "default")
	g := NewWithT(t)
	g.Expect(identities).To(HaveKey("cluster-api"))
	g.Expect(identities).To(HaveKey("bootstrap-kubeadm"))
	g.Expect(identities).To(HaveKey("control-plane-kubeadm"))
	g.Expect(identities).To(HaveKey("infrastructure-local"))
	for name, id := range identities {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := id.container
			g.Expect(c.Args).To(ContainElements("--diagnostics-address=${CAPI_DIAGNOSTICS_ADDRESS:=:8443}", "--insecure-diagnostics=${CAPI_INSECURE_DIAGNOSTICS:=false}"))
			g.Expect(c.Ports).To(ContainElement(corev1.ContainerPort{Name: "metrics", ContainerPort: 8443, Protocol: corev1.ProtocolTCP}))
			for _, a := range c.Args {
				g.Expect(a).NotTo(HavePrefix("--metrics-bind-addr"), "the deprecated flag would replace the secure endpoint")
			}

			addr := freeAddr(t)
			startManager(t, id, io.Discard, "--diagnostics-address="+addr)
			code, body := call(t, http.MethodGet, "https://"+addr+"/metrics", allowed, "")
			g.Expect(code).To(Equal(http.StatusOK), "%s's ServiceAccount may create TokenReviews and SubjectAccessReviews: %s", name, body)
		})
	}
}

// identity is a provider's manager: its ServiceAccount and its container.
type identity struct {
	namespace, serviceAccount string
	container                 corev1.Container
}

var installOnce = sync.OnceValues(func() (map[string]identity, error) {
	ctx := context.Background()
	providers, err := release.Providers()
	if err != nil {
		return nil, err
	}
	out := map[string]identity{}
	for _, p := range providers {
		data, err := p.Components(release.DefaultVersion)
		if err != nil {
			return nil, err
		}
		objs, err := decode(data)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			switch u.GetKind() {
			case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				if err := env.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
					return nil, fmt.Errorf("%s: creating %s %s: %w", p.Name, u.GetKind(), u.GetName(), err)
				}
			case "Deployment":
				d := struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				}{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
					return nil, err
				}
				out[p.Label()] = identity{namespace: u.GetNamespace(), serviceAccount: d.Spec.Template.Spec.ServiceAccountName, container: d.Spec.Template.Spec.Containers[0]}
			}
		}
	}
	return out, aggregateClusterRoles(ctx)
})

// installProviders creates the Namespaces and RBAC of every provider's components, once.
func installProviders(t *testing.T) map[string]identity {
	t.Helper()
	ids, err := installOnce()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// aggregateClusterRoles does what kube-controller-manager's aggregation controller does, which the test
// API server lacks: it fills the rules of ClusterRoles with an aggregationRule.
func aggregateClusterRoles(ctx context.Context) error {
	roles := &rbacv1.ClusterRoleList{}
	if err := env.Client.List(ctx, roles); err != nil {
		return err
	}
	for i := range roles.Items {
		agg := &roles.Items[i]
		if agg.AggregationRule == nil {
			continue
		}
		agg.Rules = nil
		for _, sel := range agg.AggregationRule.ClusterRoleSelectors {
			s, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil {
				return err
			}
			for _, r := range roles.Items {
				if r.Name != agg.Name && s.Matches(labels.Set(r.Labels)) {
					agg.Rules = append(agg.Rules, r.Rules...)
				}
			}
		}
		if err := env.Client.Update(ctx, agg); err != nil {
			return err
		}
	}
	return nil
}

var bookOnce = sync.OnceValue(func() error {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/book-rbac.yaml")
	if err != nil {
		return err
	}
	objs, err := decode(data)
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := env.Client.Create(ctx, u); err != nil {
			return err
		}
	}
	// kube-controller-manager creates every namespace's default ServiceAccount; the test API server has none.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "default"}}
	if err := env.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
})

// applyBookRBAC creates the book's ClusterRoles and bindings for default/default, once.
func applyBookRBAC(t *testing.T) {
	t.Helper()
	if err := bookOnce(); err != nil {
		t.Fatal(err)
	}
}

// token returns a token of a ServiceAccount, as `kubectl create token` does.
func token(t *testing.T, namespace, name string) string {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := env.Client.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatalf("creating a token of %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// startManager starts a manager with args, authenticated as id's ServiceAccount; it stops with the test.
func startManager(t *testing.T, id identity, logs io.Writer, args ...string) {
	t.Helper()
	g := NewWithT(t)
	o := controllermanager.DefaultOptions("test-diagnostics")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	g.Expect(fs.Parse(append([]string{"--health-addr=0"}, args...))).To(Succeed())
	o.SetupLogging(logs)

	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = token(t, id.namespace, id.serviceAccount)
	run(t, o, cfg)
}

// run builds a manager with options o for cfg and runs it until the test ends.
func run(t *testing.T, o *controllermanager.Options, cfg *rest.Config) ctrl.Manager {
	t.Helper()
	return runWith(t, o, cfg, nil)
}

// runWith is run, calling setup (when not nil) on the manager before it starts.
func runWith(t *testing.T, o *controllermanager.Options, cfg *rest.Config, setup func(ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	mgr, err := o.New(cfg, env.Scheme)
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	if setup != nil {
		if err := setup(mgr); err != nil {
			t.Fatalf("setting up the manager: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	// Wait until the manager has started: until its caches reported they synced, tests must not start
	// informers through its client. controller-runtime's manager waits for its cache's first sync with no
	// end, even once stopped; an informer of a kind the test's user may not list, started at that moment,
	// never syncs, and the manager would never return from Start.
	select {
	case <-mgr.Elected():
	case err := <-done:
		done <- err
		t.Fatalf("the manager stopped while starting: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the manager did not start within a minute")
	}
	return mgr
}

// call sends a request with a bearer token (none when empty) and returns the status code and body; it
// waits for the server to listen. The endpoint's certificate is self-signed and not verified, as the
// book's curl -k.
func call(t *testing.T, method, url, bearer, body string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // Self-signed, as upstream's.
	var code int
	var out string
	NewWithT(t).Eventually(func() error {
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		if err != nil {
			return err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		code, out = resp.StatusCode, string(data)
		return nil
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	return code, out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's writes and the test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

package clustercache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/scrape"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// startClusterCache runs a ClusterCache in a manager whose cache only sees namespace ns.
func startClusterCache(t *testing.T, ns string, opts Options) *ClusterCache {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                server.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cc := &ClusterCache{Options: opts}
	ctx, cancel := context.WithCancel(context.Background())
	if err := cc.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return cc
}

// createCluster creates a Cluster and its kubeconfig Secret pointing at cfg.
func createCluster(t *testing.T, ns, name string, cfg *rest.Config) client.ObjectKey {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	g.Expect(envtest.WriteKubeconfigSecret(ctx, env.Client, ns, name, cfg)).To(Succeed())
	return client.ObjectKey{Namespace: ns, Name: name}
}

func createNode(t *testing.T, c client.Client, name, providerID string) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := c.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), node) })
	return node
}

// queueWatcher starts sources on a work queue, standing in for a controller.
type queueWatcher struct {
	ctx   context.Context
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func newQueueWatcher(t *testing.T) *queueWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(func() { cancel(); q.ShutDown() })
	return &queueWatcher{ctx: ctx, queue: q}
}

func (w *queueWatcher) Watch(src source.Source) error { return src.Start(w.ctx, w.queue) }

// next returns the next request of the queue, or fails after timeout.
func (w *queueWatcher) next(t *testing.T, timeout time.Duration) reconcile.Request {
	t.Helper()
	got := make(chan reconcile.Request, 1)
	go func() {
		req, shutdown := w.queue.Get()
		if !shutdown {
			w.queue.Done(req)
			w.queue.Forget(req)
			got <- req
		}
	}()
	select {
	case req := <-got:
		return req
	case <-time.After(timeout):
		t.Fatalf("no request within %s", timeout)
		return reconcile.Request{}
	}
}

func TestConnectsAndServesNodesByProviderID(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{})
	sources := newQueueWatcher(t)
	g.Expect(sources.Watch(cc.ClusterSource(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	}))).To(Succeed())

	key := client.ObjectKey{Namespace: ns, Name: "unknown"}
	_, err := cc.GetClient(ctx, key)
	g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue(), "a Cluster nobody connected is not connected")

	node := createNode(t, env.Client, "node-"+ns, "test://"+ns)
	key = createCluster(t, ns, "workload", env.Config)

	g.Expect(sources.next(t, 30*time.Second)).To(Equal(reconcile.Request{NamespacedName: key}), "ClusterSource reports the new connection")
	c, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cc.Health(key).Connected).To(BeTrue())

	nodes := &corev1.NodeList{}
	g.Expect(c.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: "test://" + ns})).To(Succeed())
	g.Expect(nodes.Items).To(HaveLen(1))
	g.Expect(nodes.Items[0].Name).To(Equal(node.Name))
	g.Expect(nodes.Items[0].Spec.ProviderID).To(Equal("test://"+ns), "the cached Node has its fields")
	// The cache keeps no managedFields (nobody reads them); the API server's Node has them.
	g.Expect(nodes.Items[0].ManagedFields).To(BeEmpty())
	served := &corev1.Node{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), served)).To(Succeed())
	g.Expect(served.ManagedFields).NotTo(BeEmpty())

	// Reads of other kinds go to the API server.
	uncached, err := cc.GetUncachedClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(uncached.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})).To(Succeed())
	cfg, err := cc.GetRESTConfig(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal(env.Config.Host))
	g.Expect(cfg.Timeout).To(Equal(10 * time.Second))
}

func TestWatchDeliversWorkloadEvents(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{})
	key := createCluster(t, ns, "workload", env.Config)
	g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

	w := newQueueWatcher(t)
	providerID := "test://" + ns
	in := WatchInput{
		Name:    "test-nodes",
		Watcher: w,
		Kind:    &corev1.Node{},
		EventHandler: handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.(*corev1.Node).Spec.ProviderID != providerID {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		}),
	}
	g.Expect(cc.Watch(ctx, key, in)).To(Succeed())
	g.Expect(cc.Watch(ctx, key, in)).To(Succeed(), "adding the same watch again is a no-op")

	createNode(t, env.Client, "watched-"+ns, providerID)
	g.Expect(w.next(t, 30*time.Second).Name).To(Equal("watched-" + ns))
}

func TestDropsTheConnection(t *testing.T) {
	ctx := context.Background()

	t.Run("when the Cluster is deleted, not while it is being deleted", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.NewNamespace(t)
		cc := startClusterCache(t, ns, Options{})
		key := createCluster(t, ns, "workload", env.Config)
		g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

		labels := map[string]string{"cluster_name": key.Name, "cluster_namespace": key.Namespace}
		g.Expect(metric("capi_cluster_cache_connection_up", labels)()).To(Equal(1.0))

		// While a finalizer holds the Cluster, as the core's does while its Machines go, the controllers
		// still see its workload cluster, as upstream's do.
		cluster := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, cluster)).To(Succeed())
		cluster.Finalizers = append(cluster.Finalizers, "test.capstan.dev/hold")
		g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
		before, err := cc.GetClient(ctx, key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Consistently(func(g Gomega) {
			c, err := cc.GetClient(ctx, key)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c).To(BeIdenticalTo(before), "the same connection")
			g.Expect(cc.Health(key).Connected).To(BeTrue())
		}, 3*time.Second, 100*time.Millisecond).Should(Succeed())

		g.Expect(env.Client.Get(ctx, key, cluster)).To(Succeed())
		cluster.Finalizers = nil
		g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
		g.Eventually(func() bool { return cc.lookup(key) == nil }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
		_, err = cc.GetClient(ctx, key)
		g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue())
		for _, name := range []string{"capi_cluster_cache_connection_up", "capi_cluster_cache_healthcheck", "capi_cluster_cache_healthchecks_total"} {
			series, err := scrape.Series(name, labels)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(series).To(BeEmpty(), "a deleted Cluster's series are gone from %s", name)
		}
	})

	t.Run("when the kubeconfig Secret is deleted", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.NewNamespace(t)
		cc := startClusterCache(t, ns, Options{})
		key := createCluster(t, ns, "workload", env.Config)
		g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

		g.Expect(env.Client.Delete(ctx, envtest.KubeconfigSecret(ns, key.Name, nil))).To(Succeed())
		g.Eventually(func() bool {
			_, err := cc.GetClient(ctx, key)
			return errors.Is(err, ErrClusterNotConnected)
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

		// A new Secret connects again.
		g.Expect(envtest.WriteKubeconfigSecret(ctx, env.Client, ns, key.Name, env.Config)).To(Succeed())
		g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	})

	t.Run("and reconnects when the kubeconfig changes", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.NewNamespace(t)
		cc := startClusterCache(t, ns, Options{})
		key := createCluster(t, ns, "workload", env.Config)
		g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
		before, err := cc.GetClient(ctx, key)
		g.Expect(err).NotTo(HaveOccurred())

		// Same server, different kubeconfig bytes.
		kubeconfig, err := envtest.Kubeconfig(env.Config, "renamed")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(envtest.WriteKubeconfigSecretData(ctx, env.Client, ns, key.Name, kubeconfig)).To(Succeed())
		g.Eventually(func() bool {
			after, err := cc.GetClient(ctx, key)
			return err == nil && after != before
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "a new connection replaces the old one")

		// Touching the Secret without changing the kubeconfig keeps the connection.
		current, err := cc.GetClient(ctx, key)
		g.Expect(err).NotTo(HaveOccurred())
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: key.Name + KubeconfigSecretSuffix}, secret)).To(Succeed())
		secret.Labels["touched"] = "true"
		g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
		g.Consistently(func() bool {
			c, err := cc.GetClient(ctx, key)
			return err == nil && c == current
		}, 2*time.Second, 100*time.Millisecond).Should(BeTrue())
	})
}

// proxy forwards TCP connections to target until it is cut; while cut it accepts connections and never
// answers them (a blackhole) and it closes the connections it was forwarding.
type proxy struct {
	listener net.Listener
	target   string

	mu       sync.Mutex
	cut      bool
	refuse   bool
	conns    []net.Conn
	accepted chan struct{}
	// live counts the client connections being forwarded.
	live atomic.Int64
}

func newProxy(t *testing.T, target string, cut bool) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{listener: l, target: target, cut: cut, accepted: make(chan struct{}, 100)}
	go p.serve()
	t.Cleanup(func() {
		_ = l.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			_ = c.Close()
		}
	})
	return p
}

// blackhole returns a listener that accepts connections and never answers.
func blackhole(t *testing.T) *proxy { return newProxy(t, "", true) }

func (p *proxy) serve() {
	for {
		c, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.refuse {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c)
		cut := p.cut
		p.mu.Unlock()
		select {
		case p.accepted <- struct{}{}:
		default:
		}
		if cut {
			continue
		}
		upstream, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, upstream)
		p.mu.Unlock()
		p.live.Add(1)
		go func() { _, _ = io.Copy(upstream, c); _ = upstream.Close() }()
		go func() { _, _ = io.Copy(c, upstream); _ = c.Close(); p.live.Add(-1) }()
	}
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
	}
}

// setRefuse makes the proxy close every new connection at once, as a host whose API server does not run
// yet refuses them.
func (p *proxy) setRefuse(refuse bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = refuse
}

func (p *proxy) config(via *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(via)
	cfg.Host = "https://" + p.listener.Addr().String()
	return cfg
}

func TestUnreachableClusterDoesNotDelayOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	// The connection attempt to the blackhole lasts longer than the test: it is in progress throughout.
	cc := startClusterCache(t, ns, Options{ConnectionTimeout: 10 * time.Minute, HealthProbeTimeout: 10 * time.Minute})

	hole := blackhole(t)
	unreachable := createCluster(t, ns, "unreachable", hole.config(env.Config))
	select {
	case <-hole.accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("no connection attempt to the unreachable cluster")
	}
	g.Expect(cc.Health(unreachable).Connecting).To(BeTrue())

	healthy := createCluster(t, ns, "healthy", env.Config)
	g.Eventually(func() bool { return cc.Health(healthy).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue(),
		"the healthy cluster connects while the unreachable one is stuck")

	// A loop of reconciles and reads over the healthy cluster completes, while the unreachable cluster's
	// connection attempt is still in progress: none of them waited for it.
	createNode(t, env.Client, "healthy-"+ns, "test://healthy-"+ns)
	g.Eventually(func() ([]corev1.Node, error) {
		c, err := cc.GetClient(ctx, healthy)
		if err != nil {
			return nil, err
		}
		nodes := &corev1.NodeList{}
		err = c.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: "test://healthy-" + ns})
		return nodes.Items, err
	}, 30*time.Second, 100*time.Millisecond).Should(HaveLen(1))
	for range 50 {
		_, err := cc.Reconcile(ctx, reconcile.Request{NamespacedName: healthy})
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cc.Reconcile(ctx, reconcile.Request{NamespacedName: unreachable})
		g.Expect(err).NotTo(HaveOccurred())
		c, err := cc.GetClient(ctx, healthy)
		g.Expect(err).NotTo(HaveOccurred())
		nodes := &corev1.NodeList{}
		g.Expect(c.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: "test://healthy-" + ns})).To(Succeed())
		g.Expect(nodes.Items).To(HaveLen(1))

		_, err = cc.GetClient(ctx, unreachable)
		g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue(), "the unreachable cluster answers at once")
	}
	g.Expect(cc.Health(unreachable).Connecting).To(BeTrue(), "the unreachable cluster was stuck during the whole loop")
	g.Expect(hole.accepted).To(BeEmpty(), "reconciles did not start a second connection attempt")

	// Deleting the unreachable Cluster stops its connection attempt.
	g.Expect(env.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: unreachable.Name}})).To(Succeed())
	g.Eventually(func() bool { return cc.lookup(unreachable) == nil }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
}

func TestHealthProbeDropsAndRecreatesTheConnection(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{
		HealthProbeInterval:         200 * time.Millisecond,
		HealthProbeTimeout:          300 * time.Millisecond,
		HealthProbeFailureThreshold: 3,
		ConnectionTimeout:           2 * time.Second,
		ConnectionRetryInterval:     500 * time.Millisecond,
	})
	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	key := createCluster(t, ns, "flaky", p.config(env.Config))
	g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	before, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	// The metrics say so, as upstream's name them.
	labels := map[string]string{"cluster_name": key.Name, "cluster_namespace": key.Namespace}
	g.Eventually(metric("capi_cluster_cache_connection_up", labels)).Should(Equal(1.0))
	g.Eventually(metric("capi_cluster_cache_healthcheck", labels)).Should(Equal(1.0))
	g.Eventually(metric("capi_cluster_cache_healthchecks_total", withStatus(labels, "success"))).Should(BeNumerically(">", 0))

	p.setCut(true)
	g.Eventually(func() bool {
		_, err := cc.GetClient(ctx, key)
		return errors.Is(err, ErrClusterNotConnected)
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue(), "enough failing probes make the cluster unavailable")
	g.Eventually(func() bool {
		acc := cc.lookup(key)
		acc.mu.RLock()
		defer acc.mu.RUnlock()
		return acc.conn == nil
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue(), "enough failed probes drop the connection")
	g.Expect(metric("capi_cluster_cache_healthchecks_total", withStatus(labels, "error"))()).To(BeNumerically(">=", 3))
	g.Expect(metric("capi_cluster_cache_healthcheck", labels)()).To(Equal(0.0))
	g.Expect(metric("capi_cluster_cache_connection_up", labels)()).To(Equal(0.0))

	p.setCut(false)
	g.Eventually(func() bool {
		after, err := cc.GetClient(ctx, key)
		return err == nil && after != before
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue(), "a new connection is made once the cluster answers again")
	g.Expect(cc.Health(key).LastProbeSuccess).NotTo(BeZero())
	g.Eventually(metric("capi_cluster_cache_connection_up", labels)).Should(Equal(1.0))
	g.Eventually(metric("capi_cluster_cache_healthcheck", labels)).Should(Equal(1.0))
}

// metric returns a function reading the value of the series of a metric with these labels as /metrics
// serves it; -1 when there is no such series.
func metric(name string, labels map[string]string) func() float64 {
	return func() float64 {
		v, found, err := scrape.Value(name, labels)
		if err != nil {
			panic(err)
		}
		if !found {
			return -1
		}
		return v
	}
}

func withStatus(labels map[string]string, status string) map[string]string {
	out := map[string]string{"status": status}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// TestKeepsServingUntilTheFailureThreshold: a connection whose health probe fails is still served until
// HealthProbeFailureThreshold failures in a row, as upstream does, rather than being withheld from every
// controller on the first lost probe.
func TestKeepsServingUntilTheFailureThreshold(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{
		HealthProbeInterval:         100 * time.Millisecond,
		HealthProbeTimeout:          200 * time.Millisecond,
		HealthProbeFailureThreshold: 1000,
		ConnectionTimeout:           5 * time.Second,
	})
	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	key := createCluster(t, ns, "blip", p.config(env.Config))
	g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	before, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())

	p.setCut(true)
	g.Eventually(func() int { return cc.Health(key).ConsecutiveFailures }, 10*time.Second, 20*time.Millisecond).Should(BeNumerically(">=", 2))
	during, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred(), "a failing probe below the threshold does not withhold the client")
	g.Expect(during).To(BeIdenticalTo(before))
	g.Expect(cc.Health(key).Connected).To(BeFalse(), "Health says the probe fails")

	p.setCut(false)
	g.Eventually(func() int { return cc.Health(key).ConsecutiveFailures }, 10*time.Second, 20*time.Millisecond).Should(BeZero())
	after, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(BeIdenticalTo(before), "the same connection is kept")
}

func TestSecretToCluster(t *testing.T) {
	tests := []struct {
		name string
		want []reconcile.Request
	}{
		{name: "prod-kubeconfig", want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "prod"}}}},
		{name: "prod-user-kubeconfig", want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "prod-user"}}}},
		{name: "-kubeconfig"},
		{name: "prod-ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: tt.name}}
			g.Expect(secretToCluster(context.Background(), s)).To(Equal(tt.want))
		})
	}
}

func TestSecretWithoutKubeconfigDisconnects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{})
	key := createCluster(t, ns, "workload", env.Config)
	g.Eventually(func() bool { return cc.Health(key).Connected }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: key.Name + KubeconfigSecretSuffix}, secret)).To(Succeed())
	secret.Data = map[string][]byte{"other": []byte("x")}
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Eventually(func() bool { return cc.lookup(key) == nil }, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	_, err := cc.GetClient(ctx, key)
	g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue())
}

// BenchmarkGetClient measures GetClient from many goroutines over many clusters, one of them connecting
// forever: the lookups share no lock with connection attempts.
func BenchmarkGetClient(b *testing.B) {
	cc := &ClusterCache{}
	cc.init()
	const clusters = 1000
	keys := make([]client.ObjectKey, clusters)
	for i := range keys {
		keys[i] = client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("c%d", i)}
		acc := cc.getOrCreate(keys[i])
		if i == 0 {
			acc.connecting = true
			continue
		}
		acc.conn = &connection{cachedClient: fakeClient{}, watches: map[string]bool{}}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_, err := cc.GetClient(context.Background(), keys[i%clusters])
			if (err != nil) != (i%clusters == 0) {
				b.Fatalf("cluster %d: unexpected %v", i%clusters, err)
			}
			i++
		}
	})
}

// fakeClient stands in for a workload cluster's client.
type fakeClient struct{ client.Client }

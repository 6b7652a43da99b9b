package clustercache

import (
	"context"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestRetryDelay(t *testing.T) {
	opts := Options{}.withDefaults()
	for _, tc := range []struct {
		name       string
		failures   int
		failingFor time.Duration
		want       time.Duration
	}{
		{name: "first failure", failures: 1, want: time.Second},
		{name: "second failure", failures: 2, failingFor: time.Second, want: 2 * time.Second},
		{name: "third failure", failures: 3, failingFor: 3 * time.Second, want: 4 * time.Second},
		{name: "capped at ConnectionRetryMaxInitialInterval", failures: 4, failingFor: 7 * time.Second, want: 5 * time.Second},
		{name: "still capped", failures: 60, failingFor: 4 * time.Minute, want: 5 * time.Second},
		{name: "many failures do not overflow", failures: 10000, failingFor: time.Minute, want: 5 * time.Second},
		{name: "after ConnectionRetryInitialPeriod", failures: 61, failingFor: 5 * time.Minute, want: 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			for range 20 {
				got := opts.retryDelay(tc.failures, tc.failingFor)
				g.Expect(got).To(BeNumerically(">=", tc.want))
				g.Expect(got).To(BeNumerically("<=", tc.want+tc.want/10), "at most 10% jitter")
			}
		})
	}
	// A ConnectionRetryInterval below the initial intervals wins (tests, impatient users).
	short := Options{ConnectionRetryInterval: 500 * time.Millisecond}.withDefaults()
	NewWithT(t).Expect(short.retryDelay(3, 0)).To(BeNumerically("<=", 550*time.Millisecond))
}

// connectionFailures is how many connection attempts to a cluster failed in a row.
func connectionFailures(cc *ClusterCache, key client.ObjectKey) int {
	acc := cc.lookup(key)
	if acc == nil {
		return 0
	}
	acc.mu.RLock()
	defer acc.mu.RUnlock()
	return acc.failures
}

// TestConnectsSoonAfterTheWorkloadAPIAnswers: a new cluster's API server answers some time after its
// Cluster and kubeconfig Secret exist. With the default options the cache connects within seconds of the
// first answer, not after a 30-second retry.
func TestConnectsSoonAfterTheWorkloadAPIAnswers(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cc := startClusterCache(t, ns, Options{})
	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	p.setRefuse(true)
	key := createCluster(t, ns, "late", p.config(env.Config))

	// The workload API refuses connections for a while (about 3 s): the cache tries several times.
	g.Eventually(func() int { return connectionFailures(cc, key) }, 30*time.Second, 50*time.Millisecond).Should(BeNumerically(">=", 3))
	g.Expect(cc.Health(key).Connected).To(BeFalse())

	p.setRefuse(false)
	answering := time.Now()
	g.Eventually(func() bool { return cc.Health(key).Connected }, 15*time.Second, 50*time.Millisecond).Should(BeTrue(),
		"connected within seconds of the workload API answering")
	t.Logf("connected %s after the workload API answered", time.Since(answering).Round(10*time.Millisecond))
	g.Expect(connectionFailures(cc, key)).To(BeZero(), "a connection forgets the failures")
}

// TestConnectsAtOnceWhenTheControlPlaneChanges: a cluster that failed to connect is tried again at once,
// whatever its backoff, when its Cluster says something new about the control plane (here
// status.infrastructureReady and the control plane endpoint, as the infrastructure provider sets them).
func TestConnectsAtOnceWhenTheControlPlaneChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	// Every retry waits ConnectionRetryInterval (30 s): only a change of the Cluster connects it sooner.
	cc := startClusterCache(t, ns, Options{ConnectionRetryInitialPeriod: time.Nanosecond})
	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	p.setRefuse(true)
	key := createCluster(t, ns, "endpoint", p.config(env.Config))
	// The first retry comes after ConnectionRetryInitialInterval, the next ones after 30 s.
	g.Eventually(func() int { return connectionFailures(cc, key) }, 30*time.Second, 50*time.Millisecond).Should(Equal(2))

	p.setRefuse(false)
	g.Consistently(func() bool { return cc.Health(key).Connected }, 2*time.Second, 100*time.Millisecond).Should(BeFalse(),
		"no retry before ConnectionRetryInterval")

	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, key, cluster)).To(Succeed())
	cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 6443}
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = true
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	changed := time.Now()
	g.Eventually(func() bool { return cc.Health(key).Connected }, 15*time.Second, 50*time.Millisecond).Should(BeTrue(),
		"the Cluster's change connects it long before the 30-second retry")
	t.Logf("connected %s after the Cluster changed", time.Since(changed).Round(10*time.Millisecond))
}

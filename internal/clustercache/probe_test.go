package clustercache

import (
	"crypto/sha256"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// requestCounter counts the HTTP requests of a client by path.
type requestCounter struct {
	mu     sync.Mutex
	byPath map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.byPath[r.URL.Path]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (c *requestCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.byPath {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingEndpoint makes the endpoint of a kubeconfig for cfg whose requests are counted.
func countingEndpoint(t testing.TB, cfg *rest.Config) (*endpoint, *requestCounter) {
	t.Helper()
	kubeconfig, err := envtest.Kubeconfig(cfg, "probe")
	if err != nil {
		t.Fatal(err)
	}
	cc := &ClusterCache{}
	cc.init()
	ep, err := cc.newEndpoint(kubeconfig, sha256.Sum256(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	counter := &requestCounter{byPath: map[string]int{}}
	ep.httpClient.Transport = counter.wrap(ep.httpClient.Transport)
	if ep.prober, err = newProber(ep.config, ep.httpClient); err != nil {
		t.Fatal(err)
	}
	return ep, counter
}

// TestProbeIsOneRequest: a health probe is one GET / whether the workload cluster answers or not: client-go
// does not retry it (it would retry a reset connection up to 10 times, a second apart), so 1,000 clusters
// cost 1,000 requests per HealthProbeInterval and a cluster that does not answer fails its probe at once.
func TestProbeIsOneRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ep, counter := countingEndpoint(t, env.Config)
	for range 5 {
		g.Expect(probe(ctx, ep.prober, 5*time.Second)).To(Succeed())
	}
	g.Expect(counter.counts()).To(Equal(map[string]int{"/": 5}))

	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	p.setRefuse(true)
	ep, counter = countingEndpoint(t, p.config(env.Config))
	start := time.Now()
	g.Expect(probe(ctx, ep.prober, 5*time.Second)).NotTo(Succeed())
	g.Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second), "a refused probe fails at once")
	g.Expect(counter.counts()).To(Equal(map[string]int{"/": 1}))
}

// BenchmarkHealthProbe measures one health probe of a connected cluster (GET / over the connection's
// HTTP/2 client) against envtest's API server: the CPU the manager spends on it (cpu-µs/op, this process
// only, not the API server's) and its latency (ns/op). "back-to-back" sends the probes one after another;
// "spread" waits 20 ms before each, as a manager's probes are spread over time, and so includes the
// wake-ups of an idle process (its ns/op includes the 20 ms). 1,000 clusters probed every 10 s make 100
// probes a second per manager.
func BenchmarkHealthProbe(b *testing.B) {
	for _, tc := range []struct {
		name string
		wait time.Duration
	}{{"back-to-back", 0}, {"spread", 20 * time.Millisecond}} {
		b.Run(tc.name, func(b *testing.B) {
			ep, _ := countingEndpoint(b, env.Config)
			ctx := b.Context()
			if err := probe(ctx, ep.prober, 5*time.Second); err != nil {
				b.Fatal(err)
			}
			before := cpuTime()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if tc.wait > 0 {
					// The benchmark case's pause between probes.
					time.Sleep(tc.wait)
				}
				if err := probe(ctx, ep.prober, 5*time.Second); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFailedConnectionAttempt measures an attempt to connect to a cluster whose API server refuses
// connections (it does not run yet), with the clients of its kubeconfig reused as the retries do: the CPU
// of this process per attempt (cpu-µs/op). 1,000 such clusters are tried 200 times a second during
// ConnectionRetryInitialPeriod (every 5 s) and 33 times a second after it (every 30 s).
func BenchmarkFailedConnectionAttempt(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cfg := (&proxy{listener: l}).config(env.Config)
	_ = l.Close()
	ep, _ := countingEndpoint(b, cfg)
	cc := &ClusterCache{}
	cc.init()
	ctx := b.Context()
	before := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := cc.connect(ctx, ep); err == nil {
			b.Fatal("connected to a closed port")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

// TestEndpointDoesNotAskForGzip: the clients of a workload cluster do not ask for gzipped responses, so
// that the informers' open watches hold no decompressor each (BenchmarkConnectedClusters: about 40 KiB
// per cluster and manager).
func TestEndpointDoesNotAskForGzip(t *testing.T) {
	g := NewWithT(t)
	ep, _ := countingEndpoint(t, env.Config)
	g.Expect(ep.config.DisableCompression).To(BeTrue())
	g.Expect(ep.watchConfig.DisableCompression).To(BeTrue())
}

// TestEndpointSharesOneTransport: the requests and the watches of a cluster go through one transport
// (one HTTP/2 connection); requests are bounded by ClientTimeout, watches are not.
func TestEndpointSharesOneTransport(t *testing.T) {
	g := NewWithT(t)
	kubeconfig, err := envtest.Kubeconfig(env.Config, "transport")
	g.Expect(err).NotTo(HaveOccurred())
	cc := &ClusterCache{}
	cc.init()
	ep, err := cc.newEndpoint(kubeconfig, sha256.Sum256(kubeconfig))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ep.watchHTTPClient.Transport).To(BeIdenticalTo(ep.httpClient.Transport))
	g.Expect(ep.httpClient.Timeout).To(Equal(10 * time.Second))
	g.Expect(ep.watchHTTPClient.Timeout).To(BeZero())
}

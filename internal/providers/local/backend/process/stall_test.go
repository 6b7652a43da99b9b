package process

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// TestAStalledEtcdMemberLeavesTheEndpointQuickly: a kube-apiserver reads only its own machine's etcd
// member, as kubeadm sets it up, so it hangs while that member is stopped (SIGSTOP, as on a stalled disk).
// With the probe intervals the provider runs with, the endpoint takes that API server out (closing its
// connections, whose clients reconnect to the others) within 6.5 s (5.2 s at most by the intervals, with
// room for a loaded machine), and clients that read through the endpoint with a 10 s timeout see no
// failed request. Before, the endpoint took it out after 7 to 12 s (a
// ready API server was probed every 5 s, one API server after the other, and taken out after 3 failed
// probes of 2 s): the chaos suite's sampler, whose connection went to that API server, failed 46 reads in
// a row (seed 126735809).
func TestAStalledEtcdMemberLeavesTheEndpointQuickly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// The provider's probe intervals (the other tests shorten them).
	b := newBackendWith(t, t.TempDir(), func(o *Options) { o.ProbeInterval, o.StartingProbeInterval = 0, 0 })
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	certs := testworkload.NewCertificates(t)
	status := ensureReady(g, b, backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs})
	for _, name := range []string{"a", "b", "c"} {
		ensureMachine(g, b, key, controlPlaneMachine(name))
	}
	c := b.get(key)
	port := func(name string) int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.st.Machines[name].APIServerPort
	}
	backends := func() []int {
		c.lb.mu.Lock()
		defer c.lb.mu.Unlock()
		return slices.Clone(c.lb.backends)
	}
	g.Eventually(backends, 60*time.Second, 100*time.Millisecond).Should(HaveLen(3))

	admin := adminClient(t, certs.CA, status.Port)
	_, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	// Readers with connections kept alive, as controllers and kubectl's watch do: new connections go to
	// the API servers in turn, so some go to b's.
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var reads atomic.Int64
	var mu sync.Mutex
	var failures []string
	for range 6 {
		cs := readerClient(t, certs, status.Port)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				_, err := cs.CoreV1().ConfigMaps("default").Get(cctx, "data", metav1.GetOptions{})
				if cctx.Err() != nil {
					return
				}
				reads.Add(1)
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %v", time.Now().Format(time.StampMilli), err))
					mu.Unlock()
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	time.Sleep(2 * time.Second)

	t.Log("machine b's etcd member stops (SIGSTOP)")
	pid := pidOf(t, c.dir, "b", "etcd")
	g.Expect(syscall.Kill(pid, syscall.SIGSTOP)).To(Succeed())
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	g.Eventually(backends, 30*time.Second, 50*time.Millisecond).ShouldNot(ContainElement(port("b")))
	out := time.Since(stopped)
	t.Logf("b's API server left the endpoint %s after its etcd member stopped", out.Round(10*time.Millisecond))
	// The readers go on a while with b out of the endpoint.
	time.Sleep(12 * time.Second)
	resume()
	t.Log("b's etcd member continues (SIGCONT): its API server is back in the endpoint")
	g.Eventually(backends, 60*time.Second, 100*time.Millisecond).Should(ContainElement(port("b")))
	time.Sleep(time.Second)
	stop()
	wg.Wait()

	t.Logf("%d reads, %d failed", reads.Load(), len(failures))
	g.Expect(reads.Load()).To(BeNumerically(">", 100))
	g.Expect(failures).To(BeEmpty())
	g.Expect(out).To(BeNumerically("<=", 6500*time.Millisecond), "b's API server left the endpoint %s after its etcd member stopped", out)
}

// readerClient is a client of the workload cluster through its endpoint with a 10 s timeout (the time a
// read may take, client-go's retry of a closed connection included).
func readerClient(t *testing.T, certs backend.Certificates, port int32) kubernetes.Interface {
	t.Helper()
	cfg, err := testworkload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: port}, certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfigOrDie(cfg)
}

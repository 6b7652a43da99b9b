package clustercache

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/procstat"
)

// costClusters is how many workload clusters BenchmarkConnectedClusters connects to
// (CAPSTAN_BENCH_CLUSTERS overrides it).
const costClusters = 200

// costIdleProbeInterval is the probe interval of BenchmarkConnectedClusters' idle window: shorter than the
// default 10 s so that a short window holds enough probes to be measured.
const costIdleProbeInterval = time.Second

// BenchmarkConnectedClusters measures what a manager's cluster cache costs per connected workload cluster.
// It connects a ClusterCache to 200 "workload clusters", as a manager does (the first probe, discovery,
// the Node informer with its providerID index, then the health probe every second), and keeps them
// connected and idle for 10 s. The clusters are envtest's kube-apiserver (another process, so that this
// process's heap and CPU are the cache's alone) reached as 200 users with a client certificate each: like
// the kubeconfigs of different clusters, they get a client-go transport and an HTTP/2 connection each. The
// API server has 2 Nodes (a control plane Node and a worker, as each cluster of the scale benchmark), with
// the managedFields a kube-apiserver writes. It reports
//
//   - heap-B/cluster: the live heap the connections add per cluster (after GC);
//   - goroutines/cluster: the goroutines they add per cluster;
//   - cpu-µs/probe: the CPU of this process over the idle window divided by the probes sent in it: the
//     probes' cost, plus the idle informers' (little: their watches are quiet);
//   - cpu-ms/cluster-min: that CPU per cluster and minute at the default 10 s probe interval
//     (cpu-µs/probe × 6).
//
// 1,000 clusters × 3 managers (the core, bootstrap-kubeadm and control-plane-kubeadm each keep a cache)
// cost 3,000 × heap-B/cluster and 3,000 × cpu-ms/cluster-min / 60,000 cores, plus what the workload API
// servers spend answering the probes.
func BenchmarkConnectedClusters(b *testing.B) {
	n := costClusters
	if s := os.Getenv("CAPSTAN_BENCH_CLUSTERS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			b.Fatalf("CAPSTAN_BENCH_CLUSTERS=%q is not a positive number", s)
		}
	}
	createNodes(b, "cost-cp", "cost-worker")
	kubeconfigs := map[client.ObjectKey][]byte{}
	for i := range n {
		key := client.ObjectKey{Namespace: "bench", Name: fmt.Sprintf("cost-%d", i)}
		cfg, err := env.AddUser(key.Name, "system:masters")
		if err != nil {
			b.Fatal(err)
		}
		if kubeconfigs[key], err = envtest.Kubeconfig(cfg, key.Name); err != nil {
			b.Fatal(err)
		}
	}

	for range b.N {
		heapBefore := heapInUse()
		goroutinesBefore := runtime.NumGoroutine()

		cc := &ClusterCache{Options: Options{HealthProbeInterval: costIdleProbeInterval}}
		cc.init()
		for key, data := range kubeconfigs {
			cc.startConnect(context.Background(), cc.getOrCreate(key), attempt{kubeconfig: data})
		}
		// Without the ClusterCache's controller here, a failed attempt (200 at once on a loaded machine can
		// time out) is retried by the benchmark.
		deadline := time.Now().Add(3 * time.Minute)
		for key, data := range kubeconfigs {
			for h := cc.Health(key); !h.Connected; h = cc.Health(key) {
				if time.Now().After(deadline) {
					b.Fatalf("%s is not connected after 3 minutes: %+v", key, h)
				}
				if !h.Connecting {
					cc.startConnect(context.Background(), cc.getOrCreate(key), attempt{kubeconfig: data})
				}
				// A connection is being made; the loop polls until all are.
				time.Sleep(10 * time.Millisecond)
			}
		}
		// Let the connections settle (the first probes, the informers' watches).
		time.Sleep(2 * costIdleProbeInterval)
		heapAfter := heapInUse()
		goroutinesAfter := runtime.NumGoroutine()
		procstat.WriteHeapProfile(b, "CAPSTAN_BENCH_HEAP_PROFILE") // where the connections' heap goes

		probesBefore := probesSent(kubeconfigs)
		cpuBefore := cpuTime()
		// The benchmark measures what idle connections cost over this time.
		time.Sleep(10 * costIdleProbeInterval)
		cpu := cpuTime() - cpuBefore
		probes := probesSent(kubeconfigs) - probesBefore

		b.StopTimer()
		cc.cancel()
		b.ReportMetric(float64(int64(heapAfter)-int64(heapBefore))/float64(n), "heap-B/cluster")
		b.ReportMetric(float64(goroutinesAfter-goroutinesBefore)/float64(n), "goroutines/cluster")
		if probes > 0 {
			perProbe := float64(cpu.Microseconds()) / float64(probes)
			b.ReportMetric(perProbe, "cpu-µs/probe")
			b.ReportMetric(perProbe*6/1000, "cpu-ms/cluster-min")
		}
		b.StartTimer()
	}
}

// createNodes creates Nodes on envtest's API server, deleted when the benchmark ends.
func createNodes(b *testing.B, names ...string) {
	b.Helper()
	ctx := context.Background()
	for _, name := range names {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Spec:       corev1.NodeSpec{ProviderID: "local://bench/" + name},
		}
		if err := env.Client.Create(ctx, node); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = env.Client.Delete(ctx, node) })
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		if err := env.Client.Status().Update(ctx, node); err != nil {
			b.Fatal(err)
		}
	}
}

// heapInUse is the live heap after two garbage collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// probesSent counts the successful probes of the clusters' connections so far.
func probesSent(kubeconfigs map[client.ObjectKey][]byte) int {
	total := 0.0
	for key := range kubeconfigs {
		total += testutil.ToFloat64(healthChecksTotal.WithLabelValues(key.Name, key.Namespace, "success"))
	}
	return int(total)
}

package core_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// BenchmarkClustersToRunning measures how long 200 Clusters, each with one MachineDeployment of 2
// replicas, take from creation until all 400 Machines are Running, with the core controllers and the test
// provider running in-process against a real API server, and the core's writes to the management API
// server per Machine by verb (issue 21's target: at most 12). It logs the core's writes by resource.
// CAPSTAN_BENCH_CLUSTERS changes the number of Clusters (for a quick look); CAPSTAN_BENCH_WRITES=1 prints
// every write's body.
func BenchmarkClustersToRunning(b *testing.B) {
	clusters, replicas := 200, 2
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_CLUSTERS")); err == nil && n > 0 {
		clusters = n
	}
	g := NewWithT(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		ns := env.NewNamespace(b)
		before := requests.Snapshot()
		start := time.Now()
		var wg sync.WaitGroup
		names := make(chan string)
		for w := 0; w < 10; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for name := range names {
					newCluster(ctx, g, ns, name, int32(replicas))
				}
			}()
		}
		for c := 0; c < clusters; c++ {
			names <- fmt.Sprintf("bench-%03d", c)
		}
		close(names)
		wg.Wait()
		created := time.Since(start)

		g.Eventually(func(g Gomega) {
			list := &clusterv1.MachineList{}
			g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(running(list.Items)).To(Equal(clusters * replicas))
		}, 30*time.Minute, time.Second).Should(Succeed())
		elapsed := time.Since(start)
		counts := requests.Snapshot().Since(before)
		b.ReportMetric(elapsed.Seconds(), "s/200-clusters")
		b.ReportMetric(created.Seconds(), "s-to-create")
		b.ReportMetric(float64(clusters*replicas)/elapsed.Seconds(), "machines/s")
		reportWrites(b, counts, clusters*replicas)
	}
}

// reportWrites reports the core's writes per Machine, in all and by verb, and the test provider's, and
// logs the core's writes by resource.
func reportWrites(b *testing.B, counts apicount.Counts, machines int) {
	perMachine := func(match func(apicount.Key) bool) float64 { return float64(counts.Sum(match)) / float64(machines) }
	core := func(k apicount.Key) bool { return k.Agent != stack.ProviderUserAgent }
	b.ReportMetric(perMachine(func(k apicount.Key) bool { return core(k) && apicount.IsWrite(k.Verb) }), "core-writes/machine")
	for _, verb := range []string{http.MethodPatch, http.MethodPost, http.MethodPut} {
		b.ReportMetric(perMachine(func(k apicount.Key) bool { return core(k) && k.Verb == verb }), "core-"+verb+"/machine")
	}
	b.ReportMetric(perMachine(func(k apicount.Key) bool { return !core(k) && apicount.IsWrite(k.Verb) }), "provider-writes/machine")
	writes := apicount.Counts{}
	for k, n := range counts {
		if core(k) && apicount.IsWrite(k.Verb) {
			writes[k] = n
		}
	}
	b.Logf("the core's writes to the management API server for %d Machines:\n%s", machines, writes)
}

// printWrite prints a write's body (CAPSTAN_BENCH_WRITES=1).
func printWrite(k apicount.Key, path string, body []byte) {
	fmt.Fprintf(os.Stderr, "WRITE %s %s %s %s\n", k.Agent, k.Verb, path, body)
}

package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// BenchmarkClustersToRunning measures how long 200 Clusters, each with one MachineDeployment of 2
// replicas, take from creation until all 400 Machines are Running, with the core controllers and the test
// provider running in-process against a real API server.
func BenchmarkClustersToRunning(b *testing.B) {
	const clusters, replicas = 200, 2
	g := NewWithT(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		ns := env.NewNamespace(b)
		start := time.Now()
		var wg sync.WaitGroup
		names := make(chan string)
		for w := 0; w < 10; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for name := range names {
					newCluster(ctx, g, ns, name, replicas)
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
		b.ReportMetric(elapsed.Seconds(), "s/200-clusters")
		b.ReportMetric(created.Seconds(), "s-to-create")
		b.ReportMetric(float64(clusters*replicas)/elapsed.Seconds(), "machines/s")
	}
}

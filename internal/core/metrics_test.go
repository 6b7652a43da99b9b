package core_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/scrape"
)

// TestMetricsThatMatter: what /metrics says about a cluster follows it — its Machines by phase, the health
// of the connection to its workload cluster, the core's reconciles by result — and a deleted cluster's
// series go away.
func TestMetricsThatMatter(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, md := newCluster(ctx, g, ns, "observed", 2)
	g.Eventually(func(g Gomega) {
		g.Expect(running(machinesOf(ctx, g, ns, "observed"))).To(Equal(2))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	ofCluster := map[string]string{"namespace": ns, "cluster_name": "observed"}
	g.Eventually(func(g Gomega) {
		series, err := scrape.Series("capstan_machines", ofCluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(series).To(Equal(map[string]float64{`{cluster_name="observed",namespace="` + ns + `",phase="Running"}`: 2}))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	cacheLabels := map[string]string{"cluster_name": "observed", "cluster_namespace": ns}
	g.Eventually(func() (float64, error) {
		v, _, err := scrape.Value("capi_cluster_cache_connection_up", cacheLabels)
		return v, err
	}, 30*time.Second).Should(Equal(1.0))

	for _, controller := range []string{"cluster", "machine", "machineset", "machinedeployment"} {
		n, err := scrape.Sum("capstan_reconcile_results_total", map[string]string{"controller": controller, "result": "success"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(n).To(BeNumerically(">", 0), "the %s controller's successful reconciles are counted", controller)
	}

	// Scaling down: one Machine is deleted, the count follows.
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(md), md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](1)
		return env.Client.Update(ctx, md)
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func() (float64, error) {
		return scrape.Sum("capstan_machines", ofCluster)
	}, 90*time.Second, 250*time.Millisecond).Should(Equal(1.0))

	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), &clusterv1.Cluster{})).NotTo(Succeed())
		machines, err := scrape.Series("capstan_machines", ofCluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(machines).To(BeEmpty())
		conn, err := scrape.Series("capi_cluster_cache_connection_up", cacheLabels)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(conn).To(BeEmpty())
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())
}

package clustercache

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestConnectsOnDemandAndDisconnectsWhenIdle: with an IdleTimeout a workload cluster is connected only once
// a controller asks for it, stays connected while it is used, and once nobody asks for it for the idle
// timeout it holds no connection to the workload API server and is not probed; asking again connects again.
func TestConnectsOnDemandAndDisconnectsWhenIdle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const idle = 3 * time.Second
	cc := startClusterCache(t, ns, Options{IdleTimeout: idle, HealthProbeInterval: 200 * time.Millisecond})
	sources := newQueueWatcher(t)
	g.Expect(sources.Watch(cc.ClusterSource(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	}))).To(Succeed())

	server, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	p := newProxy(t, server.Host, false)
	createNode(t, env.Client, "on-demand-"+ns, "test://on-demand-"+ns)
	key := createCluster(t, ns, "on-demand", p.config(env.Config))
	labels := map[string]string{"cluster_name": key.Name, "cluster_namespace": key.Namespace}

	// Nobody asked for the cluster: the Cluster and its kubeconfig are there, nothing connects.
	g.Consistently(func() int { return len(p.accepted) }, 2*time.Second, 100*time.Millisecond).Should(BeZero(),
		"a cluster nobody asked for is not connected")
	g.Expect(cc.Health(key)).To(Equal(Health{}))

	// The first ask answers at once that the cluster is not connected, and connects it; the ClusterSource says so.
	_, err = cc.GetClient(ctx, key)
	g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue())
	g.Expect(sources.next(t, 30*time.Second)).To(Equal(reconcile.Request{NamespacedName: key}))
	first, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	nodes := &corev1.NodeList{}
	g.Expect(first.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: "test://on-demand-" + ns})).To(Succeed())
	g.Expect(nodes.Items).To(HaveLen(1))
	g.Expect(p.live.Load()).To(BeNumerically(">", 0))

	// Used more often than the idle timeout, it stays connected (the same connection) for longer than it.
	for deadline := time.Now().Add(2 * idle); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		c, err := cc.GetClient(ctx, key)
		g.Expect(err).NotTo(HaveOccurred(), "a cluster in use stays connected")
		g.Expect(c).To(BeIdenticalTo(first))
	}
	g.Eventually(metric("capi_cluster_cache_connection_up", labels)).Should(Equal(1.0))

	// Left alone, it is disconnected: no connection to its API server, hence no probe, and no metrics.
	g.Eventually(p.live.Load, 30*time.Second, 100*time.Millisecond).Should(BeZero(), "an idle cluster holds no connection")
	g.Expect(cc.Health(key).Connected).To(BeFalse())
	g.Expect(metric("capi_cluster_cache_connection_up", labels)()).To(Equal(-1.0), "an idle cluster is not reported as down")
	for len(p.accepted) > 0 {
		<-p.accepted
	}
	probes := metric("capi_cluster_cache_healthchecks_total", withStatus(labels, "success"))
	g.Consistently(func() int { return len(p.accepted) + int(p.live.Load()) }, 2*time.Second, 100*time.Millisecond).Should(BeZero(),
		"an idle cluster is not probed (probe interval 200 ms)")
	g.Expect(probes()).To(Equal(-1.0))
	g.Expect(sources.queue.Len()).To(BeZero(), "the controllers are not told about an idle disconnection")

	// Asked again, it is connected again.
	_, err = cc.GetClient(ctx, key)
	g.Expect(errors.Is(err, ErrClusterNotConnected)).To(BeTrue())
	g.Expect(sources.next(t, 30*time.Second)).To(Equal(reconcile.Request{NamespacedName: key}))
	again, err := cc.GetClient(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).NotTo(BeIdenticalTo(first))
	g.Expect(again.List(ctx, nodes, client.MatchingFields{NodeProviderIDField: "test://on-demand-" + ns})).To(Succeed())
	g.Expect(nodes.Items).To(HaveLen(1))
	g.Expect(p.live.Load()).To(BeNumerically(">", 0))
}

package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// TestIdleClustersAreQuiet: once the Machines of Clusters are Running and nothing changes, the core writes
// nothing to the management API server (issue 21: no object's resourceVersion changes at idle except what
// the workload clusters own). It waits for the writes of the clusters' creation to end, then watches 20
// seconds of the controllers' own requeues, the Nodes' heartbeats, and reconciles of every object as a
// resync brings (an annotation of the test's every 5 seconds on each Cluster, MachineSet and Machine, which
// changes nothing the controllers read, and whose events also reconcile the MachineDeployments; a
// MachineDeployment's annotations are propagated to its MachineSets, as upstream's).
func TestIdleClustersAreQuiet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const clusters, replicas = 2, 2
	for _, name := range []string{"idle-a", "idle-b"} {
		newCluster(ctx, g, ns, name, replicas)
	}
	g.Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(running(list.Items)).To(Equal(clusters * replicas))
	}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())
	running := time.Now()

	coreWrites := func() apicount.Counts {
		out := apicount.Counts{}
		for k, n := range requests.Snapshot().InNamespace(ns) {
			if k.Agent != stack.ProviderUserAgent && apicount.IsWrite(k.Verb) && k.Resource != "events" {
				out[k] = n
			}
		}
		return out
	}
	// Settled: five seconds without a write of the core.
	last, quietSince := coreWrites(), time.Now()
	g.Eventually(func() time.Duration {
		if now := coreWrites(); len(now.Since(last)) > 0 {
			last, quietSince = now, time.Now()
		}
		return time.Since(quietSince)
	}, 2*time.Minute, 250*time.Millisecond).Should(BeNumerically(">=", 5*time.Second),
		"the core keeps writing after the Machines are Running")

	t.Logf("settled %s after the Machines were Running", time.Since(running))

	// The kubelets' heartbeats go on: every Node's Ready condition is renewed every 2 seconds.
	stop := make(chan struct{})
	defer close(stop)
	go heartbeat(ctx, t, ns, stop)
	go touch(ctx, t, ns, stop)
	g.Consistently(func() string {
		return coreWrites().Since(last).String()
	}, 20*time.Second, time.Second).Should(BeEmpty(), "the core's writes while the clusters are idle")
}

// heartbeat renews the lastHeartbeatTime of the Ready condition of the Nodes of namespace ns's Machines
// every 2 seconds until stop is closed, as kubelets do.
func heartbeat(ctx context.Context, t *testing.T, ns string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Second):
		}
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, machines, client.InNamespace(ns)); err != nil {
			t.Logf("listing Machines: %v", err)
			continue
		}
		for _, m := range machines.Items {
			if m.Status.NodeRef == nil {
				continue
			}
			node := &corev1.Node{}
			if err := workload.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node); err != nil {
				t.Logf("getting Node %s: %v", m.Status.NodeRef.Name, err)
				continue
			}
			for i := range node.Status.Conditions {
				node.Status.Conditions[i].LastHeartbeatTime = metav1.Now()
			}
			if err := workload.Client.Status().Update(ctx, node); err != nil {
				t.Logf("renewing Node %s: %v", node.Name, err)
			}
		}
	}
}

// touch annotates every Cluster, MachineSet and Machine of namespace ns every 5 seconds
// until stop is closed, so that each is reconciled as at a resync.
func touch(ctx context.Context, t *testing.T, ns string, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Second):
		}
		for _, list := range []client.ObjectList{&clusterv1.ClusterList{}, &clusterv1.MachineSetList{}, &clusterv1.MachineList{}} {
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				t.Logf("listing: %v", err)
				continue
			}
			items, _ := metaItems(list)
			for _, obj := range items {
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.capstan.dev/touched":"%d"}}}`, n)
				if err := env.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
					t.Logf("annotating %s: %v", obj.GetName(), err)
				}
			}
		}
	}
}

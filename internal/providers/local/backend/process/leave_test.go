package process

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// TestLeavingTheEndpointDropsNoRequest: a control plane machine whose Machine is deleted first leaves the
// cluster's endpoint (its API server stops taking new connections and stops gracefully, sending its
// clients to the others), then loses its etcd member and its processes. Clients of the endpoint, with
// connections kept alive, see no failed request. Before, the endpoint closed the connections to the API
// server when its etcd member was removed, failing a request in flight ("unexpected EOF", 1 of 633 in a
// CI run of the rolling upgrade).
func TestLeavingTheEndpointDropsNoRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	b, key, certs, status := clusterOfOne(t, g)
	ensureMachine(g, b, key, controlPlaneMachine("b"))
	g.Eventually(func() int {
		c := b.get(key)
		c.statusMu.Lock()
		defer c.statusMu.Unlock()
		return c.status.APIServers
	}, 60*time.Second, 200*time.Millisecond).Should(Equal(2))

	// Clients that keep their connections, as controllers do: some are on b's API server.
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var requests atomic.Int64
	var mu sync.Mutex
	var failures []string
	for range 4 {
		cs := adminClient(t, certs.CA, status.Port)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				// A large answer (the OpenAPI document, megabytes) is long in flight.
				_, err := cs.CoreV1().RESTClient().Get().AbsPath("/openapi/v2").DoRaw(cctx)
				if cctx.Err() != nil {
					return
				}
				requests.Add(1)
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %v", time.Now().Format(time.StampMilli), err))
					mu.Unlock()
				}
			}
		}()
	}
	// The clients run for a while: some have connections to b's API server.
	time.Sleep(2 * time.Second)

	t.Log("machine b leaves the endpoint")
	g.Eventually(func() bool {
		done, err := b.LeaveEndpoint(ctx, key, "b")
		g.Expect(err).NotTo(HaveOccurred())
		return done
	}, 60*time.Second, 200*time.Millisecond).Should(BeTrue())
	// The clients go on through the endpoint a while with b out of it.
	time.Sleep(time.Second)
	t.Log("b's etcd member is removed, as the control plane provider does once the pre-terminate hooks are gone")
	removeMember(g, b, key, "b")
	// Time for the probe loop to find b's API server unready, as it would once the member is removed.
	time.Sleep(3 * time.Second)
	t.Log("machine b is deleted: its processes, its data")
	g.Eventually(func() error { return b.DeleteMachine(ctx, key, "b") }, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	// The clients go on after the deletion.
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()

	t.Logf("%d requests, %d failed", requests.Load(), len(failures))
	g.Expect(requests.Load()).To(BeNumerically(">", 20))
	g.Expect(failures).To(BeEmpty())

	// A machine that is the only control plane has nowhere to send its clients: it stays.
	done, err := b.LeaveEndpoint(ctx, key, "a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	st, err := b.EnsureMachine(ctx, key, controlPlaneMachine("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.ControlPlaneReady).To(BeTrue(), "%s: %s", st.Reason, st.Message)
}

// removeMember removes a machine's etcd member through another member, as kubeadm's control plane
// provider does.
func removeMember(g Gomega, b *Backend, key types.NamespacedName, name string) {
	c := b.get(key)
	c.mu.Lock()
	peer := etcdURL(c.st.Machines[name].EtcdPeerPort)
	var others []int
	for n, st := range c.st.Machines {
		if n != name && st.EtcdJoined {
			others = append(others, st.EtcdClientPort)
		}
	}
	c.mu.Unlock()
	cli, err := etcdClient(c.etcdTLS, others...)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = cli.Close() }()
	members, err := cli.MemberList(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	for _, m := range members.Members {
		if slices.Contains(m.PeerURLs, peer) {
			_, err := cli.MemberRemove(context.Background(), m.ID)
			g.Expect(err).NotTo(HaveOccurred())
			return
		}
	}
	g.Expect(peer).To(BeEmpty(), "no member has the peer URL")
}

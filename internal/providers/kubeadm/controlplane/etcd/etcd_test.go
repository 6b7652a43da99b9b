package etcd

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/loopback"
)

// startCluster starts a real etcd cluster of n members named node-0..node-n-1 on loopback (plain
// connections) and returns a Generator that dials each member's Pod name to its client port.
func startCluster(t *testing.T, n int) *Generator {
	t.Helper()
	g := NewWithT(t)
	bin, err := binaries.Find("etcd", "")
	if err != nil {
		t.Skipf("etcd is not built (make tools): %v", err)
	}
	clientPorts := map[string]int{}
	var initial []string
	peerPorts := make([]int, n)
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		cp, err := loopback.FreePort()
		g.Expect(err).NotTo(HaveOccurred())
		pp, err := loopback.FreePort()
		g.Expect(err).NotTo(HaveOccurred())
		clientPorts[PodName(name)], peerPorts[i] = cp, pp
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", name, pp))
	}
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		cp := clientPorts[PodName(name)]
		cmd := exec.Command(bin,
			"--name", name, "--data-dir", t.TempDir(),
			"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", cp),
			"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", cp),
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPorts[i]),
			"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPorts[i]),
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--listen-metrics-urls", "", "--log-level", "error")
		g.Expect(cmd.Start()).To(Succeed())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	return &Generator{
		DialPod: func(ctx context.Context, pod string) (net.Conn, error) {
			port, ok := clientPorts[pod]
			if !ok {
				return nil, fmt.Errorf("no pod %s", pod)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
		},
		DialTimeout: 5 * time.Second, CallTimeout: 10 * time.Second,
	}
}

func TestMembersLeadershipAndRemoval(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	gen := startCluster(t, 3)
	nodes := []string{"node-0", "node-1", "node-2"}

	var leader *Client
	g.Eventually(func() error {
		c, err := gen.ForLeader(ctx, nodes)
		if err == nil {
			leader = c
		}
		return err
	}, 60*time.Second, 500*time.Millisecond).Should(Succeed())
	defer func() { _ = leader.Close() }()
	g.Expect(leader.MemberID).To(Equal(leader.LeaderID), "ForLeader returns a client of the leader")

	// A member publishes its name and client URLs through raft after it joins, so right after the
	// election a member can still be listed unstarted; all three start within a few seconds.
	var members []*Member
	g.Eventually(func(g Gomega) {
		var err error
		members, err = leader.Members(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(members).To(HaveLen(3))
		for _, m := range members {
			g.Expect(m.Started()).To(BeTrue(), "member %x", m.ID)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	names := map[string]uint64{}
	for _, m := range members {
		names[m.Name] = m.ID
	}
	g.Expect(names).To(HaveKey("node-0"))
	alarms, err := leader.Alarms(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(alarms).To(BeEmpty())
	g.Expect(leader.Put(ctx, "/capstan/kept", "yes")).To(Succeed())

	// Move the leadership to another member, then remove the old leader's member: the data stays.
	var target string
	for n, id := range names {
		if id != leader.MemberID {
			target = n
			break
		}
	}
	g.Expect(leader.MoveLeader(ctx, names[target])).To(Succeed())
	var oldLeader string
	for n, id := range names {
		if id == leader.MemberID {
			oldLeader = n
		}
	}
	var rest []string
	for _, n := range nodes {
		if n != oldLeader {
			rest = append(rest, n)
		}
	}
	g.Eventually(func() (uint64, error) {
		c, err := gen.ForNode(ctx, target)
		if err != nil {
			return 0, err
		}
		defer func() { _ = c.Close() }()
		return c.LeaderID, nil
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(names[target]))

	c, err := gen.ForFirstAvailableNode(ctx, rest)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = c.Close() }()
	// etcd refuses to remove a member until the others have been connected for a few seconds.
	g.Eventually(func() error { return c.RemoveMember(ctx, names[oldLeader]) }, 30*time.Second, time.Second).Should(Succeed())
	g.Expect(c.RemoveMember(ctx, names[oldLeader])).To(Succeed(), "removing a removed member is not an error")
	members, err = c.Members(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(members).To(HaveLen(2))
	g.Expect(c.Get(ctx, "/capstan/kept")).To(Equal("yes"))
}

func TestForFirstAvailableNodeSkipsDeadMembers(t *testing.T) {
	g := NewWithT(t)
	gen := startCluster(t, 1)
	_, err := gen.ForNode(t.Context(), "missing")
	g.Expect(err).To(MatchError(ErrNodeConnection))
	var c *Client
	g.Eventually(func() (err error) {
		c, err = gen.ForFirstAvailableNode(t.Context(), []string{"missing", "node-0"})
		return err
	}, 60*time.Second, 500*time.Millisecond).Should(Succeed())
	defer func() { _ = c.Close() }()
	g.Expect(c.Endpoint).To(Equal("etcd-node-0"))
	_, err = gen.ForFirstAvailableNode(t.Context(), nil)
	g.Expect(err).To(MatchError(ContainSubstring("no control plane Node")))
}

package etcd

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/test/etcdtest"
)

// startCluster starts a real etcd cluster of n members named node-0..node-n-1 on loopback (plain
// connections) and returns a Generator that dials each member's Pod name to its client port. When the test
// fails, it prints what the members printed.
func startCluster(t *testing.T, n int) *Generator {
	t.Helper()
	c := etcdtest.Start(t, n)
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range c.Nodes {
				t.Logf("etcd member %s printed: %s", name, c.Output(name))
			}
		}
	})
	return &Generator{DialPod: c.DialPod, DialTimeout: 5 * time.Second, CallTimeout: 10 * time.Second}
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

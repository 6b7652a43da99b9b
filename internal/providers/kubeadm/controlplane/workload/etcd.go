package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
)

// EtcdState is what etcd says of itself, read through one member.
type EtcdState struct {
	// Endpoint is the member the state was read through.
	Endpoint string
	// Members are the cluster's members, Alarms its alarms, LeaderID its leader.
	Members  []*etcd.Member
	Alarms   []etcd.Alarm
	LeaderID uint64
	// Errors are the errors the member reported in its status.
	Errors []string
}

// EtcdState reads the members and alarms through the first member of nodes that answers; nodes should
// list the Nodes believed healthy first.
func (w *Cluster) EtcdState(ctx context.Context, nodes []string) (*EtcdState, error) {
	c, err := w.Etcd.ForFirstAvailableNode(ctx, nodes)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	s := &EtcdState{Endpoint: c.Endpoint, LeaderID: c.LeaderID, Errors: c.Errors}
	if s.Members, err = c.Members(ctx); err != nil {
		return s, err
	}
	if s.Alarms, err = c.Alarms(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// MemberAnswers reports whether the member on node answers a status call; nil when it does. The member
// state was read through (when state is not nil) answered one then: it is not asked again, which would open
// another port-forward and TLS connection for what the read just showed.
func (w *Cluster) MemberAnswers(ctx context.Context, node string, state *EtcdState) error {
	if state != nil && state.Endpoint == etcd.PodName(node) {
		return nil
	}
	c, err := w.Etcd.ForNode(ctx, node)
	if err != nil {
		return err
	}
	return c.Close()
}

// MemberForName returns the member named name, or nil.
func MemberForName(members []*etcd.Member, name string) *etcd.Member {
	for _, m := range members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// ForwardLeadership moves the etcd leadership to the member on node to, when the leader is the member on
// node from; nodes are the control plane Nodes to reach etcd through.
func (w *Cluster) ForwardLeadership(ctx context.Context, nodes []string, from, to string) error {
	if from == "" || to == "" || from == to {
		return nil
	}
	leader, err := w.Etcd.ForLeader(ctx, nodes)
	if err != nil {
		return fmt.Errorf("reaching the etcd leader: %w", err)
	}
	defer func() { _ = leader.Close() }()
	members, err := leader.Members(ctx)
	if err != nil {
		return err
	}
	current := MemberForName(members, from)
	if current == nil || current.ID != leader.LeaderID {
		return nil
	}
	target := MemberForName(members, to)
	if target == nil {
		return fmt.Errorf("no etcd member for Node %s to move the leadership to", to)
	}
	return leader.MoveLeader(ctx, target.ID)
}

// RemoveMember removes the etcd member of node, reaching etcd through the other nodes. It refuses to
// remove the last member. A member that is already gone is not an error.
func (w *Cluster) RemoveMember(ctx context.Context, nodes []string, node string) error {
	others := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == node })
	if len(others) == 0 {
		return errors.New("refusing to remove the last etcd member: there is no other control plane Node")
	}
	c, err := w.Etcd.ForFirstAvailableNode(ctx, others)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	members, err := c.Members(ctx)
	if err != nil {
		return err
	}
	m := MemberForName(members, node)
	if m == nil {
		return nil
	}
	if len(members) == 1 {
		return errors.New("refusing to remove the last etcd member")
	}
	return c.RemoveMember(ctx, m.ID)
}

// RemoveMembersWithoutNodes removes the started members whose name is not one of nodes (their Machine and
// Node are gone), and returns their names.
func (w *Cluster) RemoveMembersWithoutNodes(ctx context.Context, nodes []string) ([]string, error) {
	c, err := w.Etcd.ForFirstAvailableNode(ctx, nodes)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	members, err := c.Members(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, m := range members {
		if m.Name == "" || slices.Contains(nodes, m.Name) {
			continue
		}
		if err := c.RemoveMember(ctx, m.ID); err != nil {
			return removed, err
		}
		removed = append(removed, m.Name)
	}
	return removed, nil
}

package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.uber.org/zap"
)

// ErrNodeConnection is returned (wrapped) when a Node's member cannot be reached; the caller may try
// another Node.
var ErrNodeConnection = errors.New("cannot connect to the etcd member")

// PodName returns the name of the etcd Pod of a Node, as kubeadm names its static Pods.
func PodName(node string) string { return "etcd-" + node }

// Generator makes Clients for the members on control plane Nodes.
type Generator struct {
	// DialPod opens a connection to the etcd client port of a Pod.
	DialPod func(ctx context.Context, pod string) (net.Conn, error)
	TLS     *tls.Config
	// DialTimeout and CallTimeout of the Clients.
	DialTimeout, CallTimeout time.Duration
	Logger                   *zap.Logger
}

// ForNode returns a Client for the member on node.
func (g *Generator) ForNode(ctx context.Context, node string) (*Client, error) {
	pod := PodName(node)
	c, err := New(ctx, Config{
		Endpoint: pod,
		Dial: func(ctx context.Context, endpoint string) (net.Conn, error) {
			return g.DialPod(ctx, endpoint)
		},
		TLS: g.TLS, DialTimeout: g.DialTimeout, CallTimeout: g.CallTimeout, Logger: g.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%w on Node %s: %w", ErrNodeConnection, node, err)
	}
	return c, nil
}

// ForFirstAvailableNode returns a Client for the first of nodes whose member answers.
func (g *Generator) ForFirstAvailableNode(ctx context.Context, nodes []string) (*Client, error) {
	if len(nodes) == 0 {
		return nil, errors.New("no control plane Node to reach etcd through")
	}
	var errs []error
	for _, n := range nodes {
		c, err := g.ForNode(ctx, n)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no etcd member answers on Nodes %s: %w", strings.Join(nodes, ", "), errors.Join(errs...))
}

// ForLeader returns a Client for the leader, which must be the member of one of nodes.
func (g *Generator) ForLeader(ctx context.Context, nodes []string) (*Client, error) {
	if len(nodes) == 0 {
		return nil, errors.New("no control plane Node to reach etcd through")
	}
	known := map[string]bool{}
	for _, n := range nodes {
		known[n] = true
	}
	var errs []error
	for _, n := range nodes {
		c, err := g.ForNode(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		members, err := c.Members(ctx)
		if err != nil {
			_ = c.Close()
			errs = append(errs, err)
			continue
		}
		leaderID := c.LeaderID
		if leaderID == c.MemberID {
			return c, nil
		}
		_ = c.Close()
		for _, m := range members {
			if m.ID != leaderID {
				continue
			}
			if !known[m.Name] {
				return nil, fmt.Errorf("the etcd leader is member %x named %q, which has no control plane Node", m.ID, m.Name)
			}
			return g.ForNode(ctx, m.Name)
		}
		return nil, fmt.Errorf("the etcd leader is reported as %x, which is not a member", leaderID)
	}
	return nil, fmt.Errorf("cannot reach the etcd leader: %w", errors.Join(errs...))
}

package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// DefaultCallTimeout bounds each call to etcd unless told otherwise (upstream's
// --etcd-call-timeout-duration default).
const DefaultCallTimeout = 15 * time.Second

// DefaultDialTimeout bounds the connection to a member unless told otherwise (upstream's
// --etcd-dial-timeout-duration default).
const DefaultDialTimeout = 10 * time.Second

// Member is an etcd member.
type Member struct {
	// ID is the member's ID.
	ID uint64
	// Name is the member's name, the Node's name with kubeadm; empty until the member has started.
	Name string
	// PeerURLs are the URLs the member serves its peers on.
	PeerURLs []string
	// ClientURLs are the URLs the member serves clients on; empty until the member has started.
	ClientURLs []string
	// IsLearner says the member is a raft learner, not yet a voting member.
	IsLearner bool
}

// Started reports whether the member has started (it has a name and client URLs).
func (m *Member) Started() bool { return m.Name != "" && len(m.ClientURLs) > 0 }

// Alarm is an alarm raised on a member.
type Alarm struct {
	MemberID uint64
	// Type is NOSPACE or CORRUPT.
	Type string
}

// DialFunc opens a connection to the member serving endpoint.
type DialFunc func(ctx context.Context, endpoint string) (net.Conn, error)

// Config configures a Client.
type Config struct {
	// Endpoint names the member (the etcd Pod's name); it is handed to Dial and used as the TLS server name.
	Endpoint string
	// Dial opens the connections to the member.
	Dial DialFunc
	// TLS is the client's TLS configuration; nil for plain connections.
	TLS *tls.Config
	// DialTimeout and CallTimeout default to DefaultDialTimeout and DefaultCallTimeout.
	DialTimeout, CallTimeout time.Duration
	// Logger receives the etcd client's logs; none when nil.
	Logger *zap.Logger
}

// Client talks to one etcd member.
type Client struct {
	etcd        *clientv3.Client
	callTimeout time.Duration

	// Endpoint is the member's endpoint.
	Endpoint string
	// MemberID is the ID of the member the client talks to.
	MemberID uint64
	// LeaderID is the ID of the leader when the client was made; 0 when the member knows no leader.
	LeaderID uint64
	// Errors are the errors the member reported in its status.
	Errors []string
}

// New connects to the member of cfg.Endpoint and reads its status.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Dial == nil {
		return nil, errors.New("etcd client of " + cfg.Endpoint + ": no dial function")
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	dial := cfg.Dial
	c, err := clientv3.New(clientv3.Config{
		// The endpoint only names the member: the connection is made by Dial.
		Endpoints:   []string{cfg.Endpoint},
		DialTimeout: cfg.DialTimeout,
		DialOptions: []grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, cfg.Endpoint) }),
		},
		TLS:    cfg.TLS,
		Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the etcd client of %s: %w", cfg.Endpoint, err)
	}
	cl := &Client{etcd: c, callTimeout: cfg.CallTimeout, Endpoint: cfg.Endpoint}
	ctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
	defer cancel()
	// The status is asked over the client's connection: clientv3's Status dials the endpoint again, which
	// here is a second port-forward and TLS connection to the member the client is connected to.
	status, err := pb.NewMaintenanceClient(c.ActiveConnection()).Status(ctx, &pb.StatusRequest{})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("reading the status of etcd member %s: %w", cfg.Endpoint, err)
	}
	cl.LeaderID = status.Leader
	cl.MemberID = status.Header.GetMemberId()
	cl.Errors = status.Errors
	return cl, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.etcd.Close() }

// Members lists the members of the cluster.
func (c *Client) Members(ctx context.Context) ([]*Member, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.etcd.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the etcd members through %s: %w", c.Endpoint, err)
	}
	out := make([]*Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		out = append(out, &Member{ID: m.GetID(), Name: m.GetName(), PeerURLs: m.GetPeerURLs(), ClientURLs: m.GetClientURLs(), IsLearner: m.GetIsLearner()})
	}
	return out, nil
}

// Alarms lists the alarms raised on the members.
func (c *Client) Alarms(ctx context.Context) ([]Alarm, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.etcd.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the etcd alarms through %s: %w", c.Endpoint, err)
	}
	out := make([]Alarm, 0, len(resp.Alarms))
	for _, a := range resp.Alarms {
		out = append(out, Alarm{MemberID: a.GetMemberID(), Type: a.GetAlarm().String()})
	}
	return out, nil
}

// MoveLeader hands leadership to the member id. The client must talk to the current leader.
func (c *Client) MoveLeader(ctx context.Context, id uint64) error {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	if _, err := c.etcd.MoveLeader(ctx, id); err != nil {
		return fmt.Errorf("moving the etcd leadership to member %x: %w", id, err)
	}
	return nil
}

// RemoveMember removes the member id from the cluster. A member that is already gone is not an error.
func (c *Client) RemoveMember(ctx context.Context, id uint64) error {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	if _, err := c.etcd.MemberRemove(ctx, id); err != nil {
		if strings.Contains(err.Error(), "member not found") {
			return nil
		}
		return fmt.Errorf("removing etcd member %x: %w", id, err)
	}
	return nil
}

// Put writes a key; tests use it to check that data survives membership changes.
func (c *Client) Put(ctx context.Context, key, value string) error {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := c.etcd.Put(ctx, key, value)
	return err
}

// Get reads a key; "" when it does not exist.
func (c *Client) Get(ctx context.Context, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.etcd.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return "", err
	}
	return string(resp.Kvs[0].Value), nil
}

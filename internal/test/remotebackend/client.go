// Package remotebackend runs a local provider backend in another process: Serve serves a backend over
// net/rpc, Client is a backend.Backend that calls it, and Start re-executes the test binary as a child
// process serving a memory backend, so that a benchmark measures the managers apart from the fake
// workload clusters. The workload clusters' endpoints listen in the serving process; the managers reach
// them over loopback as they reach an in-process memory backend's.
package remotebackend

import (
	"context"
	"fmt"
	"net/rpc"

	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// Client is a backend.Backend served by another process (see Serve).
type Client struct {
	rpc *rpc.Client
	// Listeners implement OnChange.
	backend.Listeners
	done chan struct{}
}

var _ backend.Backend = (*Client)(nil)

// Dial connects to a backend served on the address (network "unix" or "tcp") and starts collecting its
// change notifications, until Close.
func Dial(network, address string) (*Client, error) {
	c, err := rpc.Dial(network, address)
	if err != nil {
		return nil, fmt.Errorf("connecting to the backend on %s: %w", address, err)
	}
	cl := &Client{rpc: c, done: make(chan struct{})}
	go cl.collectChanges()
	return cl, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	err := c.rpc.Close()
	<-c.done
	return err
}

func (c *Client) collectChanges() {
	defer close(c.done)
	for {
		var keys []types.NamespacedName
		if err := c.rpc.Call(serviceName+".Changes", struct{}{}, &keys); err != nil {
			return // closed
		}
		for _, k := range keys {
			c.Notify(k)
		}
	}
}

// call makes a call that returns early, with ctx's error, when ctx is done.
func (c *Client) call(ctx context.Context, method string, args, reply any) error {
	call := c.rpc.Go(serviceName+"."+method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			return fmt.Errorf("calling the backend's %s: %w", method, call.Error)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// EnsureCluster implements backend.Backend.
func (c *Client) EnsureCluster(ctx context.Context, spec backend.Cluster) (backend.ClusterStatus, error) {
	certs, err := encodeCerts(spec.Certificates)
	if err != nil {
		return backend.ClusterStatus{}, fmt.Errorf("encoding the cluster's certificates: %w", err)
	}
	var reply ClusterReply
	if err := c.call(ctx, "EnsureCluster", ClusterArgs{Key: spec.Key, ClusterName: spec.ClusterName, Port: spec.Port,
		Certs: certs, DataDir: spec.DataDir}, &reply); err != nil {
		return backend.ClusterStatus{}, err
	}
	return reply.Status, reply.Err.err()
}

// StoredCertificates implements backend.Backend.
func (c *Client) StoredCertificates(key types.NamespacedName) (backend.Certificates, error) {
	var reply CertsReply
	if err := c.call(context.Background(), "StoredCertificates", KeyArgs{Key: key}, &reply); err != nil {
		return backend.Certificates{}, err
	}
	if err := reply.Err.err(); err != nil {
		return backend.Certificates{}, err
	}
	return decodeCerts(reply.Certs)
}

// DeleteCluster implements backend.Backend.
func (c *Client) DeleteCluster(ctx context.Context, key types.NamespacedName) error {
	var reply ErrReply
	if err := c.call(ctx, "DeleteCluster", KeyArgs{Key: key}, &reply); err != nil {
		return err
	}
	return reply.Err.err()
}

// ReleaseCluster implements backend.Backend.
func (c *Client) ReleaseCluster(ctx context.Context, key types.NamespacedName) error {
	var reply ErrReply
	if err := c.call(ctx, "ReleaseCluster", KeyArgs{Key: key}, &reply); err != nil {
		return err
	}
	return reply.Err.err()
}

// EnsureMachine implements backend.Backend.
func (c *Client) EnsureMachine(ctx context.Context, key types.NamespacedName, m backend.Machine) (backend.MachineStatus, error) {
	var reply MachineReply
	if err := c.call(ctx, "EnsureMachine", MachineArgs{Key: key, Machine: m}, &reply); err != nil {
		return backend.MachineStatus{}, err
	}
	return reply.Status, reply.Err.err()
}

// Machines implements backend.Backend.
func (c *Client) Machines(ctx context.Context, key types.NamespacedName) ([]string, error) {
	var reply NamesReply
	if err := c.call(ctx, "Machines", KeyArgs{Key: key}, &reply); err != nil {
		return nil, err
	}
	return reply.Names, reply.Err.err()
}

// DeleteMachine implements backend.Backend.
func (c *Client) DeleteMachine(ctx context.Context, key types.NamespacedName, name string) error {
	var reply ErrReply
	if err := c.call(ctx, "DeleteMachine", DeleteMachineArgs{Key: key, Name: name}, &reply); err != nil {
		return err
	}
	return reply.Err.err()
}

// ClusterConfiguration implements backend.Backend.
func (c *Client) ClusterConfiguration(ctx context.Context, key types.NamespacedName) ([]byte, error) {
	var reply BytesReply
	if err := c.call(ctx, "ClusterConfiguration", KeyArgs{Key: key}, &reply); err != nil {
		return nil, err
	}
	return reply.Data, reply.Err.err()
}

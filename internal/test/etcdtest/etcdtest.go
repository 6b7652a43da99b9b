// Package etcdtest starts real etcd clusters on loopback for tests: members named node-0..node-<n-1> as
// kubeadm names them after their Nodes, reached through a dial function that maps each member's Pod name
// (etcd-<node>) to its client port, as the control plane provider reaches them through port-forwards.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/loopback"
)

// Cluster is a running etcd cluster of plain (non-TLS) members.
type Cluster struct {
	// Nodes are the members' names, node-0 first.
	Nodes []string

	mu          sync.Mutex
	clientPorts map[string]int
	cmds        map[string]*exec.Cmd
}

// Start starts n members on loopback and stops them when the test ends. It skips the test when etcd is
// not built (make tools).
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, err := binaries.Find("etcd", "")
	if err != nil {
		t.Skipf("etcd is not built (make tools): %v", err)
	}
	c := &Cluster{clientPorts: map[string]int{}, cmds: map[string]*exec.Cmd{}}
	var initial []string
	peerPorts := map[string]int{}
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		cp, err := loopback.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		pp, err := loopback.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, name)
		c.clientPorts[name], peerPorts[name] = cp, pp
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", name, pp))
	}
	for _, name := range c.Nodes {
		cp, pp := c.clientPorts[name], peerPorts[name]
		cmd := exec.Command(bin,
			"--name", name, "--data-dir", t.TempDir(),
			"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", cp),
			"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", cp),
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", pp),
			"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", pp),
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--listen-metrics-urls", "", "--log-level", "error")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.cmds[name] = cmd
	}
	t.Cleanup(func() {
		for _, name := range c.Nodes {
			c.Kill(name)
		}
	})
	return c
}

// DialPod opens a connection to the client port of the member of the etcd Pod pod (etcd-<node>).
func (c *Cluster) DialPod(ctx context.Context, pod string) (net.Conn, error) {
	c.mu.Lock()
	port, ok := c.clientPorts[strings.TrimPrefix(pod, "etcd-")]
	c.mu.Unlock()
	if !ok || !strings.HasPrefix(pod, "etcd-") {
		return nil, fmt.Errorf("no etcd pod %s", pod)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

// Kill kills the member named node (SIGKILL) and waits for it to exit; a member killed already is left
// alone.
func (c *Cluster) Kill(node string) {
	c.mu.Lock()
	cmd := c.cmds[node]
	delete(c.cmds, node)
	c.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

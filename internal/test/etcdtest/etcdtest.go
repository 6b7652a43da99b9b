// Package etcdtest starts real etcd clusters on loopback for tests: members named node-0..node-<n-1> as
// kubeadm names them after their Nodes, reached through a dial function that maps each member's Pod name
// (etcd-<node>) to its client port, as the control plane provider reaches them through port-forwards.
package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/loopback"
)

// startAttempts is how many times Start starts the whole cluster on new ports when a member exits at
// start (another process took one of the ports FreePort found between the check and etcd's bind).
const startAttempts = 3

// listenTimeout bounds the wait for every member to listen on its client port.
const listenTimeout = 60 * time.Second

// Cluster is a running etcd cluster of plain (non-TLS) members.
type Cluster struct {
	// Nodes are the members' names, node-0 first.
	Nodes []string

	mu          sync.Mutex
	clientPorts map[string]int
	members     map[string]*member
}

// member is one etcd process: exited is closed when it has exited, and stderr holds what it printed.
type member struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{}
}

// lockedBuffer is a bytes.Buffer written by the process's copier and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Start starts n members on loopback, waits until each listens on its client port, and stops them when the
// test ends. It skips the test when etcd is not built (make tools). A member that exits at start fails the
// test with what it printed, after startAttempts tries on new ports.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, err := binaries.Find("etcd", "")
	if err != nil {
		t.Skipf("etcd is not built (make tools): %v", err)
	}
	for attempt := 1; ; attempt++ {
		c, err := start(t, bin, n)
		if err == nil {
			t.Cleanup(func() {
				for _, name := range c.Nodes {
					c.Kill(name)
				}
			})
			return c
		}
		if attempt == startAttempts {
			t.Fatalf("starting an etcd cluster of %d members (%d attempts): %v", n, attempt, err)
		}
		t.Logf("starting an etcd cluster of %d members again on other ports: %v", n, err)
	}
}

// start starts the members and waits for them to listen; on an error it has stopped them all.
func start(t testing.TB, bin string, n int) (*Cluster, error) {
	c := &Cluster{clientPorts: map[string]int{}, members: map[string]*member{}}
	var initial []string
	peerPorts := map[string]int{}
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		cp, err := loopback.FreePort()
		if err != nil {
			return nil, err
		}
		pp, err := loopback.FreePort()
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, name)
		c.clientPorts[name], peerPorts[name] = cp, pp
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", name, pp))
	}
	stopAll := func() {
		for _, name := range c.Nodes {
			c.Kill(name)
		}
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
		m := &member{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
		cmd.Stderr = m.stderr
		if err := cmd.Start(); err != nil {
			stopAll()
			return nil, fmt.Errorf("starting etcd member %s: %w", name, err)
		}
		go func() {
			_ = cmd.Wait()
			close(m.exited)
		}()
		c.mu.Lock()
		c.members[name] = m
		c.mu.Unlock()
	}
	deadline := time.Now().Add(listenTimeout)
	for _, name := range c.Nodes {
		if err := c.waitListening(name, deadline); err != nil {
			stopAll()
			return nil, err
		}
	}
	return c, nil
}

// waitListening waits until the member named name accepts connections on its client port.
func (c *Cluster) waitListening(name string, deadline time.Time) error {
	c.mu.Lock()
	m, port := c.members[name], c.clientPorts[name]
	c.mu.Unlock()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for {
		select {
		case <-m.exited:
			return fmt.Errorf("etcd member %s exited at start (%v): %s", name, m.cmd.ProcessState, strings.TrimSpace(m.stderr.String()))
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd member %s does not listen on %s after %s: %w; it printed: %s", name, addr, listenTimeout, err, strings.TrimSpace(m.stderr.String()))
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	m := c.members[node]
	delete(c.members, node)
	c.mu.Unlock()
	if m != nil {
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
}

// Output is what the member named node printed on its standard error (log level error), for a test's
// failure message.
func (c *Cluster) Output(node string) string {
	c.mu.Lock()
	m := c.members[node]
	c.mu.Unlock()
	if m == nil {
		return ""
	}
	return m.stderr.String()
}

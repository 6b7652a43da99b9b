// Package portforward dials a port of a Pod through the portforward subresource of the API server that
// serves the Pod, as `kubectl port-forward` does, and hands the stream over as a net.Conn. The kubeadm
// control plane provider reaches each etcd member this way (the etcd Pod's port 2379 on its Node), so it
// needs no network route to the workload cluster's machines, only to its API server.
package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream" //nolint:staticcheck // client-go's spdy transport still returns this package's types.
	"k8s.io/client-go/rest"

	"k8s.io/client-go/transport/spdy"
)

// Dialer opens connections to Pods' ports through an API server.
type Dialer struct {
	host     *url.URL
	apiPath  string
	client   *http.Client
	upgrader spdy.Upgrader
	// Timeout bounds the upgrade of the HTTP connection to a stream connection.
	timeout time.Duration
	ids     atomic.Int64
}

// DefaultTimeout bounds a dial of a Dialer made with no timeout.
const DefaultTimeout = 10 * time.Second

// NewDialer returns a Dialer through the API server of cfg. timeout bounds each dial (the HTTP upgrade and
// the creation of the streams); DefaultTimeout when 0 or negative.
func NewDialer(cfg *rest.Config, timeout time.Duration) (*Dialer, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the stream transport to %s: %w", cfg.Host, err)
	}
	// Pods are in the core group, served under /api whatever cfg.APIPath says.
	host, apiPath, err := rest.DefaultServerURL(cfg.Host, "/api", corev1.SchemeGroupVersion, rest.IsConfigTransportTLS(*cfg))
	if err != nil {
		return nil, fmt.Errorf("reading the API server address %q: %w", cfg.Host, err)
	}
	if host.Scheme == "" {
		host.Scheme = "https"
	}
	return &Dialer{host: host, apiPath: apiPath, client: &http.Client{Transport: rt}, upgrader: upgrader, timeout: timeout}, nil
}

// URL returns the portforward URL of a Pod.
func (d *Dialer) URL(namespace, pod string) *url.URL {
	u := *d.host
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + strings.Trim(d.apiPath, "/") + "/namespaces/" + url.PathEscape(namespace) +
		"/pods/" + url.PathEscape(pod) + "/portforward"
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	return &u
}

// Dial opens a connection to port of the Pod namespace/pod. The connection is a stream of a new stream
// connection to the API server; closing it closes both. The upgrade and the creation of the streams are
// bounded by ctx and the Dialer's timeout: a server that does not answer never blocks the caller.
func (d *Dialer) Dial(ctx context.Context, namespace, pod string, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	type result struct {
		conn *streamConn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := d.dial(namespace, pod, port)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("opening a port-forward to pod %s/%s: %w", namespace, pod, r.err)
		}
		return r.conn, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("opening a port-forward to pod %s/%s: %w", namespace, pod, ctx.Err())
	}
}

func (d *Dialer) dial(namespace, pod string, port int) (*streamConn, error) {
	dialer := spdy.NewDialer(d.upgrader, d.client, http.MethodPost, d.URL(namespace, pod))
	conn, _, err := dialer.Dial(protocolV1)
	if err != nil {
		return nil, err
	}
	id := strconv.FormatInt(d.ids.Add(1), 10)
	headers := http.Header{}
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	headers.Set(corev1.PortHeader, strconv.Itoa(port))
	headers.Set(corev1.PortForwardRequestIDHeader, id)
	errorStream, err := conn.CreateStream(headers)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("creating the error stream: %w", err)
	}
	// Nothing is ever written to the error stream: half-close it so the server sees that.
	_ = errorStream.Close()
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	dataStream, err := conn.CreateStream(headers)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("creating the data stream: %w", err)
	}
	c := newStreamConn(conn, dataStream, addr(fmt.Sprintf("%s/%s:%d", namespace, pod, port)))
	go c.watchErrors(errorStream)
	return c, nil
}

// streamConn is a port-forward data stream as a net.Conn. The streams cannot be interrupted, so the
// caller's end is one side of a net.Pipe, which has deadlines, copied to and from the stream: a read or
// write past its deadline fails with os.ErrDeadlineExceeded (a timeout net.Error), and a later deadline
// makes the connection usable again.
type streamConn struct {
	net.Conn // the caller's end of the pipe
	peer     net.Conn
	conn     httpstream.Connection
	data     httpstream.Stream
	addr     net.Addr

	mu        sync.Mutex
	remoteErr error
	closeOnce sync.Once
}

func newStreamConn(conn httpstream.Connection, data httpstream.Stream, a net.Addr) *streamConn {
	user, peer := net.Pipe()
	c := &streamConn{Conn: user, peer: peer, conn: conn, data: data, addr: a}
	// From the Pod: when its stream ends, the caller reads EOF.
	go func() {
		_, _ = io.Copy(peer, data)
		_ = peer.Close()
	}()
	// To the Pod: when the caller closes its end, everything is closed.
	go func() {
		_, _ = io.Copy(data, peer)
		_ = c.Close()
	}()
	return c
}

// watchErrors closes the connection when the server reports an error on the error stream (the Pod's port
// refused the connection, for example), so that readers see it instead of hanging.
func (c *streamConn) watchErrors(errorStream httpstream.Stream) {
	msg, err := io.ReadAll(errorStream)
	if err == nil && len(msg) > 0 {
		c.mu.Lock()
		c.remoteErr = fmt.Errorf("port-forward to %s: %s", c.addr, strings.TrimSpace(string(msg)))
		c.mu.Unlock()
		_ = c.Close()
	}
}

// err is the error the server reported on the error stream, if any.
func (c *streamConn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remoteErr
}

func (c *streamConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	if remote := c.err(); remote != nil {
		return n, remote
	}
	return n, err
}

func (c *streamConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	if remote := c.err(); remote != nil {
		return n, errors.Join(err, remote)
	}
	return n, err
}

// Close closes the pipe, the stream and its connection. It does not wait for the server: a server that
// stopped answering never blocks the caller.
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.Conn.Close()
		_ = c.peer.Close()
		go func() {
			c.conn.RemoveStreams(c.data)
			_ = c.data.Reset()
			_ = c.conn.Close()
		}()
	})
	return nil
}

func (c *streamConn) LocalAddr() net.Addr  { return c.addr }
func (c *streamConn) RemoteAddr() net.Addr { return c.addr }

type addr string

func (a addr) Network() string { return "portforward" }
func (a addr) String() string  { return string(a) }

// protocolV1 is the stream protocol of the portforward subresource (client-go's
// portforward.PortForwardProtocolV1Name, whose package pulls in the websocket tunnel this dialer does not use).
const protocolV1 = "portforward.k8s.io"

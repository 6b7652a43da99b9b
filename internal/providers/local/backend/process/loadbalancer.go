package process

import (
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// loadBalancer is a cluster's endpoint: a TCP proxy on 127.0.0.1:<port> in the provider's process that
// forwards each connection to one of the healthy API servers of the cluster's control plane machines,
// round robin, so that the endpoint stays while control plane machines come and go. TLS passes through:
// clients see the API servers' certificates, which are valid for 127.0.0.1.
type loadBalancer struct {
	listener net.Listener
	log      logr.Logger

	mu       sync.Mutex
	backends []int // ports of ready API servers
	next     int
	conns    map[net.Conn]struct{}
	// upstreams maps the connections to API servers to their ports, so that the connections to an API
	// server that stops being ready are closed (as a load balancer's shutdown-sessions does): an API
	// server whose etcd member was removed keeps its connections open but answers no request.
	upstreams map[net.Conn]int
	closed    bool
	done      chan struct{}
}

// listenLoadBalancer starts a load balancer on port; it forwards nothing until setBackends.
func listenLoadBalancer(port int, log logr.Logger) (*loadBalancer, error) {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	lb := &loadBalancer{listener: l, log: log, conns: map[net.Conn]struct{}{}, upstreams: map[net.Conn]int{}, done: make(chan struct{})}
	go lb.serve()
	return lb, nil
}

// setBackends replaces the API servers connections go to, and closes the connections to the API servers
// that are no longer among them, but those of the draining ones: a draining API server stops on its own,
// finishing its requests in flight and closing its connections.
func (lb *loadBalancer) setBackends(ports []int, draining ...int) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.backends = ports
	for conn, port := range lb.upstreams {
		if !slices.Contains(ports, port) && !slices.Contains(draining, port) {
			_ = conn.Close()
			delete(lb.upstreams, conn)
		}
	}
}

// pick returns the backends to try, starting with the next in turn.
func (lb *loadBalancer) pick() []int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	n := len(lb.backends)
	out := make([]int, 0, n)
	for i := range n {
		out = append(out, lb.backends[(lb.next+i)%n])
	}
	lb.next++
	return out
}

func (lb *loadBalancer) serve() {
	defer close(lb.done)
	for {
		conn, err := lb.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			lb.log.Error(err, "Accepting a connection on the cluster's endpoint")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if !lb.track(conn, true) {
			_ = conn.Close()
			return
		}
		go lb.forward(conn)
	}
}

// track adds or removes a connection of the set closed with the load balancer.
func (lb *loadBalancer) track(conn net.Conn, add bool) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if add {
		if lb.closed {
			return false
		}
		lb.conns[conn] = struct{}{}
	} else {
		delete(lb.conns, conn)
		delete(lb.upstreams, conn)
	}
	return true
}

// trackUpstream tracks a connection to the API server on port; false when the load balancer is closed or
// the API server stopped being a backend meanwhile.
func (lb *loadBalancer) trackUpstream(conn net.Conn, port int) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.closed || !slices.Contains(lb.backends, port) {
		return false
	}
	lb.conns[conn] = struct{}{}
	lb.upstreams[conn] = port
	return true
}

func (lb *loadBalancer) forward(client net.Conn) {
	defer lb.track(client, false)
	defer func() { _ = client.Close() }()
	var upstream net.Conn
	upstreamPort := 0
	for _, port := range lb.pick() {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
		if err == nil {
			upstream, upstreamPort = c, port
			break
		}
	}
	if upstream == nil {
		return // no API server is ready: the client sees the connection closed
	}
	if !lb.trackUpstream(upstream, upstreamPort) {
		_ = upstream.Close()
		return
	}
	defer lb.track(upstream, false)
	defer func() { _ = upstream.Close() }()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(upstream, client)
	go pipe(client, upstream)
	<-done
	<-done
}

// close stops listening and closes every connection.
func (lb *loadBalancer) close() {
	lb.mu.Lock()
	lb.closed = true
	conns := make([]net.Conn, 0, len(lb.conns))
	for c := range lb.conns {
		conns = append(conns, c)
	}
	lb.mu.Unlock()
	_ = lb.listener.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	<-lb.done
}

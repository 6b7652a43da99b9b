// Package stallproxy is a TCP proxy on loopback for tests that stall a peer: it passes traffic through, or
// delays every chunk it forwards, or drops every connection and refuses new ones (a management API server
// that restarts slowly, a network partition).
package stallproxy

import (
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy on loopback in front of a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	delay time.Duration
	drop  bool
	conns map[net.Conn]struct{}
}

// New starts a proxy to target (host:port) on a free port of 127.0.0.1.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() { _ = p.ln.Close(); p.SetDrop(true) }

// SetDelay delays each chunk by d from now on (0: pass through).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// SetDrop drops every open connection and refuses new ones while on.
func (p *Proxy) SetDrop(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = on
	if on {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func (p *Proxy) state() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay, p.drop
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if _, drop := p.state(); drop {
			_ = c.Close()
			continue
		}
		go p.handle(c)
	}
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drop {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
		_ = c.Close()
	}
}

func (p *Proxy) handle(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, up) {
		p.untrack(c, up)
		return
	}
	defer p.untrack(c, up)
	done := make(chan struct{}, 2)
	go func() { p.copy(up, c); done <- struct{}{} }()
	go func() { p.copy(c, up); done <- struct{}{} }()
	<-done
}

// copy forwards src to dst, each chunk after the delay in force when it was read.
func (p *Proxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d, _ := p.state(); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

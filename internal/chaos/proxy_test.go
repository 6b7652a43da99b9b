package chaos

import (
	"io"
	"net"
	"sync"
	"time"
)

// stallProxy is a TCP proxy on loopback in front of the management API server. It passes traffic through,
// or stalls it: delays every chunk it forwards, or drops every connection and refuses new ones.
type stallProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	delay time.Duration
	drop  bool
	conns map[net.Conn]struct{}
}

func newStallProxy(target string) (*stallProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &stallProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

func (p *stallProxy) close() { _ = p.ln.Close(); p.setDrop(true) }

// setDelay delays each chunk by d from now on (0: pass through).
func (p *stallProxy) setDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// setDrop drops every open connection and refuses new ones while on.
func (p *stallProxy) setDrop(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = on
	if on {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func (p *stallProxy) state() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay, p.drop
}

func (p *stallProxy) serve() {
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

func (p *stallProxy) track(conns ...net.Conn) bool {
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

func (p *stallProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
		_ = c.Close()
	}
}

func (p *stallProxy) handle(c net.Conn) {
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
func (p *stallProxy) copy(dst io.Writer, src io.Reader) {
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

package localnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Proxy is an HTTP CONNECT proxy that connects to the loopback address an address of PodNetwork stands
// for, and refuses every other destination: it is kube-apiserver's egress to the cluster network.
type Proxy struct {
	server *http.Server
}

// ServeProxy serves the proxy on l until ctx is done.
func ServeProxy(ctx context.Context, l net.Listener) error {
	p := &Proxy{server: &http.Server{ReadHeaderTimeout: 10 * time.Second}}
	p.server.Handler = http.HandlerFunc(p.connect)
	go func() {
		<-ctx.Done()
		_ = p.server.Close()
	}()
	if err := p.server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT is served", http.StatusMethodNotAllowed)
		return
	}
	target, ok := Loopback(r.URL.Host)
	if !ok {
		http.Error(w, "the embedded cluster's network is "+PodNetwork.String()+": "+r.URL.Host+" is not in it", http.StatusForbidden)
		return
	}
	upstream, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "cannot hijack the connection", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hijacker.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Bytes the client sent after the CONNECT request are in buf.
		_, _ = io.Copy(upstream, buf)
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(conn, upstream)
		closeWrite(conn)
	}()
	wg.Wait()
	_ = conn.Close()
	_ = upstream.Close()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
}

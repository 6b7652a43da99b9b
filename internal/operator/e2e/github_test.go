package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// githubHosts are the hosts the operator reaches for a release on GitHub (and the Go module proxy it asks
// for a repository's versions).
var githubHosts = []string{"github.com", "api.github.com", "objects.githubusercontent.com",
	"release-assets.githubusercontent.com", "raw.githubusercontent.com", "proxy.golang.org"}

// githubProxy is an HTTPS proxy on loopback for the operator's process: it answers a CONNECT to one of
// githubHosts with a TLS server whose certificate a test CA signs (CAFile, for the process's SSL_CERT_FILE)
// and sends what it receives through target (the emulated server's transport). So the operator, run by the embedded cluster's
// local runtime with HTTPS_PROXY and SSL_CERT_FILE set, fetches "from GitHub" what an emulated server
// serves, and nothing leaves the machine: a CONNECT to another host is refused.
type githubProxy struct {
	URL    string
	CAFile string
}

func newGitHubProxy(t *testing.T, target http.RoundTripper) *githubProxy {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator e2e GitHub CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "github.com"},
		DNSNames: githubHosts, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "github-ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}

	forward := &httputil.ReverseProxy{Transport: target, Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "https", r.In.Host
	}}
	tunnels := newConnListener()
	inner := &http.Server{Handler: forward, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inner.Serve(tunnels) }()
	t.Cleanup(func() { _ = inner.Close() })

	allowed := map[string]bool{}
	for _, h := range githubHosts {
		allowed[h+":443"] = true
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || !allowed[r.Host] {
			http.Error(w, "this proxy only tunnels to GitHub's hosts, served by the test", http.StatusForbidden)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
			_ = conn.Close()
			return
		}
		tunnels.push(tls.Server(&bufferedConn{Conn: conn, r: rw.Reader}, tlsConfig))
	}))
	t.Cleanup(proxy.Close)
	return &githubProxy{URL: proxy.URL, CAFile: caFile}
}

// bufferedConn reads what the hijacking buffered before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener is a net.Listener of connections pushed to it.
type connListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// Package runtimetest runs Runtime Extension servers for tests: a pkg/extension Server on a loopback port
// with a serving certificate of its own CA, valid for 127.0.0.1 and the Service names a test gives.
package runtimetest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// Extension is a running Extension server.
type Extension struct {
	// Server is the SDK server; register handlers before or after it started.
	Server *extension.Server
	// URL is https://127.0.0.1:<port>.
	URL string
	// Port is the loopback port it listens on.
	Port int
	// CA is the PEM CA that signs its certificate, for spec.clientConfig.caBundle.
	CA []byte
	// CertDir holds its tls.crt and tls.key.
	CertDir string
}

// TLS writes a CA and a serving certificate for 127.0.0.1 and dnsNames into a temporary directory, as
// tls.crt and tls.key, and returns the directory and the CA's PEM.
func TLS(t testing.TB, dnsNames ...string) (dir string, caPEM []byte) {
	t.Helper()
	ca, err := pki.NewCA("extension-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Sign(pki.CertConfig{
		CommonName: "extension", DNSNames: dnsNames, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	key, err := pki.EncodeKey(serving.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), serving.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, ca.CertPEM()
}

// Start runs an Extension server on a loopback port until the test ends; its certificate is also valid
// for dnsNames.
func Start(t testing.TB, dnsNames ...string) *Extension {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := Prepare(t, dnsNames...)
	e.Serve(t, l)
	return e
}

// Prepare returns an Extension server with its certificate that does not listen yet: Serve starts it.
func Prepare(t testing.TB, dnsNames ...string) *Extension {
	t.Helper()
	dir, ca := TLS(t, dnsNames...)
	return &Extension{Server: extension.NewServer(extension.Options{CertDir: dir}), CA: ca, CertDir: dir}
}

// Serve serves the Extension on l until the test ends.
func (e *Extension) Serve(t testing.TB, l net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Server.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("extension server: %v", err)
		}
	})
	e.Port = l.Addr().(*net.TCPAddr).Port
	e.URL = "https://127.0.0.1:" + strconv.Itoa(e.Port)
}

// FreePort returns a loopback port nothing listens on (at the time of the call).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// CAOf is the PEM of an httptest TLS server's self-signed certificate, which is its own CA.
func CAOf(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

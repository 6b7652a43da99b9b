package portforward

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	kubeletportforward "k8s.io/cri-streaming/pkg/streaming/portforward"
)

func TestURL(t *testing.T) {
	tests := []struct{ host, want string }{
		{"https://127.0.0.1:6443", "https://127.0.0.1:6443/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
		{"https://example.com/prefix", "https://example.com/prefix/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
		{"127.0.0.1:6443", "https://127.0.0.1:6443/api/v1/namespaces/kube-system/pods/etcd-n1/portforward"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			g := NewWithT(t)
			d, err := NewDialer(&rest.Config{Host: tt.host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.URL("kube-system", "etcd-n1").String()).To(Equal(tt.want))
		})
	}
}

// forwarder connects every port-forward stream to target, as a kubelet connects it to a Pod's port.
type forwarder struct{ target string }

func (f forwarder) PortForward(ctx context.Context, _, _ string, _ int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", f.target)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// portForwardServer serves the portforward subresource on loopback, forwarding to target.
func portForwardServer(t *testing.T, target string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		opts, err := kubeletportforward.NewV4Options(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		kubeletportforward.ServePortForward(w, r, forwarder{target: target}, "pod", "", opts, time.Minute, 30*time.Second, kubeletportforward.SupportedProtocols)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A connection through a port-forward honours read deadlines: a Pod that does not answer cannot hold a
// reader past its deadline, and a later deadline lets it read again.
func TestDeadlines(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = l.Close() })
	answer := make(chan struct{})
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(conn, buf); err != nil {
			return
		}
		<-answer // silent until told
		_, _ = conn.Write([]byte("pong"))
		_, _ = io.Copy(io.Discard, conn)
	}()
	srv := portForwardServer(t, l.Addr().String())
	d, err := NewDialer(&rest.Config{Host: srv.URL}, 5*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	conn, err := d.Dial(t.Context(), "kube-system", "etcd-n1", 2379)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = conn.Close() })

	g.Expect(conn.SetDeadline(time.Now().Add(5 * time.Second))).To(Succeed())
	_, err = conn.Write([]byte("ping"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))).To(Succeed())
	start := time.Now()
	_, err = conn.Read(make([]byte, 4))
	g.Expect(err).To(MatchError(os.ErrDeadlineExceeded))
	var ne net.Error
	g.Expect(errors.As(err, &ne) && ne.Timeout()).To(BeTrue())
	g.Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second))

	close(answer)
	g.Expect(conn.SetReadDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	buf := make([]byte, 4)
	_, err = io.ReadFull(conn, buf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(buf)).To(Equal("pong"))
}

// A dial through an API server that never answers the upgrade returns within the Dialer's timeout, and a
// Dialer made without a timeout has DefaultTimeout.
func TestDialTimeout(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); stalled.Close() })
	d, err := NewDialer(&rest.Config{Host: stalled.URL}, 300*time.Millisecond)
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	_, err = d.Dial(context.Background(), "kube-system", "etcd-n1", 2379)
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
	g.Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second))

	d, err = NewDialer(&rest.Config{Host: stalled.URL}, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.timeout).To(Equal(DefaultTimeout))
}

package workload_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// TestEtcdReadsCloseTheirConnections: each read of etcd opens a port-forward of the workload API server to
// the etcd Pod; once the read is done, its connection to the API server is closed (a thousand control
// planes read every few minutes would otherwise keep hundreds of them open, each with its compressors).
func TestEtcdReadsCloseTheirConnections(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	b := memory.New(memory.Options{StartupDelay: 10 * time.Millisecond})
	t.Cleanup(b.Shutdown)
	certs := testworkload.NewCertificates(t)
	ca, etcdCA := certs.CA, certs.EtcdCA
	cluster := types.NamespacedName{Namespace: "ns", Name: "c1"}
	status, err := b.EnsureCluster(ctx, backend.Cluster{Key: cluster, ClusterName: "c1", Certificates: certs})
	g.Expect(err).NotTo(HaveOccurred())
	cp := backend.Machine{Name: "cp1", NodeName: "cp1", ProviderID: "local://ns/c1/cp1", Version: "v1.33.1",
		ControlPlane: &backend.ControlPlane{ClusterConfiguration: []byte("kind: ClusterConfiguration\n")}}
	g.Eventually(func(g Gomega) {
		ms, err := b.EnsureMachine(ctx, cluster, cp)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ms.ControlPlaneReady).To(BeTrue())
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())

	// The workload API server is reached through a proxy that counts the connections open through it.
	proxy := newCountingProxy(t, "127.0.0.1:"+strconv.Itoa(int(status.Port)))
	cfg, err := testworkload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: proxy.port()}, ca)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	kp, err := etcdCA.Sign(pki.CertConfig{CommonName: "capstan-kcp", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := workload.New(c, cfg, workload.EtcdOptions{CA: etcdCA.CertPEM(),
		ClientCert:  tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert},
		DialTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())

	const reads = 5
	for range reads {
		state, err := w.EtcdState(ctx, []string{"cp1"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(state.Members).To(HaveLen(1))
	}
	g.Expect(proxy.opened.Load()).To(Equal(int64(reads)), "each read opened one port-forward")
	g.Eventually(proxy.open.Load, 10*time.Second, 50*time.Millisecond).Should(BeZero(),
		"the port-forwards' connections to the workload API server are closed once the reads are done")

	t.Log("a health read of a one-member etcd opens one port-forward: the member's status is asked over the client's connection, and the member the state was read through is not asked again")
	opened := proxy.opened.Load()
	state, err := w.EtcdState(ctx, []string{"cp1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.MemberAnswers(ctx, "cp1", state)).To(Succeed())
	g.Expect(proxy.opened.Load() - opened).To(Equal(int64(1)))
	t.Log("without a state read through it, the member is asked")
	g.Expect(w.MemberAnswers(ctx, "cp1", nil)).To(Succeed())
	g.Expect(proxy.opened.Load()-opened).To(Equal(int64(2)), "one more port-forward")
	g.Expect(w.MemberAnswers(ctx, "cp2", state)).NotTo(Succeed(), "a member that does not exist does not answer")
}

// countingProxy forwards TCP connections on a loopback port to target and counts them.
type countingProxy struct {
	l            net.Listener
	opened, open atomic.Int64
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{l: l}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			p.opened.Add(1)
			p.open.Add(1)
			go p.forward(in, target)
		}
	}()
	return p
}

func (p *countingProxy) port() int32 { return int32(p.l.Addr().(*net.TCPAddr).Port) } //nolint:gosec // A TCP port.

func (p *countingProxy) forward(in net.Conn, target string) {
	defer p.open.Add(-1)
	defer func() { _ = in.Close() }()
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer func() { _ = out.Close() }()
	var once sync.Once
	done := make(chan struct{})
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		once.Do(func() { close(done) })
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
}

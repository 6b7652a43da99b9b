package remotebackend

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

func TestMain(m *testing.M) {
	ServeIfChild()
	os.Exit(m.Run())
}

// TestMemoryBackendInAChild drives a memory backend served by a child process as the local provider
// does: the cluster's endpoint answers from the child with the cluster's certificates, the backend's
// errors and change notifications come back, and the child's usage is readable.
func TestMemoryBackendInAChild(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	child := Start(t, memory.Options{StartupDelay: 100 * time.Millisecond, StartupJitter: 100 * time.Millisecond})
	changes := make(chan types.NamespacedName, 100)
	child.OnChange(func(k types.NamespacedName) { changes <- k })
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}

	_, err := child.EnsureCluster(ctx, backend.Cluster{Key: key, ClusterName: "c1"})
	g.Expect(err).To(MatchError("the cluster's CA and etcd CA are needed"))

	saKey, err := pki.NewKey()
	g.Expect(err).NotTo(HaveOccurred())
	certs := backend.Certificates{CA: testworkload.NewCA(t), EtcdCA: testworkload.NewCA(t), FrontProxyCA: testworkload.NewCA(t), ServiceAccountKey: saKey}
	status, err := child.EnsureCluster(ctx, backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(status.Ready).To(BeTrue())
	g.Expect(status.Port).NotTo(BeZero())
	cfg, err := testworkload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: status.Port}, certs.CA)
	g.Expect(err).NotTo(HaveOccurred())
	cs := kubernetes.NewForConfigOrDie(cfg)
	_, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%v", err)

	worker := backend.Machine{Name: "w1", NodeName: "w1", ProviderID: "local://ns/c1/w1", Version: "v1.33.1"}
	_, err = child.EnsureMachine(ctx, key, worker)
	g.Expect(err).To(MatchError(backend.ErrClusterNotReady))
	_, err = child.ClusterConfiguration(ctx, key)
	g.Expect(err).To(MatchError(backend.ErrClusterNotReady))

	cp := backend.Machine{Name: "cp1", NodeName: "cp1", ProviderID: "local://ns/c1/cp1", Version: "v1.33.1", DefaultTaints: true,
		ControlPlane: &backend.ControlPlane{ClusterConfiguration: []byte("kind: ClusterConfiguration\n")}}
	_, err = child.EnsureMachine(ctx, key, cp)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(changes, 20*time.Second).Should(Receive(Equal(key)))
	ms, err := child.EnsureMachine(ctx, key, cp)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ms.NodeRegistered).To(BeTrue())
	g.Expect(ms.ControlPlaneReady).To(BeTrue())
	data, err := child.ClusterConfiguration(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("kind: ClusterConfiguration\n"))
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(1))
	g.Expect(nodes.Items[0].Name).To(Equal("cp1"))

	stored, err := child.StoredCertificates(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stored.CA).To(BeNil(), "the memory backend keeps no certificates")

	u, err := child.Usage()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.RSSMiB).To(BeNumerically(">", 1))
	g.Expect(u.PeakRSSMiB).To(BeNumerically(">=", u.RSSMiB))

	g.Expect(child.DeleteMachine(ctx, key, "cp1")).To(Succeed())
	g.Expect(child.DeleteCluster(ctx, key)).To(Succeed())
	g.Eventually(func() error {
		_, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err
	}, 20*time.Second).Should(HaveOccurred(), "the endpoint stops with the cluster")
}

// TestCertificatesRoundTrip checks the certificates survive the wire, missing ones staying missing.
func TestCertificatesRoundTrip(t *testing.T) {
	g := NewWithT(t)
	saKey, err := pki.NewKey()
	g.Expect(err).NotTo(HaveOccurred())
	in := backend.Certificates{CA: testworkload.NewCA(t), EtcdCA: testworkload.NewCA(t), ServiceAccountKey: saKey}
	w, err := encodeCerts(in)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := decodeCerts(w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.CA.Cert.Equal(in.CA.Cert)).To(BeTrue())
	g.Expect(out.EtcdCA.Cert.Equal(in.EtcdCA.Cert)).To(BeTrue())
	g.Expect(out.FrontProxyCA).To(BeNil())
	g.Expect(out.ServiceAccountKey.Public()).To(Equal(saKey.Public()))
	g.Expect(out.CA.Key.Public()).To(Equal(in.CA.Key.Public()))
}

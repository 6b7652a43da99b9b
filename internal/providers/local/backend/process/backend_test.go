package process

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

func newCA(t *testing.T) *kubeconfig.CA {
	t.Helper()
	certPEM, keyPEM, err := kubeconfig.NewCA("kubernetes", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := kubeconfig.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// newBackend returns a backend over dir whose intervals are short, stopped when the test ends.
func newBackend(t *testing.T, dir string) *Backend {
	t.Helper()
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{
		DataDir: dir, KubeAPIServerPath: apiserver, EtcdPath: etcd,
		HeartbeatInterval: 200 * time.Millisecond, NodeStatusInterval: 500 * time.Millisecond,
		ProbeInterval: 200 * time.Millisecond, MinRestartBackoff: 100 * time.Millisecond, MaxRestartBackoff: time.Second,
		StopTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	return b
}

// adminClient is a client of the workload cluster built the way the core builds the <cluster>-kubeconfig.
func adminClient(t *testing.T, ca *kubeconfig.CA, port int32) kubernetes.Interface {
	t.Helper()
	cfg, err := workload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: port}, ca)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func ensureReady(g Gomega, b *Backend, spec backend.Cluster) backend.ClusterStatus {
	var status backend.ClusterStatus
	g.Eventually(func(g Gomega) {
		var err error
		status, err = b.EnsureCluster(context.Background(), spec)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(status.Ready).To(BeTrue(), "%s: %s", status.Reason, status.Message)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	return status
}

// pidOf reads the pid file of one of a cluster's processes.
func pidOf(t *testing.T, dir, name string) int {
	pid, err := procs.ReadPidFile(filepath.Join(dir, name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestClusterLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dataDir := t.TempDir()
	b := newBackend(t, dataDir)
	ca := newCA(t)
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	spec := backend.Cluster{Key: key, ClusterName: "c1", CA: ca}
	changes := make(chan types.NamespacedName, 100)
	b.OnChange(func(k types.NamespacedName) { changes <- k })

	start := time.Now()
	status := ensureReady(g, b, spec)
	t.Logf("cluster ready after %s", time.Since(start))
	g.Expect(status.Host).To(Equal("127.0.0.1"))
	g.Expect(status.Port).NotTo(BeZero())
	g.Expect(changes).To(Receive(Equal(key)))
	dir := b.ClusterDir(key)

	// The kubeconfig the core writes from <cluster>-ca works against the workload API server.
	client := adminClient(t, ca, status.Port)
	g.Expect(client.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})).NotTo(BeNil())

	t.Log("registering two nodes")
	for _, name := range []string{"m1", "m2"} {
		ns, err := b.EnsureNode(ctx, key, backend.Node{Name: name, ProviderID: "local://ns/c1/" + name, KubeletVersion: "v1.37.1", ControlPlane: name == "m1"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ns.Addresses).To(ContainElement(backend.NodeAddress{Type: "InternalIP", Address: "127.0.0.1"}))
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(2))
	for _, n := range nodes.Items {
		g.Expect(nodeReady(&n)).To(BeTrue(), "node %s", n.Name)
		g.Expect(n.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
		g.Expect(n.Spec.ProviderID).To(Equal("local://ns/c1/" + n.Name))
	}
	m1, err := client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m1.Labels).To(HaveKey("node-role.kubernetes.io/control-plane"))
	g.Expect(m1.Spec.Taints).To(HaveLen(1))

	// Leases are renewed by the heartbeat loop.
	lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	first := lease.Spec.RenewTime.Time
	g.Eventually(func(g Gomega) {
		lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lease.Spec.RenewTime.After(first)).To(BeTrue())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	t.Log("killing kube-apiserver: it is restarted on the same port")
	pid := pidOf(t, dir, "kube-apiserver")
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(func() bool {
		st, err := b.EnsureCluster(ctx, spec)
		return err == nil && !st.Ready
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
	g.Expect(ensureReady(g, b, spec).Port).To(Equal(status.Port))
	g.Expect(pidOf(t, dir, "kube-apiserver")).NotTo(Equal(pid))
	g.Expect(procs.Alive(pid)).To(BeFalse())

	t.Log("deleting a node removes it and its lease")
	g.Expect(b.DeleteNode(ctx, key, "m2")).To(Succeed())
	_, err = client.CoreV1().Nodes().Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	_, err = client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())

	t.Log("a new backend over the same data directory starts the cluster again, same port, same data")
	etcdPid, apiPid := pidOf(t, dir, "etcd"), pidOf(t, dir, "kube-apiserver")
	b.Shutdown()
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	b2 := newBackend(t, dataDir)
	stored, err := b2.StoredCA(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stored.Cert.Equal(ca.Cert)).To(BeTrue())
	g.Expect(ensureReady(g, b2, spec).Port).To(Equal(status.Port))
	_, err = client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("deleting the cluster stops its processes and removes its data")
	etcdPid, apiPid = pidOf(t, dir, "etcd"), pidOf(t, dir, "kube-apiserver")
	g.Expect(b2.DeleteCluster(ctx, key)).To(Succeed())
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	g.Expect(dir).NotTo(BeADirectory())
	g.Expect(b2.DeleteNode(ctx, key, "m1")).To(Succeed(), "a node of a deleted cluster is gone with it")
	_, err = b2.EnsureNode(ctx, key, backend.Node{Name: "m3"})
	g.Expect(err).To(MatchError(backend.ErrClusterNotReady))
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

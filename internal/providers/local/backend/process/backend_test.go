package process

import (
	"context"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"net"
	"path/filepath"
	"strconv"
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
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

// newBackend returns a backend over dir whose intervals are short, stopped when the test ends.
func newBackend(t testing.TB, dir string) *Backend {
	t.Helper()
	return newBackendWith(t, dir, nil)
}

// newBackendWith is newBackend with options changed by change.
func newBackendWith(t testing.TB, dir string, change func(*Options)) *Backend {
	t.Helper()
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		DataDir: dir, KubeAPIServerPath: apiserver, EtcdPath: etcd,
		HeartbeatInterval: 200 * time.Millisecond, NodeStatusInterval: 500 * time.Millisecond,
		ProbeInterval: 200 * time.Millisecond, NodeRefreshInterval: 200 * time.Millisecond, MinRestartBackoff: 100 * time.Millisecond, MaxRestartBackoff: time.Second,
		StopTimeout: 5 * time.Second,
	}
	if change != nil {
		change(&opts)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	return b
}

// adminClient is a client of the workload cluster built the way the core builds the <cluster>-kubeconfig.
func adminClient(t *testing.T, ca *kubeconfig.CA, port int32) kubernetes.Interface {
	t.Helper()
	cfg, err := testworkload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: port}, ca)
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

// ensureMachine ensures a machine until its Node is registered (and, for a control plane machine, its
// control plane is ready).
func ensureMachine(g Gomega, b *Backend, key types.NamespacedName, m backend.Machine) backend.MachineStatus {
	var status backend.MachineStatus
	g.Eventually(func(g Gomega) {
		var err error
		status, err = b.EnsureMachine(context.Background(), key, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(status.NodeRegistered).To(BeTrue(), "%s: %s", status.Reason, status.Message)
		if m.ControlPlane != nil {
			g.Expect(status.ControlPlaneReady).To(BeTrue(), "%s: %s", status.Reason, status.Message)
		}
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	return status
}

// controlPlaneMachine is a control plane machine without extra configuration.
func controlPlaneMachine(name string) backend.Machine {
	return backend.Machine{Name: name, NodeName: name, ProviderID: "local://ns/c1/" + name, Version: "v1.37.1",
		DefaultTaints: true, ControlPlane: &backend.ControlPlane{}}
}

// pidOf reads the pid file of one of a cluster's processes.
func pidOf(t testing.TB, dir, machine, name string) int {
	pid, err := procs.ReadPidFile(filepath.Join(dir, "machines", machine, name+".pid"))
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
	certs := testworkload.NewCertificates(t)
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	spec := backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs}
	changes := make(chan types.NamespacedName, 100)
	b.OnChange(func(k types.NamespacedName) { changes <- k })

	t.Log("the endpoint listens at once; a worker waits for a control plane machine")
	status := ensureReady(g, b, spec)
	g.Expect(status.Host).To(Equal("127.0.0.1"))
	g.Expect(status.Port).NotTo(BeZero())
	g.Expect(status.APIServers).To(BeZero())
	g.Eventually(changes, 10*time.Second).Should(Receive(Equal(key)))
	dir := b.ClusterDir(key)
	worker := backend.Machine{Name: "m2", NodeName: "m2", ProviderID: "local://ns/c1/m2", Version: "v1.37.1", DefaultTaints: true,
		Labels: map[string]string{"pool": "blue"}}
	_, err := b.EnsureMachine(ctx, key, worker)
	g.Expect(err).To(MatchError(backend.ErrClusterNotReady))

	start := time.Now()
	ensureMachine(g, b, key, controlPlaneMachine("m1"))
	t.Logf("control plane machine ready after %s", time.Since(start))
	ensureMachine(g, b, key, worker)
	g.Expect(b.EnsureCluster(ctx, spec)).To(HaveField("APIServers", 1))

	// The kubeconfig the core writes from <cluster>-ca works against the endpoint.
	client := adminClient(t, certs.CA, status.Port)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(2))
	for _, n := range nodes.Items {
		g.Expect(nodeReady(&n)).To(BeTrue(), "node %s", n.Name)
		g.Expect(n.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
		g.Expect(n.Spec.ProviderID).To(Equal("local://ns/c1/" + n.Name))
		g.Expect(n.Status.DaemonEndpoints.KubeletEndpoint.Port).NotTo(BeZero())
	}
	m1, err := client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m1.Labels).To(HaveKey("node-role.kubernetes.io/control-plane"))
	g.Expect(m1.Spec.Taints).To(HaveLen(1))
	m2, err := client.CoreV1().Nodes().Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m2.Labels).To(HaveKeyWithValue("pool", "blue"))

	t.Log("the control plane machine's components are mirror Pods in kube-system")
	g.Eventually(func(g Gomega) {
		for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			pod, err := client.CoreV1().Pods("kube-system").Get(ctx, c+"-m1", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pod.Labels).To(Equal(map[string]string{"component": c, "tier": "control-plane"}))
			g.Expect(pod.Spec.NodeName).To(Equal("m1"))
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(pod.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), c)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	t.Log("kubectl logs of etcd-m1 returns etcd's log, through the simulated kubelet")
	logs, err := client.CoreV1().Pods("kube-system").GetLogs("etcd-m1", &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(logs)).To(ContainSubstring(`"msg":"serving client traffic securely"`))

	// Leases are renewed by the heartbeat loop.
	lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	first := lease.Spec.RenewTime.Time
	g.Eventually(func(g Gomega) {
		lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lease.Spec.RenewTime.After(first)).To(BeTrue())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	t.Log("killing kube-apiserver: it is restarted, the endpoint answers again")
	pid := pidOf(t, dir, "m1", "kube-apiserver")
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	// The supervisor restarts it at once; the probe may not even see it down, so what counts is a new
	// process behind a ready control plane.
	g.Eventually(func() bool {
		newPid, err := procs.ReadPidFile(filepath.Join(dir, "machines", "m1", "kube-apiserver.pid"))
		return err == nil && newPid != pid
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	ensureMachine(g, b, key, controlPlaneMachine("m1"))
	g.Expect(pidOf(t, dir, "m1", "kube-apiserver")).NotTo(Equal(pid))
	g.Expect(procs.Alive(pid)).To(BeFalse())
	g.Eventually(func() error {
		_, err := client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
		return err
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	t.Log("deleting a worker removes its Node and lease")
	g.Expect(b.DeleteMachine(ctx, key, "m2")).To(Succeed())
	_, err = client.CoreV1().Nodes().Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	_, err = client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "m2", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())

	t.Log("a new backend over the same data directory starts the cluster again, same port, same data")
	etcdPid, apiPid := pidOf(t, dir, "m1", "etcd"), pidOf(t, dir, "m1", "kube-apiserver")
	b.Shutdown()
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	b2 := newBackend(t, dataDir)
	stored, err := b2.StoredCertificates(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sameCertificates(stored, certs)).To(BeTrue())
	g.Expect(ensureReady(g, b2, spec).Port).To(Equal(status.Port))
	ensureMachine(g, b2, key, controlPlaneMachine("m1"))
	_, err = client.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("the machine's certificates follow the kubeadm configuration's encryptionAlgorithm and certificateValidityPeriod")
	g.Expect(servingCert(g, status.Port).PublicKeyAlgorithm).To(Equal(x509.ECDSA), "ECDSA P-256 by default")
	rsa3072 := controlPlaneMachine("m1")
	rsa3072.ControlPlane.Certificates = backend.CertificateSettings{KeyAlgorithm: "RSA-3072", Validity: 30 * 24 * time.Hour}
	ensureMachine(g, b2, key, rsa3072)
	g.Eventually(func(g Gomega) {
		cert := servingCert(g, status.Port)
		g.Expect(cert.PublicKeyAlgorithm).To(Equal(x509.RSA))
		g.Expect(cert.PublicKey.(*rsa.PublicKey).N.BitLen()).To(Equal(3072))
		g.Expect(cert.NotAfter.Sub(cert.NotBefore)).To(Equal(30*24*time.Hour+5*time.Minute), "30 days, back-dated 5 minutes")
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())

	t.Log("deleting the cluster stops its processes and removes its data")
	etcdPid, apiPid = pidOf(t, dir, "m1", "etcd"), pidOf(t, dir, "m1", "kube-apiserver")
	g.Expect(b2.DeleteCluster(ctx, key)).To(Succeed())
	g.Expect(procs.Alive(etcdPid)).To(BeFalse())
	g.Expect(procs.Alive(apiPid)).To(BeFalse())
	g.Expect(dir).NotTo(BeADirectory())
	g.Expect(b2.DeleteMachine(ctx, key, "m1")).To(Succeed(), "a machine of a deleted cluster is gone with it")
	_, err = b2.EnsureMachine(ctx, key, controlPlaneMachine("m3"))
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

// servingCert returns the certificate the cluster's API server serves behind the endpoint's port.
func servingCert(g Gomega, port int32) *x509.Certificate {
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the certificate is what is inspected
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0]
}

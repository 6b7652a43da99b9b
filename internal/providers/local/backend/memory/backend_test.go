package memory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	testworkload "github.com/capstan-dev/capstan/internal/test/workload"
)

func controlPlaneMachine(name string) backend.Machine {
	return backend.Machine{Name: name, NodeName: name, ProviderID: "local://ns/c1/" + name, Version: "v1.33.1",
		DefaultTaints: true, ControlPlane: &backend.ControlPlane{ClusterConfiguration: []byte("kind: ClusterConfiguration\n")}}
}

func restConfig(t *testing.T, ca *kubeconfig.CA, port int32) *rest.Config {
	t.Helper()
	cfg, err := testworkload.FromCAData("c1", clusterv1.APIEndpoint{Host: "127.0.0.1", Port: port}, ca)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// etcdClientCertificate is a client certificate of the etcd CA, as the control plane provider makes one.
func etcdClientCertificate(t *testing.T, ca *kubeconfig.CA) tls.Certificate {
	t.Helper()
	kp, err := ca.Sign(pki.CertConfig{CommonName: "capstan-kcp", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
}

func TestClusterLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	b := New(Options{StartupDelay: 200 * time.Millisecond, StartupJitter: 100 * time.Millisecond})
	t.Cleanup(b.Shutdown)
	certs := testworkload.NewCertificates(t)
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	changes := make(chan types.NamespacedName, 100)
	b.OnChange(func(k types.NamespacedName) { changes <- k })

	t.Log("the endpoint listens at once; the API answers once a control plane machine started")
	status, err := b.EnsureCluster(ctx, backend.Cluster{Key: key, ClusterName: "c1", Certificates: certs})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(status.Ready).To(BeTrue())
	g.Expect(status.Port).NotTo(BeZero())
	cfg := restConfig(t, certs.CA, status.Port)
	cs := kubernetes.NewForConfigOrDie(cfg)
	_, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%v", err)

	worker := backend.Machine{Name: "w1", NodeName: "w1", ProviderID: "local://ns/c1/w1", Version: "v1.33.1", Labels: map[string]string{"pool": "a"}}
	_, err = b.EnsureMachine(ctx, key, worker)
	g.Expect(err).To(MatchError(backend.ErrClusterNotReady))

	t.Log("a control plane machine starts after its start-up delay; the backend says when")
	ms, err := b.EnsureMachine(ctx, key, controlPlaneMachine("cp1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ms.NodeRegistered).To(BeFalse())
	g.Eventually(changes, 10*time.Second).Should(Receive(Equal(key)))
	ms, err = b.EnsureMachine(ctx, key, controlPlaneMachine("cp1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ms.NodeRegistered).To(BeTrue())
	g.Expect(ms.ControlPlaneReady).To(BeTrue())

	t.Log("discovery, Nodes, mirror Pods and the kubeadm-config ConfigMap are served")
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lists).NotTo(BeEmpty())
	v, err := cs.Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.GitVersion).To(Equal("v1.33.1"))
	// As kube-apiserver, the API speaks HTTP/2: a client's requests and watches share one connection.
	hc, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := hc.Get(cfg.Host + "/version")
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.ProtoMajor).To(Equal(2), "the API answered over %s", resp.Proto)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(1))
	g.Expect(nodes.Items[0].Spec.ProviderID).To(Equal("local://ns/c1/cp1"))
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=cp1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(HaveLen(4))
	config, err := b.ClusterConfiguration(ctx, key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(config)).To(ContainSubstring("ClusterConfiguration"))

	t.Log("an informer lists and watches; patches and updates reach it")
	factory := informers.NewSharedInformerFactory(cs, 0)
	nodeInformer := factory.Core().V1().Nodes().Informer()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory.Start(stop)
	g.Expect(cache.WaitForCacheSync(stop, nodeInformer.HasSynced)).To(BeTrue())
	_, err = b.EnsureMachine(ctx, key, worker)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		ms, err := b.EnsureMachine(ctx, key, worker)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ms.NodeRegistered).To(BeTrue())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Eventually(func() []string { return nodeInformer.GetStore().ListKeys() }, 10*time.Second).Should(ConsistOf("cp1", "w1"))
	_, err = cs.CoreV1().Nodes().Patch(ctx, "w1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() string {
		obj, _, _ := nodeInformer.GetStore().GetByKey("w1")
		if obj == nil {
			return ""
		}
		return obj.(*corev1.Node).Labels["x"]
	}, 10*time.Second).Should(Equal("y"))

	t.Log("a controller-runtime client writes with optimistic locking")
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubelet-config"}, Data: map[string]string{"a": "1"}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())
	stale := cm.DeepCopy()
	cm.Data["a"] = "2"
	g.Expect(c.Update(ctx, cm)).To(Succeed())
	stale.Data["a"] = "3"
	g.Expect(apierrors.IsConflict(c.Update(ctx, stale))).To(BeTrue())
	g.Expect(apierrors.IsAlreadyExists(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubelet-config"}}))).To(BeTrue())

	t.Log("the etcd members answer through port-forwards of the etcd Pods, as the control plane provider reaches them")
	g.Eventually(func(g Gomega) {
		ms, err := b.EnsureMachine(ctx, key, controlPlaneMachine("cp2"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ms.ControlPlaneReady).To(BeTrue())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	wc, err := workload.New(c, cfg, workload.EtcdOptions{CA: certs.EtcdCA.CertPEM(), ClientCert: etcdClientCertificate(t, certs.EtcdCA),
		DialTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	state, err := wc.EtcdState(ctx, []string{"cp1", "cp2"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state.Members).To(HaveLen(2))
	g.Expect(state.LeaderID).To(Equal(workload.MemberForName(state.Members, "cp1").ID))
	g.Expect(state.Alarms).To(BeEmpty())
	g.Expect(wc.ForwardLeadership(ctx, []string{"cp1", "cp2"}, "cp1", "cp2")).To(Succeed())
	state, err = wc.EtcdState(ctx, []string{"cp1", "cp2"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state.LeaderID).To(Equal(workload.MemberForName(state.Members, "cp2").ID))
	g.Expect(wc.RemoveMember(ctx, []string{"cp1", "cp2"}, "cp1")).To(Succeed())
	state, err = wc.EtcdState(ctx, []string{"cp2"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state.Members).To(HaveLen(1))

	t.Log("a client certificate of another CA is refused")
	other := restConfig(t, testworkload.NewCA(t), status.Port)
	other.CAData = certs.CA.CertPEM()
	_, err = kubernetes.NewForConfigOrDie(other).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).To(HaveOccurred())
	anonymous := rest.AnonymousClientConfig(cfg)
	_, err = kubernetes.NewForConfigOrDie(anonymous).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "%v", err)
	_, err = kubernetes.NewForConfigOrDie(anonymous).Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("deleting a machine removes its Node and mirror Pods; deleting the cluster closes the endpoint")
	g.Expect(b.DeleteMachine(ctx, key, "cp1")).To(Succeed())
	_, err = cs.CoreV1().Nodes().Get(ctx, "cp1", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	pods, err = cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=cp1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(BeEmpty())
	g.Expect(b.DeleteCluster(ctx, key)).To(Succeed())
	_, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).To(HaveOccurred())
}

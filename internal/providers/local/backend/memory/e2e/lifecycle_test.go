// Package e2e checks the memory backend end to end: the core, the kubeadm providers and the local
// provider with its memory backend, against a real management API server.
package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/remotebackend"
	"github.com/capstan-dev/capstan/internal/test/stack"
	workloadtest "github.com/capstan-dev/capstan/internal/test/workload"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	// The benchmark's child processes: the memory backend, the observer of changes.
	remotebackend.ServeIfChild()
	observeIfChild()
	envtest.SetupLogging()
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

const (
	wait     = 3 * time.Minute
	interval = 500 * time.Millisecond
)

// TestClusterLifecycle creates a cluster from the default flavor (one KubeadmControlPlane Machine, one
// worker) on the memory backend, scales its workers, upgrades its control plane with the control plane
// provider (which reaches the simulated etcd through port-forwards) and deletes it.
func TestClusterLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true,
		LocalMemory: &memory.Options{StartupDelay: 100 * time.Millisecond, StartupJitter: 200 * time.Millisecond}})

	for _, o := range stack.LocalTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "mem", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.36.3",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "1",
	}) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	clusterKey := client.ObjectKey{Namespace: ns, Name: "mem"}
	kcpKey := client.ObjectKey{Namespace: ns, Name: "mem-control-plane"}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mem"}})
	})

	t.Log("the cluster becomes Available; kubectl get nodes lists its 2 Nodes")
	start := time.Now()
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, clusterKey, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
	}, wait, interval).Should(Succeed())
	t.Logf("available after %s", time.Since(start).Round(time.Millisecond))
	waitKCP(ctx, g, kcpKey, "v1.36.3")
	cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, "mem")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		nodes, err := workloadtest.ReadyNodes(ctx, cfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes).To(HaveLen(2))
	}, wait, interval).Should(Succeed())

	t.Log("scaling the workers to 2 adds a Running Machine and its Node")
	g.Eventually(func() error {
		md := &clusterv1.MachineDeployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mem-md-0"}, md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](2)
		return env.Client.Update(ctx, md)
	}, time.Minute, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(2))
		for _, m := range list.Items {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
		}
		nodes, err := workloadtest.ReadyNodes(ctx, cfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes).To(HaveLen(3))
	}, wait, interval).Should(Succeed())

	t.Log("upgrading the control plane replaces its Machine; the etcd member list follows")
	old := kcpMachineNames(ctx, g, ns)
	g.Eventually(func() error {
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := env.Client.Get(ctx, kcpKey, kcp); err != nil {
			return err
		}
		kcp.Spec.Version = "v1.37.1"
		return env.Client.Update(ctx, kcp)
	}, time.Minute, interval).Should(Succeed())
	waitKCP(ctx, g, kcpKey, "v1.37.1")
	g.Eventually(func(g Gomega) {
		names := kcpMachineNames(ctx, g, ns)
		g.Expect(names).To(HaveLen(1))
		g.Expect(names).NotTo(ContainElement(old[0]))
	}, wait, interval).Should(Succeed())
	w := etcdOf(ctx, g, ns, cfg)
	g.Eventually(func(g Gomega) {
		nodes, err := workloadtest.ReadyNodes(ctx, cfg)
		g.Expect(err).NotTo(HaveOccurred())
		var cp []string
		for _, n := range nodes {
			if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
				cp = append(cp, n.Name)
				g.Expect(n.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
			}
		}
		g.Expect(cp).To(HaveLen(1))
		state, err := w.EtcdState(ctx, cp)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(state.Members).To(HaveLen(1))
		g.Expect(state.Members[0].Name).To(Equal(cp[0]))
	}, wait, interval).Should(Succeed())

	t.Log("deleting the Cluster deletes everything")
	g.Expect(env.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mem"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, clusterKey, &clusterv1.Cluster{}))).To(BeTrue())
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		g.Expect(machines.Items).To(BeEmpty())
	}, wait, interval).Should(Succeed())
	_, err = workloadtest.ReadyNodes(ctx, cfg)
	g.Expect(err).To(HaveOccurred(), "the endpoint is closed")
}

func waitKCP(ctx context.Context, g Gomega, key client.ObjectKey, version string) {
	g.Eventually(func(g Gomega) {
		kcp := &controlplanev1.KubeadmControlPlane{}
		g.Expect(env.Client.Get(ctx, key, kcp)).To(Succeed())
		g.Expect(kcp.Status.Replicas).To(Equal(int32(1)))
		g.Expect(kcp.Status.ReadyReplicas).To(Equal(int32(1)))
		g.Expect(kcp.Status.UpdatedReplicas).To(Equal(int32(1)))
		g.Expect(kcp.Status.Version).To(Equal(ptr.To(version)))
		g.Expect(conditions.IsV1Beta2True(kcp, controlplanev1.KubeadmControlPlaneAvailableV1Beta2Condition)).To(BeTrue(), "%+v", kcp.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(kcp, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition)).To(BeTrue(), "%+v", kcp.Status.V1Beta2)
	}, wait, interval).Should(Succeed())
}

func kcpMachineNames(ctx context.Context, g Gomega, ns string) []string {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineControlPlaneLabel})).To(Succeed())
	var names []string
	for _, m := range list.Items {
		if m.DeletionTimestamp == nil {
			names = append(names, m.Name)
		}
	}
	return names
}

// etcdOf reaches the workload cluster's etcd as the control plane provider does.
func etcdOf(ctx context.Context, g Gomega, ns string, cfg *rest.Config) *workload.Cluster {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name("mem", clustersecret.EtcdCA)}, s)).To(Succeed())
	ca, err := pki.Parse(s.Data[clustersecret.CertKey], s.Data[clustersecret.KeyKey])
	g.Expect(err).NotTo(HaveOccurred())
	kp, err := ca.Sign(pki.CertConfig{CommonName: "e2e", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	cert := tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
	w, err := workload.New(c, cfg, workload.EtcdOptions{CA: s.Data[clustersecret.CertKey], ClientCert: cert, DialTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	return w
}

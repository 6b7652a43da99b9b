package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/providers/local"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/process"
)

// startCoreAndProvider runs the core controllers and the local provider in one manager until the test ends.
func startCoreAndProvider(t *testing.T, dataDir string) *process.Backend {
	t.Helper()
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := process.New(process.Options{DataDir: dataDir, KubeAPIServerPath: apiserver, EtcdPath: etcd, StopTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := core.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	opts := controllermanager.DefaultOptions("test-core-and-local")
	opts.MetricsBindAddr, opts.HealthAddr = "0", "0"
	mgr, err := opts.New(env.Config, scheme)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	if err := core.Setup(ctx, mgr, core.Options{Concurrency: core.DefaultConcurrency()}); err != nil {
		t.Fatal(err)
	}
	if err := local.Setup(ctx, mgr, local.Options{Backend: b}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		b.Shutdown()
	})
	return b
}

// TestClusterTemplateProvisions renders the released cluster-template.yaml for a cluster with 2 workers and
// applies it with the core controllers and the provider running: the Cluster reaches Provisioned, its
// kubeconfig reaches the workload kube-apiserver, which lists 2 Ready nodes, and deleting the Cluster stops
// its processes and removes its data.
func TestClusterTemplateProvisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	b := startCoreAndProvider(t, t.TempDir())

	objs := renderTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "e2e", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "2",
	})
	for _, o := range objs {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		wc := workloadClient(g, ns, "e2e", true, "")
		nodes, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(2))
		for _, n := range nodes.Items {
			g.Expect(n.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))), "node %s", n.Name)
		}
	}, 2*time.Minute, time.Second).Should(Succeed())

	dir := b.ClusterDir(types.NamespacedName{Namespace: ns, Name: "e2e"})
	g.Expect(processesOf("etcd", dir)).To(HaveLen(1))
	g.Expect(processesOf("kube-apiserver", dir)).To(HaveLen(1))

	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
	g.Expect(processesOf("etcd", dir)).To(BeEmpty())
	g.Expect(processesOf("kube-apiserver", dir)).To(BeEmpty())
	g.Expect(dir).NotTo(BeAnExistingFile())
}

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/stack"
	workloadtest "github.com/capstan-dev/capstan/internal/test/workload"
)

// resumeWait bounds how long a workload cluster may take to come back after the providers start again.
const resumeWait = 5 * time.Minute

// TestHighlyAvailableClusterResumes is what `capstan down` then `capstan up` (or a power cut) does to a
// ClusterClass cluster of 3 control plane Machines, seen from the providers: they all stop, every process
// of the workload cluster with them; started again on the same data, the workload cluster must come back
// with its data, its 3 etcd members started together (none can be healthy alone), and while it is not back
// the LocalMachines say what they wait for.
func TestHighlyAvailableClusterResumes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	dataDir := t.TempDir()
	first := startStack(t, dataDir)

	for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
		o.SetNamespace(ns)
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	for _, o := range stack.LocalTemplate(t, "cluster-template-topology.yaml", map[string]string{
		"CLUSTER_NAME": "resume", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
		"CONTROL_PLANE_MACHINE_COUNT": "3", "WORKER_MACHINE_COUNT": "1",
	}) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	clusterKey := client.ObjectKey{Namespace: ns, Name: "resume"}
	envtest.DumpOnFailure(t, env.Client, ns)

	t.Log("the Cluster of 3 control plane Machines becomes Available")
	start := time.Now()
	waitAvailable(ctx, g, clusterKey, 3, 8*time.Minute)
	t.Logf("available after %s", time.Since(start).Round(time.Second))
	cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, "resume")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	wc := kubernetes.NewForConfigOrDie(cfg)
	_, err = wc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}, Data: map[string]string{"written": "before"},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("the providers stop, and every process of the workload cluster with them")
	first.stop(t)
	clusterDir := first.Backend.ClusterDir(types.NamespacedName{Namespace: ns, Name: localClusterName(ctx, g, clusterKey)})
	g.Expect(procs.Find("etcd", clusterDir)).To(BeEmpty())
	g.Expect(procs.Find("kube-apiserver", clusterDir)).To(BeEmpty())

	t.Log("the providers start again on the same data: the workload cluster comes back with its data")
	second := startStack(t, dataDir)
	defer second.stop(t)
	start = time.Now()
	waiting := map[string]bool{}
	g.Eventually(func(g Gomega) {
		noteWaiting(ctx, ns, waiting)
		_, err := wc.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred(), "the workload API answers")
	}, resumeWait, time.Second).Should(Succeed())
	t.Logf("the workload API answered %s after the providers started again", time.Since(start).Round(time.Second))
	g.Expect(procs.Find("etcd", clusterDir)).To(HaveLen(3), "the 3 etcd members run")
	waitAvailable(ctx, g, clusterKey, 3, resumeWait)
	t.Logf("the Cluster was Available again %s after the providers started again", time.Since(start).Round(time.Second))
	for message := range waiting {
		t.Logf("a LocalMachine said while waiting: %s", message)
	}
	g.Expect(waiting).NotTo(HaveKey(""), "a LocalMachine that is not ready says why")
	got, err := wc.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Data).To(HaveKeyWithValue("written", "before"))
}

// runningStack is a stack started by startStack.
type runningStack struct {
	*stack.Stack
	cancel  context.CancelFunc
	stopped bool
}

// startStack starts the core, the kubeadm providers and the local provider on dataDir, as `capstan up`
// starts their Deployments.
func startStack(t *testing.T, dataDir string) *runningStack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := stack.Start(ctx, env.Config, stack.Options{Local: true, Kubeadm: true, LocalDataDir: dataDir})
	if err != nil {
		cancel()
		t.Fatalf("starting the controllers: %v", err)
	}
	r := &runningStack{Stack: s, cancel: cancel}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop stops the stack and waits for the workload clusters' processes to be gone.
func (r *runningStack) stop(t *testing.T) {
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	if err := r.Wait(); err != nil {
		t.Errorf("manager: %v", err)
	}
}

// waitAvailable waits until the Cluster is Available with a control plane of replicas ready Machines.
func waitAvailable(ctx context.Context, g Gomega, key client.ObjectKey, replicas int32, within time.Duration) {
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
		g.Expect(c.Spec.ControlPlaneRef).NotTo(BeNil())
		kcp := &controlplanev1.KubeadmControlPlane{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: c.Spec.ControlPlaneRef.Name}, kcp)).To(Succeed())
		g.Expect(kcp.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(conditions.IsV1Beta2True(kcp, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition)).To(BeTrue(), "%+v", kcp.Status.V1Beta2)
	}, within, time.Second).Should(Succeed())
}

func localClusterName(ctx context.Context, g Gomega, key client.ObjectKey) string {
	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
	g.Expect(c.Spec.InfrastructureRef).NotTo(BeNil())
	return c.Spec.InfrastructureRef.Name
}

// noteWaiting records the Ready messages of the LocalMachines that are not ready ("" for one that does
// not say why).
func noteWaiting(ctx context.Context, ns string, seen map[string]bool) {
	list := &infrav1.LocalMachineList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return
	}
	for _, lm := range list.Items {
		if c := conditions.Get(&lm, clusterv1.ReadyCondition); c != nil && c.Status != corev1.ConditionTrue {
			seen[c.Message] = true
		}
	}
}

package managedtopology

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
	workloadtest "github.com/capstan-dev/capstan/internal/test/workload"
	"github.com/capstan-dev/capstan/internal/webhooks"
	corewebhooks "github.com/capstan-dev/capstan/internal/webhooks/core"
	"github.com/capstan-dev/capstan/internal/webhooks/webhookstest"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

const (
	wait     = 6 * time.Minute
	interval = 250 * time.Millisecond
	from     = "v1.36.3"
	to       = "v1.37.1"
)

// machineCreations records the worker Machines created in a namespace (a watch of Machines), by name,
// with their version.
type machineCreations struct {
	mu      sync.Mutex
	created map[string]string
}

func watchMachineCreations(ctx context.Context, t *testing.T, g Gomega, ns string) *machineCreations {
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	list := &clusterv1.MachineList{}
	g.Expect(wc.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	m := &machineCreations{created: map[string]string{}}
	known := map[string]bool{}
	for _, machine := range list.Items {
		known[machine.Name] = true
	}
	w, err := wc.Watch(ctx, &clusterv1.MachineList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	go func() {
		for e := range w.ResultChan() {
			machine, ok := e.Object.(*clusterv1.Machine)
			if !ok || e.Type != watch.Added || known[machine.Name] {
				continue
			}
			if _, worker := machine.Labels[clusterv1.MachineDeploymentNameLabel]; !worker {
				continue
			}
			m.mu.Lock()
			m.created[machine.Name] = ptr.Deref(machine.Spec.Version, "")
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *machineCreations) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.created {
		out[k] = v
	}
	return out
}

// workerMachines returns the cluster's MachineDeployment Machines, by name, with their version; it fails
// while one is not Running or is being deleted.
func workerMachines(ctx context.Context, g Gomega, ns string) map[string]string {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
	out := map[string]string{}
	for _, m := range list.Items {
		g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "worker Machine %s is being deleted", m.Name)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "worker Machine %s", m.Name)
		out[m.Name] = ptr.Deref(m.Spec.Version, "")
	}
	return out
}

// pool returns the cluster's topology MachinePool; it fails while its Nodes are not all Ready and do not
// all run version.
func pool(ctx context.Context, g Gomega, ns, cluster, version string) *clusterv1.MachinePool {
	list := &clusterv1.MachinePoolList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterTopologyMachinePoolNameLabel: "mp-0"})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	mp := &list.Items[0]
	g.Expect(ptr.Deref(mp.Spec.Template.Spec.Version, "")).To(Equal(version))
	g.Expect(mp.Status.ReadyReplicas).To(Equal(ptr.Deref(mp.Spec.Replicas, 1)), "ready replicas of MachinePool %s", mp.Name)
	cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, cluster)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	wc := kubernetes.NewForConfigOrDie(cfg)
	g.Expect(mp.Status.NodeRefs).To(HaveLen(int(ptr.Deref(mp.Spec.Replicas, 1))))
	for _, ref := range mp.Status.NodeRefs {
		node, err := wc.CoreV1().Nodes().Get(ctx, ref.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(node.Status.NodeInfo.KubeletVersion).To(Equal(version), "Node %s of MachinePool %s", node.Name, mp.Name)
	}
	return mp
}

func updateCluster(ctx context.Context, g Gomega, key client.ObjectKey, change func(*clusterv1.Cluster)) {
	g.Eventually(func() error {
		return envtest.PatchWithLock(ctx, env.Client, key, &clusterv1.Cluster{}, change)
	}, time.Minute, interval).Should(Succeed())
}

// TestManagedTopology checks issue 36 end to end with the local provider's class "local": a Cluster of a
// MachineDeployment and a MachinePool gets its variables' defaults at admission and becomes Available;
// an in-place change of a template kind of its class is refused naming it; while the sample Extension's
// BeforeClusterUpgrade holds an upgrade, scaling the MachineDeployment through the topology changes
// nothing, and once the hook lets it through each worker Machine is replaced exactly once (the Machines
// created are the new version's, as many as the new replicas) and the MachinePool's Nodes take the
// version after the control plane.
func TestManagedTopology(t *testing.T) {
	if os.Getenv("CAPSTAN_E2E_TOPOLOGY") == "" {
		t.Skip("a long end-to-end check (about 5 minutes): set CAPSTAN_E2E_TOPOLOGY=1 (make test-e2e-topology)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	webhookstest.Serve(t, env, ns, func(c client.Client) webhooks.Set {
		return corewebhooks.Webhooks(c, corewebhooks.Options{Workload: corewebhooks.KubeconfigWorkload(env.Client)})
	})
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	t.Log("the sample Runtime Extension, for the Clusters of this namespace")
	ext := runtimetest.Start(t)
	g.Expect(sample.Register(ext.Server)).To(Succeed())
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "sample-" + ns},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ptr.To(ext.URL), CABundle: ext.CA},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}}
	g.Expect(env.Client.Create(ctx, ec)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ec) })
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ec), ec)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(ec, runtimev1.ExtensionConfigDiscoveredV1Beta2Condition)).To(BeTrue())
	}, time.Minute, interval).Should(Succeed())

	t.Log("the class local, reconciled")
	for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
		o.SetNamespace(ns)
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	g.Eventually(func(g Gomega) {
		cc := &clusterv1.ClusterClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "local"}, cc)).To(Succeed())
		g.Expect(cc.Status.ObservedGeneration).To(Equal(cc.Generation))
	}, time.Minute, interval).Should(Succeed())

	t.Log("a Cluster of the topology flavor with a MachinePool: its variables are defaulted at admission")
	objs := stack.LocalTemplate(t, "cluster-template-topology.yaml", map[string]string{
		"CLUSTER_NAME": "tp", "NAMESPACE": ns, "KUBERNETES_VERSION": from, "WORKER_MACHINE_COUNT": "2",
	})
	g.Expect(objs).To(HaveLen(1))
	cluster := objs[0]
	g.Expect(unstructured.SetNestedSlice(cluster.Object, []any{map[string]any{"class": "default-worker", "name": "mp-0", "replicas": int64(1)}},
		"spec", "topology", "workers", "machinePools")).To(Succeed())
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "tp"}
	t.Cleanup(func() {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tp"}}
		g := NewWithT(t)
		g.Expect(client.IgnoreNotFound(env.Client.Delete(context.Background(), c))).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(context.Background(), key, c))
		}, wait, interval).Should(BeTrue(), "the Cluster is deleted")
	})
	envtest.DumpOnFailure(t, env.Client, ns)
	stored := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, key, stored)).To(Succeed())
	values := map[string]string{}
	for _, v := range stored.Spec.Topology.Variables {
		values[v.Name] = string(v.Value.Raw)
	}
	g.Expect(values).To(HaveKeyWithValue("workerNodeLabels", `""`), "kubectl get cluster -o yaml shows the defaulted variables")
	g.Expect(values).To(HaveKeyWithValue("machineStartupDelay", `"0s"`))

	t.Log("the Cluster becomes Available, with its MachineDeployment and MachinePool")
	start := time.Now()
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
		g.Expect(workerMachines(ctx, g, ns)).To(And(HaveLen(2), HaveEach(from)))
		pool(ctx, g, ns, "tp", from)
	}, wait, interval).Should(Succeed())
	t.Logf("available after %s", time.Since(start).Round(time.Second))
	before := workerMachines(ctx, g, ns)

	t.Log("an in-place change of a template kind of the class is refused, naming the Cluster")
	cc := &clusterv1.ClusterClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "local"}, cc)).To(Succeed())
	cc.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Kind = "LocalMachinePoolTemplate"
	err := env.Client.Update(ctx, cc)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(`apiVersion.kind cannot be changed from "LocalMachineTemplate" to "LocalMachinePoolTemplate" ` +
		`to prevent incompatible changes in the Clusters: it would break Cluster(s) ` + ns + `/tp`))

	t.Log("BeforeClusterUpgrade holds an upgrade; md-0 is scaled to 3 through the topology meanwhile: nothing changes")
	created := watchMachineCreations(ctx, t, g, ns)
	updateCluster(ctx, g, key, func(c *clusterv1.Cluster) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[sample.HoldUpgradeAnnotation] = "5"
		c.Spec.Topology.Version = to
		c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](3)
	})
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		cond := conditions.GetV1Beta2(c, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal("ClusterUpgrading"))
		g.Expect(cond.Message).To(ContainSubstring("\n  * Following hooks are blocking upgrade: BeforeClusterUpgrade: "))
	}, time.Minute, interval).Should(Succeed())
	mds := &clusterv1.MachineDeploymentList{}
	g.Consistently(func(g Gomega) {
		g.Expect(env.Client.List(ctx, mds, client.InNamespace(ns))).To(Succeed())
		g.Expect(mds.Items).To(HaveLen(1))
		g.Expect(*mds.Items[0].Spec.Replicas).To(Equal(int32(2)), "the scale waits for the upgrade")
		g.Expect(*mds.Items[0].Spec.Template.Spec.Version).To(Equal(from))
		kcps := &controlplanev1.KubeadmControlPlaneList{}
		g.Expect(env.Client.List(ctx, kcps, client.InNamespace(ns))).To(Succeed())
		g.Expect(kcps.Items).To(HaveLen(1))
		g.Expect(kcps.Items[0].Spec.Version).To(Equal(from))
		g.Expect(created.snapshot()).To(BeEmpty(), "no worker Machine is created while the hook holds the upgrade")
	}, 15*time.Second, time.Second).Should(Succeed())

	t.Log("the hook lets the upgrade through: the control plane, then the workers, each replaced once")
	updateCluster(ctx, g, key, func(c *clusterv1.Cluster) { delete(c.Annotations, sample.HoldUpgradeAnnotation) })
	start = time.Now()
	var after map[string]string
	g.Eventually(func(g Gomega) {
		kcps := &controlplanev1.KubeadmControlPlaneList{}
		g.Expect(env.Client.List(ctx, kcps, client.InNamespace(ns))).To(Succeed())
		g.Expect(ptr.Deref(kcps.Items[0].Status.Version, "")).To(Equal(to))
		after = workerMachines(ctx, g, ns)
		g.Expect(after).To(And(HaveLen(3), HaveEach(to)))
		pool(ctx, g, ns, "tp", to)
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
	}, wait, interval).Should(Succeed())
	t.Logf("upgraded and scaled in %s", time.Since(start).Round(time.Second))
	creations := created.snapshot()
	raw, _ := json.Marshal(creations)
	t.Logf("worker Machines created since the change: %s", raw)
	g.Expect(creations).To(And(HaveLen(3), HaveEach(to)), "the 3 workers of the new version, and no other: each of the 2 old ones was replaced once")
	for name := range before {
		g.Expect(after).NotTo(HaveKey(name), "the old worker %s was replaced", name)
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
	workloadtest "github.com/capstan-dev/capstan/internal/test/workload"
)

const (
	topologyWait     = 6 * time.Minute
	topologyInterval = 250 * time.Millisecond
)

// TestClusterClassLocal is issue 14's end-to-end check of the local provider's ClusterClass: the released
// clusterclass-local.yaml and the topology flavor, applied as `clusterctl generate cluster --flavor
// topology` would, with the core (topology controller included), the kubeadm providers and the local
// provider running. The Cluster becomes Available; a taint of the topology's workers is on their Node; the
// class's Pod Security Standard patch is enforced by the workload kube-apiserver (a privileged Pod is
// refused); changing spec.topology.version upgrades the control plane first (its API server answers /version with the new minor) and only then the workers. With
// CAPSTAN_E2E_TOPOLOGY=1 (make test-e2e) it goes on with topologyOperations; without, it skips the rest and
// says so.
func TestClusterClassLocal(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	apiserver, err := binaries.Find("kube-apiserver", "")
	g.Expect(err).NotTo(HaveOccurred())
	_, statErr := os.Stat(filepath.Join(filepath.Dir(apiserver), "kube-apiserver-v1.36"))
	has136 := statErr == nil
	if !has136 {
		t.Log("bin/kube-apiserver-v1.36 is missing (make tools builds it): the v1.36 Machines run the v1.37 API server")
	}

	for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
		// clusterctl puts the class and its templates in the target namespace.
		o.SetNamespace(ns)
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	// A taint of the topology's workers (upstream v1.12), kept on their Nodes.
	workerTaint := corev1.Taint{Key: "example.com/dedicated", Value: "e2e", Effect: corev1.TaintEffectPreferNoSchedule}
	for _, o := range stack.LocalTemplate(t, "cluster-template-topology.yaml", map[string]string{
		"CLUSTER_NAME": "cc", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.36.3", "WORKER_MACHINE_COUNT": "1",
	}) {
		if o.GetKind() == "Cluster" {
			mds, _, err := unstructured.NestedSlice(o.Object, "spec", "topology", "workers", "machineDeployments")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mds).NotTo(BeEmpty(), "the topology flavor has a MachineDeployment")
			mds[0].(map[string]any)["taints"] = []any{map[string]any{"key": workerTaint.Key, "value": workerTaint.Value,
				"effect": string(workerTaint.Effect), "propagation": string(clusterv1.MachineTaintPropagationAlways)}}
			g.Expect(unstructured.SetNestedSlice(o.Object, mds, "spec", "topology", "workers", "machineDeployments")).To(Succeed())
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	clusterKey := client.ObjectKey{Namespace: ns, Name: "cc"}
	// Delete the cluster before the providers stop (cleanups run last in, first out), so that its
	// processes stop with it.
	t.Cleanup(func() {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cc"}}
		g := NewWithT(t)
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, c))).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c))
		}, topologyWait, topologyInterval).Should(BeTrue(), "the Cluster is deleted")
	})
	envtest.DumpOnFailure(t, env.Client, ns)

	t.Log("the Cluster from the ClusterClass becomes Available")
	start := time.Now()
	cluster := &clusterv1.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, clusterKey, cluster)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
		g.Expect(topologyWorkers(ctx, g, ns, "v1.36.3")).To(Equal(1))
	}, topologyWait, topologyInterval).Should(Succeed())
	t.Logf("the cluster was available after %s", time.Since(start).Round(time.Second))
	g.Expect(cluster.Spec.ControlPlaneRef).NotTo(BeNil())
	kcpKey := client.ObjectKey{Namespace: ns, Name: cluster.Spec.ControlPlaneRef.Name}
	kcp := &controlplanev1.KubeadmControlPlane{}
	g.Expect(env.Client.Get(ctx, kcpKey, kcp)).To(Succeed())
	g.Expect(kcp.Labels).To(HaveKey(clusterv1.ClusterTopologyOwnedLabel))

	cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, "cc")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	wc := kubernetes.NewForConfigOrDie(cfg)
	if has136 {
		g.Expect(workloadVersion(g, wc)).To(HavePrefix("v1.36."))
	}

	t.Log("the taint of the topology's workers is on the worker's Node")
	g.Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		g.Expect(list.Items[0].Status.NodeRef).NotTo(BeNil())
		node, err := wc.CoreV1().Nodes().Get(ctx, list.Items[0].Status.NodeRef.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(node.Spec.Taints).To(ContainElement(workerTaint))
	}, time.Minute, topologyInterval).Should(Succeed())

	t.Log("the class's podSecurityStandard patch is in force: a privileged Pod is refused by the workload API server")
	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}},
	}
	_, err = wc.CoreV1().Pods("default").Create(ctx, privileged, metav1.CreateOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("violates PodSecurity"))

	t.Log("spec.topology.version v1.36.3 → v1.37.1: the control plane first, then the workers")
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.37.1" })
	start = time.Now()
	var workersBeforeControlPlane []string
	g.Eventually(func(g Gomega) {
		kcp := &controlplanev1.KubeadmControlPlane{}
		g.Expect(env.Client.Get(ctx, kcpKey, kcp)).To(Succeed())
		mds := &clusterv1.MachineDeploymentList{}
		g.Expect(env.Client.List(ctx, mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: "cc"})).To(Succeed())
		cpUpgraded := kcp.Status.Version != nil && *kcp.Status.Version == "v1.37.1" && kcp.Status.UpdatedReplicas == kcp.Status.Replicas
		for _, md := range mds.Items {
			if v := md.Spec.Template.Spec.Version; v != nil && *v == "v1.37.1" && !cpUpgraded {
				workersBeforeControlPlane = append(workersBeforeControlPlane, md.Name)
			}
		}
		g.Expect(kcp.Spec.Version).To(Equal("v1.37.1"))
		g.Expect(cpUpgraded).To(BeTrue(), "the control plane Machines run v1.37.1")
		g.Expect(topologyWorkers(ctx, g, ns, "v1.37.1")).To(Equal(1))
		g.Expect(env.Client.Get(ctx, clusterKey, cluster)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
	}, topologyWait, topologyInterval).Should(Succeed())
	t.Logf("the upgrade took %s", time.Since(start).Round(time.Second))
	g.Expect(workersBeforeControlPlane).To(BeEmpty(), "no MachineDeployment took v1.37.1 before the control plane ran it")
	t.Log("the templates the MachineDeployment uses are still there")
	mds := &clusterv1.MachineDeploymentList{}
	g.Expect(env.Client.List(ctx, mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: "cc"})).To(Succeed())
	g.Expect(mds.Items).To(HaveLen(1))
	for _, ref := range []*corev1.ObjectReference{mds.Items[0].Spec.Template.Spec.Bootstrap.ConfigRef, &mds.Items[0].Spec.Template.Spec.InfrastructureRef} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, u)).To(Succeed(), "%s %s", ref.Kind, ref.Name)
	}
	g.Eventually(func(g Gomega) {
		cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, "cc")
		g.Expect(err).NotTo(HaveOccurred())
		cfg.Timeout = 5 * time.Second
		g.Expect(workloadVersion(g, kubernetes.NewForConfigOrDie(cfg))).To(HavePrefix("v1.37."))
	}, time.Minute, time.Second).Should(Succeed())

	if os.Getenv("CAPSTAN_E2E_TOPOLOGY") == "" {
		t.Skip("CAPSTAN_E2E_TOPOLOGY is not set: scaling, adding and removing MachineDeployments and the steady-state check are not run (make test-e2e runs them)")
	}
	topologyOperations(ctx, t, g, clusterKey)
}

// topologyWorkers counts the cluster's running worker Machines of version, and fails while any worker
// Machine runs another version or is being deleted.
func topologyWorkers(ctx context.Context, g Gomega, ns, version string) int {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
	n := 0
	for _, m := range list.Items {
		g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "worker Machine %s is being deleted", m.Name)
		g.Expect(m.Spec.Version).To(Equal(ptr.To(version)), "worker Machine %s", m.Name)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "worker Machine %s", m.Name)
		n++
	}
	return n
}

func workloadVersion(g Gomega, wc kubernetes.Interface) string {
	v, err := wc.Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	return v.GitVersion
}

func patchCluster(ctx context.Context, g Gomega, key client.ObjectKey, change func(*clusterv1.Cluster)) {
	g.Eventually(func() error {
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, key, c); err != nil {
			return err
		}
		before := c.DeepCopy()
		change(c)
		return env.Client.Patch(ctx, c, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, time.Minute, topologyInterval).Should(Succeed())
}

// topologyOperations is the rest of issue 14's check, run with CAPSTAN_E2E_TOPOLOGY=1 (make
// test-e2e): md-0 scaled to 2 through the topology; a MachineDeployment md-1 added; a patch upgrade
// that reaches the two MachineDeployments one at a time; md-1 then given its
// own workerNodeLabels (the class's patch rotates its KubeadmConfigTemplate and the new worker's Node has
// the label), changed again (the first template is deleted with the MachineSet that used it), then
// removed (its MachineDeployment and Machines go away); finally, with the Cluster stable, no object of the
// topology changes for 15 s. The scale of md-0 and md-1's workerNodeLabels are planned first with
// `clusterctl alpha topology plan -c` (issue 37): what the controller then writes, seen by a watch, is
// what the plan listed (planThenChange).
func topologyOperations(ctx context.Context, t *testing.T, g Gomega, clusterKey client.ObjectKey) {
	ns := clusterKey.Namespace
	mdOf := func(g Gomega, name string) *clusterv1.MachineDeployment {
		list := &clusterv1.MachineDeploymentList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterTopologyMachineDeploymentNameLabel: name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1), "MachineDeployment %s", name)
		return &list.Items[0]
	}
	running := func(g Gomega, md *clusterv1.MachineDeployment) int32 {
		g.Expect(md.Status.ObservedGeneration).To(Equal(md.Generation))
		g.Expect(md.Status.UpdatedReplicas).To(Equal(md.Status.Replicas))
		return md.Status.AvailableReplicas
	}

	t.Log("md-0 scaled to 2 through the topology, planned first with `clusterctl alpha topology plan -c`: the controller writes what the plan listed")
	planned := planThenChange(ctx, t, g, clusterKey, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2)
	})
	g.Eventually(func(g Gomega) {
		md := mdOf(g, "md-0")
		g.Expect(md.Spec.Replicas).To(Equal(ptr.To[int32](2)))
		g.Expect(running(g, md)).To(BeEquivalentTo(2))
	}, topologyWait, topologyInterval).Should(Succeed())
	planned.check(ctx, t, g)

	t.Log("md-1 added through the topology")
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments = append(c.Spec.Topology.Workers.MachineDeployments,
			clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-1", Replicas: ptr.To[int32](1)})
	})
	var bootstrapBefore string
	g.Eventually(func(g Gomega) {
		md := mdOf(g, "md-1")
		g.Expect(running(g, md)).To(BeEquivalentTo(1))
		bootstrapBefore = md.Spec.Template.Spec.Bootstrap.ConfigRef.Name
	}, topologyWait, topologyInterval).Should(Succeed())

	t.Log("v1.37.1 → v1.37.2 with two MachineDeployments: the control plane first, then one MachineDeployment at a time")
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.37.2" })
	var overlaps []string
	g.Eventually(func(g Gomega) {
		// Both MachineDeployments are read before their Machines: a MachineDeployment that started its upgrade
		// was started after the other's last old Machine went, so that Machine is not in the list read after.
		// (Read the other way round, a Machine that went between the two reads made a false overlap.)
		mds := map[string]*clusterv1.MachineDeployment{"md-0": mdOf(g, "md-0"), "md-1": mdOf(g, "md-1")}
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		var rolling []string
		for _, name := range []string{"md-0", "md-1"} {
			md := mds[name]
			if v := md.Spec.Template.Spec.Version; v == nil || *v != "v1.37.2" {
				continue
			}
			for _, m := range machines.Items {
				if m.Labels[clusterv1.MachineDeploymentNameLabel] != md.Name {
					continue
				}
				if ptr.Deref(m.Spec.Version, "") != "v1.37.2" || m.Status.Phase != string(clusterv1.MachinePhaseRunning) || !m.DeletionTimestamp.IsZero() {
					rolling = append(rolling, name)
					break
				}
			}
		}
		if len(rolling) > 1 {
			overlaps = append(overlaps, fmt.Sprintf("%v at %s", rolling, time.Now().Format(time.StampMilli)))
		}
		g.Expect(topologyWorkers(ctx, g, ns, "v1.37.2")).To(Equal(3))
	}, topologyWait, topologyInterval).Should(Succeed())
	g.Expect(overlaps).To(BeEmpty(), "the MachineDeployments are upgraded one at a time (upgrade-concurrency 1)")

	t.Log("md-1 overrides workerNodeLabels: its KubeadmConfigTemplate is rotated and its new worker carries the label; planned first, the controller writes what the plan listed")
	planned = planThenChange(ctx, t, g, clusterKey, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments[1].Variables = &clusterv1.MachineDeploymentVariables{
			Overrides: []clusterv1.ClusterVariable{{Name: "workerNodeLabels", Value: apiextensionsv1.JSON{Raw: []byte(`"tier=edge"`)}}},
		}
	})
	wc := func(g Gomega) kubernetes.Interface {
		cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, clusterKey.Name)
		g.Expect(err).NotTo(HaveOccurred())
		cfg.Timeout = 5 * time.Second
		return kubernetes.NewForConfigOrDie(cfg)
	}
	g.Eventually(func(g Gomega) {
		md := mdOf(g, "md-1")
		g.Expect(md.Spec.Template.Spec.Bootstrap.ConfigRef.Name).NotTo(Equal(bootstrapBefore))
		g.Expect(running(g, md)).To(BeEquivalentTo(1))
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md.Name})).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		g.Expect(machines.Items[0].Status.NodeRef).NotTo(BeNil())
		node, err := wc(g).CoreV1().Nodes().Get(ctx, machines.Items[0].Status.NodeRef.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(node.Labels).To(HaveKeyWithValue("tier", "edge"))
	}, topologyWait, topologyInterval).Should(Succeed())
	planned.check(ctx, t, g)

	t.Log("md-1's labels changed again: a second rotation; the first template is deleted once no MachineSet uses it")
	// The MachineDeployment keeps one old MachineSet (revisionHistoryLimit 1), so the template of the first
	// MachineSet goes when the second rollout deletes that MachineSet.
	var bootstrapSecond string
	g.Eventually(func(g Gomega) { bootstrapSecond = mdOf(g, "md-1").Spec.Template.Spec.Bootstrap.ConfigRef.Name }, time.Minute, topologyInterval).Should(Succeed())
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value = apiextensionsv1.JSON{Raw: []byte(`"tier=core"`)}
	})
	g.Eventually(func(g Gomega) {
		md := mdOf(g, "md-1")
		g.Expect(md.Spec.Template.Spec.Bootstrap.ConfigRef.Name).NotTo(Or(Equal(bootstrapBefore), Equal(bootstrapSecond)))
		g.Expect(running(g, md)).To(BeEquivalentTo(1))
		first := &unstructured.Unstructured{}
		first.SetAPIVersion("bootstrap.cluster.x-k8s.io/v1beta1")
		first.SetKind("KubeadmConfigTemplate")
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: bootstrapBefore}, first)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the first KubeadmConfigTemplate %s: %v", bootstrapBefore, err)
		second := first.DeepCopy()
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: bootstrapSecond}, second)).To(Succeed(), "the template of the kept old MachineSet stays")
	}, topologyWait, topologyInterval).Should(Succeed())

	t.Log("md-1 removed from the topology: its MachineDeployment and Machines are deleted")
	md1 := mdOf(g, "md-1")
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments = c.Spec.Topology.Workers.MachineDeployments[:1]
	})
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(md1), &clusterv1.MachineDeployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md1.Name})).To(BeNil())
		g.Expect(machines.Items).To(BeEmpty())
	}, topologyWait, topologyInterval).Should(Succeed())

	t.Log("a stable Cluster: no object of the topology changes for 15 s")
	versions := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, list := range []client.ObjectList{&clusterv1.ClusterList{}, &clusterv1.MachineDeploymentList{}, &clusterv1.MachineHealthCheckList{},
			&controlplanev1.KubeadmControlPlaneList{}, &clusterv1.MachineList{}} {
			g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			items, err := meta.ExtractList(list)
			g.Expect(err).NotTo(HaveOccurred())
			for _, item := range items {
				o, err := meta.Accessor(item)
				g.Expect(err).NotTo(HaveOccurred())
				out[fmt.Sprintf("%T/%s", item, o.GetName())] = o.GetResourceVersion()
			}
		}
		return out
	}
	// Stable: Available, and nothing written between two looks 5 s apart.
	var steady map[string]string
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, clusterKey, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue())
		previous := steady
		steady = versions(g)
		g.Expect(steady).To(Equal(previous))
	}, topologyWait, 5*time.Second).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(versions(g)).To(Equal(steady))
	}, 15*time.Second, time.Second).Should(Succeed())
}

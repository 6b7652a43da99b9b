package move

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// from and to are the Kubernetes versions of the moved topology Cluster, before and after its upgrade in
// the target.
const (
	from = "v1.36.3"
	to   = "v1.37.1"
)

// topologyKinds are the kinds of the objects of a topology Cluster of the class "local" and of the class.
var topologyKinds = []schema.GroupVersionKind{
	clusterv1.GroupVersion.WithKind("Cluster"), clusterv1.GroupVersion.WithKind("ClusterClass"),
	clusterv1.GroupVersion.WithKind("MachineDeployment"), clusterv1.GroupVersion.WithKind("MachineSet"),
	clusterv1.GroupVersion.WithKind("Machine"), clusterv1.GroupVersion.WithKind("MachineHealthCheck"),
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlaneTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfig"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalClusterTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachinePoolTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalCluster"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachine"},
}

// topologyObjects lists the objects of topologyKinds in a namespace, as "Kind/name".
func topologyObjects(ctx context.Context, g Gomega, c client.Client, ns string) []string {
	var out []string
	for _, gvk := range topologyKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			out = append(out, gvk.Kind+"/"+o.GetName())
		}
	}
	return out
}

// TestMoveTopologyCluster is issue 36's move check: a Cluster of the local provider's class "local", moved
// with `clusterctl move` between two management clusters that run the core, the kubeadm providers and the
// local provider. Every object it needs moves (the ClusterClass and the five templates it references
// included), none is left in the source; on the target the Cluster is Available with the same Nodes, and
// its topology scales and upgrades there.
func TestMoveTopologyCluster(t *testing.T) {
	if os.Getenv("CAPSTAN_E2E_TOPOLOGY") == "" {
		t.Skip("a long end-to-end check (about 4 minutes): set CAPSTAN_E2E_TOPOLOGY=1 (make test-e2e-topology)")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	// Upstream's defaults: the kubeadm bootstrap and control plane providers.
	clusterctl, sourceKC, targetKC := initManagementClusters(t, g, "--core", "cluster-api:v0.1.0", "-b", "kubeadm:v0.1.0", "-c", "kubeadm:v0.1.0", "-i", "local:v0.1.0")
	dataRoot := t.TempDir()
	stack.ForTest(t, source.Config, stack.Options{Local: true, Kubeadm: true, LocalDataDir: filepath.Join(dataRoot, "source")})
	stack.ForTest(t, target.Config, stack.Options{Local: true, Kubeadm: true, LocalDataDir: filepath.Join(dataRoot, "target")})

	ns := source.NewNamespace(t)
	res := clusterctl(sourceKC, "generate", "cluster", "tmove", "--infrastructure", "local", "--flavor", "topology",
		"--kubernetes-version", from, "--worker-machine-count", "1", "--target-namespace", ns)
	objs, err := manifest.Parse([]byte(res.Stdout))
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(source.Client.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}
	key := client.ObjectKey{Namespace: ns, Name: "tmove"}
	// available: the Cluster is Available with workers worker Machines, and each of its Machines (the
	// control plane's too) runs version.
	available := func(g Gomega, c client.Client, workers int, version string) {
		cl := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, cl)).To(Succeed())
		g.Expect(cl.Spec.Paused).To(BeFalse())
		g.Expect(conditions.IsV1Beta2True(cl, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", cl.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(cl, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cl.Status.V1Beta2)
		machines := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, machines, client.InNamespace(ns), client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(workers))
		for _, m := range machines.Items {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), m.Name)
		}
		g.Expect(c.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: key.Name})).To(Succeed())
		for _, m := range machines.Items {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s is being deleted", m.Name)
			g.Expect(ptr.Deref(m.Spec.Version, "")).To(Equal(version), "Machine %s", m.Name)
		}
	}
	t.Log("the topology Cluster becomes Available in the source")
	g.Eventually(func(g Gomega) { available(g, source.Client, 1, from) }, 6*time.Minute, time.Second).Should(Succeed())
	workload := func(g Gomega, c client.Client) workloadState {
		cl := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, cl)).To(Succeed())
		g.Expect(cl.Spec.InfrastructureRef).NotTo(BeNil())
		return workloadOfLocalCluster(ctx, g, c, ns, "tmove", cl.Spec.InfrastructureRef.Name)
	}
	before := workload(g, source.Client)
	objects := topologyObjects(ctx, g, source.Client, ns)
	for _, want := range []string{"ClusterClass/local", "LocalClusterTemplate/local-cluster", "KubeadmControlPlaneTemplate/local-control-plane",
		"LocalMachineTemplate/local-control-plane", "LocalMachineTemplate/local-default-worker-machinetemplate",
		"KubeadmConfigTemplate/local-default-worker-bootstraptemplate", "LocalMachinePoolTemplate/local-default-worker-machinepooltemplate"} {
		g.Expect(objects).To(ContainElement(want))
	}

	t.Log("clusterctl move")
	res = clusterctltest.Run(t, []string{"move", "--kubeconfig", sourceKC, "--to-kubeconfig", targetKC, "-n", ns}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), "%s%s", res.Stdout, res.Stderr)
	g.Expect(res.Stdout).NotTo(ContainSubstring("not moved"), res.Stdout)

	t.Log("nothing is left in the source; the target has every object")
	g.Expect(topologyObjects(ctx, g, source.Client, ns)).To(BeEmpty())
	g.Expect(topologyObjects(ctx, g, target.Client, ns)).To(ConsistOf(objects))

	t.Log("the Cluster is Available in the target, with the same Nodes")
	g.Eventually(func(g Gomega) {
		available(g, target.Client, 1, from)
		g.Expect(workload(g, target.Client)).To(Equal(before))
	}, 3*time.Minute, time.Second).Should(Succeed())

	t.Log("the topology scales in the target")
	g.Eventually(func() error {
		return envtest.PatchWithLock(ctx, target.Client, key, &clusterv1.Cluster{}, func(c *clusterv1.Cluster) {
			c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](2)
		})
	}, time.Minute, time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) { available(g, target.Client, 2, from) }, 4*time.Minute, time.Second).Should(Succeed())

	t.Log("the topology upgrades in the target")
	g.Eventually(func() error {
		return envtest.PatchWithLock(ctx, target.Client, key, &clusterv1.Cluster{}, func(c *clusterv1.Cluster) {
			c.Spec.Topology.Version = to
		})
	}, time.Minute, time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) { available(g, target.Client, 2, to) }, 6*time.Minute, time.Second).Should(Succeed())

	t.Log("the Cluster is deleted in the target")
	c := &clusterv1.Cluster{}
	g.Expect(target.Client.Get(ctx, key, c)).To(Succeed())
	g.Expect(target.Client.Delete(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := target.Client.Get(ctx, key, c)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	}, 4*time.Minute, time.Second).Should(Succeed())
}

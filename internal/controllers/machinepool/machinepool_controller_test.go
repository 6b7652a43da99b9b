package machinepool_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/provider"
)

// newPool creates a Cluster of the test provider and a MachinePool of replicas with a bootstrap config and
// an InfraMachinePool (which creates InfraMachines when machines is set).
func newPool(ctx context.Context, g Gomega, p builder.Provider, ns string, replicas int32, machines bool) (*clusterv1.MachinePool, *unstructured.Unstructured, *unstructured.Unstructured) {
	infra := p.InfraCluster(ns, "c1")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	g.Expect(env.Client.Create(ctx, builder.Cluster(ns, "c1", infra, nil))).To(Succeed())
	config := p.BootstrapConfig(ns, "pool")
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())
	infraPool := p.InfraMachinePool(ns, "pool", machines)
	g.Expect(env.Client.Create(ctx, infraPool)).To(Succeed())
	mp := builder.MachinePool(ns, "pool", "c1", replicas, infraPool, config)
	mp.Spec.Template.Labels = map[string]string{"team": "a"}
	g.Expect(env.Client.Create(ctx, mp)).To(Succeed())
	return mp, config, infraPool
}

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// poolNodes returns the names of the workload cluster's Nodes of a pool (the test provider names them
// <namespace>-<pool>-<i>).
func poolNodes(ctx context.Context, g Gomega, ns string) []string {
	nodes := &corev1.NodeList{}
	g.Expect(workload.Client.List(ctx, nodes)).To(Succeed())
	var out []string
	for _, n := range nodes.Items {
		if len(n.Name) > len(ns) && n.Name[:len(ns)+1] == ns+"-" {
			out = append(out, n.Name)
		}
	}
	return out
}

func TestMachinePoolLifecycle(t *testing.T) {
	for _, p := range []builder.Provider{builder.V1Beta1, builder.V1Beta2} {
		t.Run("provider of the "+string(p.Contract)+" contract", func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			mp, config, infraPool := newPool(ctx, g, p, ns, 3, false)

			t.Log("a MachinePool of 3 gets 3 Nodes and reaches Running")
			g.Eventually(func(g Gomega) {
				get(g, mp)
				g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhaseRunning)))
				g.Expect(mp.Status.NodeRefs).To(HaveLen(3))
				g.Expect(mp.Status.Replicas).To(BeEquivalentTo(3))
				g.Expect(mp.Status.ReadyReplicas).To(BeEquivalentTo(3))
				g.Expect(mp.Status.AvailableReplicas).To(BeEquivalentTo(3))
				// The test provider's Nodes run a v1.31.0 kubelet.
				g.Expect(mp.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 3}}))
				g.Expect(conditions.IsTrue(mp, clusterv1.ReadyCondition)).To(BeTrue())
				g.Expect(conditions.IsV1Beta2True(mp, clusterv1.MachinePoolAvailableV1Beta2Condition)).To(BeTrue())
			}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
			g.Expect(mp.Finalizers).To(ContainElement(clusterv1.MachinePoolFinalizer))
			g.Expect(mp.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
			g.Expect(mp.OwnerReferences).To(ContainElement(HaveField("Kind", "Cluster")))
			g.Expect(mp.Spec.Template.Spec.Bootstrap.DataSecretName).To(HaveValue(Equal("pool")))
			g.Expect(mp.Spec.ProviderIDList).To(ConsistOf(
				provider.ProviderID(ns, "pool-0"), provider.ProviderID(ns, "pool-1"), provider.ProviderID(ns, "pool-2")))
			g.Expect(mp.Status.BootstrapReady).To(BeTrue())
			g.Expect(mp.Status.InfrastructureReady).To(BeTrue())
			g.Expect(mp.Status.V1Beta2.ReadyReplicas).To(HaveValue(BeEquivalentTo(3)))
			g.Expect(mp.Status.ObservedGeneration).To(Equal(mp.Generation))
			for _, obj := range []*unstructured.Unstructured{config, infraPool} {
				get(g, obj)
				owner := metav1.GetControllerOf(obj)
				g.Expect(owner).NotTo(BeNil())
				g.Expect(owner.Kind).To(Equal("MachinePool"))
				g.Expect(obj.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
			}
			node := &corev1.Node{}
			g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: mp.Status.NodeRefs[0].Name}, node)).To(Succeed())
			g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.OwnerKindAnnotation, "MachinePool"))
			g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.OwnerNameAnnotation, "pool"))
			g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.ClusterNamespaceAnnotation, ns))

			t.Log("scaling to 1 through the scale subresource removes two Nodes")
			scale := &autoscalingv1.Scale{}
			g.Expect(env.Client.SubResource("scale").Get(ctx, mp, scale)).To(Succeed())
			g.Expect(scale.Spec.Replicas).To(BeEquivalentTo(3))
			scale.Spec.Replicas = 1
			g.Expect(env.Client.SubResource("scale").Update(ctx, mp, client.WithSubResourceBody(scale))).To(Succeed())
			g.Eventually(func(g Gomega) {
				get(g, mp)
				g.Expect(mp.Spec.ProviderIDList).To(ConsistOf(provider.ProviderID(ns, "pool-0")))
				g.Expect(mp.Status.NodeRefs).To(HaveLen(1))
				g.Expect(mp.Status.Replicas).To(BeEquivalentTo(1))
				g.Expect(mp.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 1}}))
				g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhaseRunning)))
				g.Expect(poolNodes(ctx, g, ns)).To(ConsistOf(ns + "-pool-0"))
			}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

			t.Log("deleting the MachinePool deletes its provider objects and its Nodes")
			g.Expect(env.Client.Delete(ctx, mp)).To(Succeed())
			g.Eventually(func(g Gomega) {
				err := env.Client.Get(ctx, client.ObjectKeyFromObject(mp), mp)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
			}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
			for _, obj := range []*unstructured.Unstructured{config, infraPool} {
				err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: got %v", obj.GetKind(), err)
			}
			g.Expect(poolNodes(ctx, g, ns)).To(BeEmpty())
		})
	}
}

func TestMachinePoolMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	mp, _, _ := newPool(ctx, g, builder.V1Beta1, ns, 2, true)

	machines := func(g Gomega) []clusterv1.Machine {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		return list.Items
	}
	t.Log("the InfraMachines of the pool's instances get Machines that reach Running")
	g.Eventually(func(g Gomega) {
		ms := machines(g)
		g.Expect(ms).To(HaveLen(2))
		for _, m := range ms {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil())
		}
		get(g, mp)
		g.Expect(mp.Status.V1Beta2.ReadyReplicas).To(HaveValue(BeEquivalentTo(2)))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	for _, m := range machines(g) {
		g.Expect(m.Name).To(BeElementOf("pool-0", "pool-1"))
		g.Expect(m.Labels).To(HaveKeyWithValue(clusterv1.MachinePoolNameLabel, "pool"))
		g.Expect(m.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
		g.Expect(m.Labels).To(HaveKeyWithValue("team", "a"))
		owner := metav1.GetControllerOf(&m)
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.Kind).To(Equal("MachinePool"))
		g.Expect(m.Spec.InfrastructureRef.Kind).To(Equal(builder.InfraMachineKind))
		// Not adopted by the Cluster as a stand-alone Machine.
		g.Expect(m.OwnerReferences).NotTo(ContainElement(HaveField("Kind", "Cluster")))
	}

	t.Log("scaling down deletes the Machine of the instance that leaves")
	get(g, mp)
	mp.Spec.Replicas = ptr.To[int32](1)
	g.Expect(env.Client.Update(ctx, mp)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ms := machines(g)
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Name).To(Equal("pool-0"))
		get(g, mp)
		g.Expect(mp.Status.NodeRefs).To(HaveLen(1))
		g.Expect(mp.Status.V1Beta2.ReadyReplicas).To(HaveValue(BeEquivalentTo(1)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("deleting the Cluster deletes the MachinePool and its Machines first")
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(machines(g)).To(BeEmpty())
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(mp), mp)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}

func TestMachinePoolWaitsForItsProviders(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := builder.V1Beta1
	infra := p.InfraCluster(ns, "c1")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	g.Expect(env.Client.Create(ctx, builder.Cluster(ns, "c1", infra, nil))).To(Succeed())
	// The InfraMachinePool and the bootstrap config do not exist yet.
	mp := builder.MachinePool(ns, "pool", "c1", 2, p.InfraMachinePool(ns, "pool", false), p.BootstrapConfig(ns, "pool"))
	mp.Spec.Replicas = nil
	g.Expect(env.Client.Create(ctx, mp)).To(Succeed())

	g.Eventually(func(g Gomega) {
		get(g, mp)
		g.Expect(mp.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)), "upstream's webhook default")
		g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhasePending)))
		c := conditions.Get(mp, clusterv1.InfrastructureReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(clusterv1.IncorrectExternalRefReason))
		g.Expect(c.Message).To(Equal("Could not find infra reference of kind " + builder.InfraMachinePoolKind + " with name pool"))
		v2 := conditions.GetV1Beta2(mp, clusterv1.MachinePoolBootstrapConfigReadyV1Beta2Condition)
		g.Expect(v2).NotTo(BeNil())
		g.Expect(v2.Reason).To(Equal(clusterv1.MachineBootstrapConfigDoesNotExistV1Beta2Reason))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("once they exist, the pool is provisioned")
	g.Expect(env.Client.Create(ctx, p.BootstrapConfig(ns, "pool"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, p.InfraMachinePool(ns, "pool", false))).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, mp)
		g.Expect(mp.Status.Phase).To(Equal(string(clusterv1.MachinePoolPhaseRunning)))
		g.Expect(mp.Status.NodeRefs).To(HaveLen(1))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())

	t.Log("a paused Cluster stops the controller, and the Paused condition says so")
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	g.Expect(env.Client.Patch(ctx, cluster, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"paused":true}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, mp)
		g.Expect(conditions.IsV1Beta2True(mp, clusterv1.PausedV1Beta2Condition)).To(BeTrue())
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	mp.Spec.Replicas = ptr.To[int32](2)
	g.Expect(env.Client.Update(ctx, mp)).To(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, mp)
		g.Expect(mp.Spec.ProviderIDList).To(HaveLen(1), "the pool's instances changed but the MachinePool is paused")
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
}

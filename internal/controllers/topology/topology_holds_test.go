package topology

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/topology"
)

// fakeHooks answers the lifecycle hooks: the hooks in blocking hold, the others let through; it records
// the calls.
type fakeHooks struct {
	mu       sync.Mutex
	blocking map[string]bool
	calls    []topology.HookCall
}

func (f *fakeHooks) Call(_ context.Context, _ *clusterv1.Cluster, call topology.HookCall) (topology.HookResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.blocking[call.Hook] {
		return topology.HookResponse{RetryAfter: time.Second, Message: "held by the test"}, nil
	}
	return topology.HookResponse{}, nil
}

func (f *fakeHooks) block(hook string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocking[hook] = on
}

func (f *fakeHooks) called(hook string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.Hook == hook {
			n++
		}
	}
	return n
}

// runningCluster creates a Cluster of the class of classFixture at version with one MachineDeployment and
// plays the control plane provider and Cluster controller until it runs.
func runningCluster(ctx context.Context, g Gomega, ns, version string, mutate func(*clusterv1.Cluster)) (client.ObjectKey, *unstructured.Unstructured) {
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Class: "class", Version: version,
			ControlPlane: clusterv1.ControlPlaneTopology{Replicas: ptr.To[int32](1)},
			Workers: &clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
				{Class: "default-worker", Name: "md-0", Replicas: ptr.To[int32](1)},
			}},
		}},
	}
	if mutate != nil {
		mutate(cluster)
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKeyFromObject(cluster)
	var cp *unstructured.Unstructured
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Spec.ControlPlaneRef).NotTo(BeNil())
		cp = getU(ctx, g, schema.FromAPIVersionAndKind(c.Spec.ControlPlaneRef.APIVersion, c.Spec.ControlPlaneRef.Kind), ns, c.Spec.ControlPlaneRef.Name)
	}, timeout, interval).Should(Succeed())
	controlPlaneRuns(ctx, g, cp, version)
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		conditions.Set(c, clusterv1.Condition{Type: clusterv1.ControlPlaneInitializedCondition, Status: "True"})
		g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(listMDs(ctx, g, ns)).To(HaveLen(1))
		g.Expect(topologyCondition(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
	return key, cp
}

// controlPlaneRuns plays the control plane provider: status.version and the replicas of its spec.
func controlPlaneRuns(ctx context.Context, g Gomega, cp *unstructured.Unstructured, version string) {
	g.Eventually(func(g Gomega) {
		cur := getU(ctx, g, cp.GroupVersionKind(), cp.GetNamespace(), cp.GetName())
		replicas := num(cur.Object, "spec", "replicas")
		_ = unstructured.SetNestedField(cur.Object, version, "status", "version")
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas"} {
			_ = unstructured.SetNestedField(cur.Object, replicas, "status", f)
		}
		g.Expect(env.Client.Status().Update(ctx, cur)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

func updateCluster(ctx context.Context, g Gomega, key client.ObjectKey, change func(*clusterv1.Cluster)) {
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		change(c)
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

// TestNoDoubleRolloutWhileAHookBlocks: while BeforeClusterUpgrade blocks an upgrade, a scale of the
// MachineDeployment through the topology changes nothing; once the hook lets the upgrade through, the
// control plane takes the version and then the MachineDeployment takes the version and its replicas in
// one change. The controller keeps the pending-hooks annotation as the engine says.
func TestNoDoubleRolloutWhileAHookBlocks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hooks := &fakeHooks{blocking: map[string]bool{topology.BeforeClusterUpgradeHook: true}}
	startManager(t, ns, func(r *Reconciler) { r.Hooks = hooks })
	classFixture(ctx, g, ns)
	key, cp := runningCluster(ctx, g, ns, "v1.30.0", nil)
	md := listMDs(ctx, g, ns)[0]

	updateCluster(ctx, g, key, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Version = "v1.31.0"
		c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr.To[int32](3)
	})
	g.Eventually(func(g Gomega) {
		cond := topologyCondition(ctx, g, key)
		g.Expect(cond.Reason).To(Equal(ClusterUpgradingReason))
		g.Expect(cond.Message).To(Equal("Cluster is upgrading to v1.31.0\n" +
			"  * Following hooks are blocking upgrade: BeforeClusterUpgrade: held by the test\n" +
			"  * " + cp.GetKind() + " pending upgrade to version v1.31.0\n" +
			"  * MachineDeployment " + md.Name + " pending upgrade to version v1.31.0"))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		got := listMDs(ctx, g, ns)[0]
		g.Expect(got.Generation).To(Equal(md.Generation), "the held MachineDeployment is not changed")
		g.Expect(*got.Spec.Replicas).To(Equal(int32(1)))
		g.Expect(str(getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName()).Object, "spec", "version")).To(Equal("v1.30.0"))
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation))
	}, 3*time.Second, interval).Should(Succeed())

	hooks.block(topology.BeforeClusterUpgradeHook, false)
	g.Eventually(func(g Gomega) {
		g.Expect(str(getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName()).Object, "spec", "version")).To(Equal("v1.31.0"))
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Annotations).To(HaveKeyWithValue(runtimev1.PendingHooksAnnotation, "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"))
	}, timeout, interval).Should(Succeed())
	g.Expect(listMDs(ctx, g, ns)[0].Generation).To(Equal(md.Generation), "the MachineDeployment waits for the control plane")

	controlPlaneRuns(ctx, g, cp, "v1.31.0")
	g.Eventually(func(g Gomega) {
		got := listMDs(ctx, g, ns)[0]
		g.Expect(*got.Spec.Template.Spec.Version).To(Equal("v1.31.0"))
		g.Expect(*got.Spec.Replicas).To(Equal(int32(3)))
		g.Expect(got.Generation).To(Equal(md.Generation+1), "the version and the replicas came in one change")
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation), "AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade and AfterClusterUpgrade were called")
		g.Expect(topologyCondition(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
	g.Expect(hooks.called(topology.AfterControlPlaneUpgradeHook)).To(Equal(1))
	g.Expect(hooks.called(topology.AfterClusterUpgradeHook)).To(Equal(1))
}

// TestMachinePoolTopologyIsApplied: a MachinePool of the topology is created with its bootstrap config
// and InfraMachinePool from the class's templates, and removed with the topology's entry.
func TestMachinePoolTopologyIsApplied(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startManager(t, ns)
	p := builder.V1Beta1
	boot := p.Object(p.Bootstrap, builder.BootstrapTemplateKind, ns, "pool-boot")
	_ = unstructured.SetNestedMap(boot.Object, map[string]any{"spec": map[string]any{"fromTemplate": "pool-boot"}}, "spec", "template")
	g.Expect(env.Client.Create(ctx, boot)).To(Succeed())
	infra := p.Object(p.Infrastructure, builder.InfraMachinePoolTemplateKind, ns, "pool-infra")
	_ = unstructured.SetNestedMap(infra.Object, map[string]any{"spec": map[string]any{"fromTemplate": "pool-infra"}}, "spec", "template")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	class := classFixture(ctx, g, ns)
	g.Eventually(func(g Gomega) {
		got := &clusterv1.ClusterClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), got)).To(Succeed())
		got.Spec.Workers.MachinePools = []clusterv1.MachinePoolClass{{Class: "pool", Template: clusterv1.MachinePoolClassTemplate{
			Bootstrap: clusterv1.LocalObjectTemplate{Ref: builder.Ref(boot)}, Infrastructure: clusterv1.LocalObjectTemplate{Ref: builder.Ref(infra)}}}}
		g.Expect(env.Client.Update(ctx, got)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	key, _ := runningCluster(ctx, g, ns, "v1.30.0", func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachinePools = []clusterv1.MachinePoolTopology{{Class: "pool", Name: "mp-0", Replicas: ptr.To[int32](2)}}
	})
	g.Eventually(func(g Gomega) {
		mps := &clusterv1.MachinePoolList{}
		g.Expect(env.Client.List(ctx, mps, client.InNamespace(ns))).To(Succeed())
		g.Expect(mps.Items).To(HaveLen(1))
		mp := mps.Items[0]
		g.Expect(mp.Labels).To(HaveKeyWithValue(clusterv1.ClusterTopologyMachinePoolNameLabel, "mp-0"))
		g.Expect(*mp.Spec.Replicas).To(Equal(int32(2)))
		g.Expect(*mp.Spec.Template.Spec.Version).To(Equal("v1.30.0"))
		b := getU(ctx, g, schema.FromAPIVersionAndKind(mp.Spec.Template.Spec.Bootstrap.ConfigRef.APIVersion, builder.BootstrapConfigKind), ns, mp.Spec.Template.Spec.Bootstrap.ConfigRef.Name)
		g.Expect(str(b.Object, "spec", "fromTemplate")).To(Equal("pool-boot"))
		i := getU(ctx, g, schema.FromAPIVersionAndKind(mp.Spec.Template.Spec.InfrastructureRef.APIVersion, builder.InfraMachinePoolKind), ns, mp.Spec.Template.Spec.InfrastructureRef.Name)
		g.Expect(str(i.Object, "spec", "fromTemplate")).To(Equal("pool-infra"))
	}, timeout, interval).Should(Succeed())

	updateCluster(ctx, g, key, func(c *clusterv1.Cluster) { c.Spec.Topology.Workers.MachinePools = nil })
	g.Eventually(func(g Gomega) {
		mps := &clusterv1.MachinePoolList{}
		g.Expect(env.Client.List(ctx, mps, client.InNamespace(ns))).To(Succeed())
		g.Expect(mps.Items).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}

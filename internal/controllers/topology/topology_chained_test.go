package topology

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/topology"
)

// TestChainedUpgrade: with the class's kubernetesVersions, spec.topology.version moves from v1.30 to
// v1.33 in one change. The control plane goes through every minor, each step behind
// BeforeControlPlaneUpgrade and AfterControlPlaneUpgrade; the MachineDeployment goes from v1.30 to
// v1.33 in one step, behind BeforeWorkersUpgrade and AfterWorkersUpgrade; the Cluster's status shows
// the plan still ahead of the control plane's spec.version and of the workers; AfterClusterUpgrade, blocking, holds the end of the upgrade until it lets go.
func TestChainedUpgrade(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hooks := &fakeHooks{blocking: map[string]bool{topology.AfterClusterUpgradeHook: true}}
	startManager(t, ns, func(r *Reconciler) { r.Hooks = hooks })
	class := classFixture(ctx, g, ns)
	g.Eventually(func(g Gomega) {
		c := &clusterv1.ClusterClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), c)).To(Succeed())
		c.Spec.KubernetesVersions = []string{"v1.30.0", "v1.31.0", "v1.32.0", "v1.32.3", "v1.33.0"}
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	key, cp := runningCluster(ctx, g, ns, "v1.30.0", nil)
	md := listMDs(ctx, g, ns)[0]

	updateCluster(ctx, g, key, func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "v1.33.0" })
	plan := func(c *clusterv1.Cluster) (cpPlan, workersPlan []string) {
		if c.Status.V1Beta2 == nil {
			return nil, nil
		}
		if s := c.Status.V1Beta2.ControlPlane; s != nil {
			for _, v := range s.UpgradePlan {
				cpPlan = append(cpPlan, v.Version)
			}
		}
		if s := c.Status.V1Beta2.Workers; s != nil {
			for _, v := range s.UpgradePlan {
				workersPlan = append(workersPlan, v.Version)
			}
		}
		return cpPlan, workersPlan
	}
	var cpSteps []string
	for _, step := range []struct {
		version             string
		cpPlan, workersPlan []string
	}{
		{"v1.31.0", []string{"v1.32.3", "v1.33.0"}, []string{"v1.33.0"}},
		{"v1.32.3", []string{"v1.33.0"}, []string{"v1.33.0"}},
		{"v1.33.0", nil, []string{"v1.33.0"}},
	} {
		g.Eventually(func(g Gomega) {
			g.Expect(str(getU(ctx, g, cp.GroupVersionKind(), ns, cp.GetName()).Object, "spec", "version")).To(Equal(step.version))
			c := &clusterv1.Cluster{}
			g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
			gotCP, gotWorkers := plan(c)
			g.Expect(gotCP).To(Equal(step.cpPlan), "status.v1beta2.controlPlane.upgradePlan")
			g.Expect(gotWorkers).To(Equal(step.workersPlan), "status.v1beta2.workers.upgradePlan")
		}, timeout, interval).Should(Succeed())
		g.Expect(*listMDs(ctx, g, ns)[0].Spec.Template.Spec.Version).To(Equal("v1.30.0"), "the workers skip %s", step.version)
		cpSteps = append(cpSteps, step.version)
		controlPlaneRuns(ctx, g, cp, step.version)
	}
	g.Expect(cpSteps).To(Equal([]string{"v1.31.0", "v1.32.3", "v1.33.0"}))

	// The MachineDeployment goes to v1.33 in one change; AfterClusterUpgrade then blocks.
	g.Eventually(func(g Gomega) {
		got := listMDs(ctx, g, ns)[0]
		g.Expect(*got.Spec.Template.Spec.Version).To(Equal("v1.33.0"))
		g.Expect(got.Generation).To(Equal(md.Generation + 1))
		g.Expect(hooks.called(topology.AfterClusterUpgradeHook)).To(BeNumerically(">=", 1))
		cond := topologyCondition(ctx, g, key)
		g.Expect(cond.Reason).To(Equal(ClusterUpgradingReason))
		g.Expect(cond.Message).To(Equal("Cluster is upgrading to v1.33.0\n" +
			"  * Following hooks are blocking upgrade: AfterClusterUpgrade: held by the test"))
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Annotations).To(HaveKeyWithValue(runtimev1.PendingHooksAnnotation, "AfterClusterUpgrade"))
		gotCP, gotWorkers := plan(c)
		g.Expect(gotCP).To(BeEmpty())
		g.Expect(gotWorkers).To(BeEmpty())
	}, timeout, interval).Should(Succeed())

	hooks.block(topology.AfterClusterUpgradeHook, false)
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, c)).To(Succeed())
		g.Expect(c.Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation))
		g.Expect(topologyCondition(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())

	var lines []string
	hooks.mu.Lock()
	for _, c := range hooks.calls {
		if c.Hook != topology.AfterClusterUpgradeHook {
			lines = append(lines, c.Hook+" "+c.FromVersion+" "+c.ToVersion)
		}
	}
	hooks.mu.Unlock()
	g.Expect(lines).To(Equal([]string{
		"BeforeClusterCreate  ",
		"BeforeClusterUpgrade v1.30.0 v1.33.0",
		"BeforeControlPlaneUpgrade v1.30.0 v1.31.0",
		"AfterControlPlaneUpgrade  v1.31.0",
		"BeforeControlPlaneUpgrade v1.31.0 v1.32.3",
		"AfterControlPlaneUpgrade  v1.32.3",
		"BeforeControlPlaneUpgrade v1.32.3 v1.33.0",
		"AfterControlPlaneUpgrade  v1.33.0",
		"BeforeWorkersUpgrade v1.30.0 v1.33.0",
		"AfterWorkersUpgrade  v1.33.0",
	}))
}

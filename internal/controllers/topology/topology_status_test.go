package topology

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/topology"
)

// TestTopologyReconciledOverAConcurrentWrite: the Cluster controller writes the Cluster's status between
// the topology controller's read and its write of TopologyReconciled. The write conflicts; it is sent
// again over the Cluster read from the API server, within the same reconcile, and the other writer's
// condition is kept.
func TestTopologyReconciledOverAConcurrentWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := builder.Cluster(ns, "c", nil, nil)
	cluster.Spec.Topology = &clusterv1.Topology{Class: "class", Version: "v1.31.0"}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	patches := 0
	c := interceptor.NewClient(base, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			if patches == 1 {
				// The Cluster controller's write, after the topology controller read the Cluster.
				other := &clusterv1.Cluster{}
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), other)).To(Succeed())
				conditions.MarkTrue(other, clusterv1.InfrastructureReadyCondition)
				g.Expect(env.Client.Status().Update(ctx, other)).To(Succeed())
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	r := &Reconciler{Client: c, APIReader: env.Client}
	g.Expect(r.patchTopologyReconciled(ctx, client.ObjectKeyFromObject(cluster), &scope{cluster: cluster, classNotReconciled: true})).To(Succeed())
	g.Expect(patches).To(Equal(2), "the conflicting write is sent again once")

	got := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
	g.Expect(conditions.Get(got, TopologyReconciledCondition)).NotTo(BeNil())
	g.Expect(conditions.Get(got, TopologyReconciledCondition).Reason).To(Equal(clusterClassOutdatedV1Beta1Reason))
	g.Expect(conditions.Get(got, clusterv1.InfrastructureReadyCondition)).NotTo(BeNil(), "the other writer's condition is kept")
	g.Expect(conditions.Get(got, clusterv1.InfrastructureReadyCondition).Status).To(Equal(corev1.ConditionTrue))
}

func TestTopologyReconciledReasons(t *testing.T) {
	cluster := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Version: "v1.32.0"}}}
	tests := []struct {
		name        string
		s           scope
		wantReason  string
		wantMessage string
	}{
		{"the control plane waits for the workers", scope{desired: &topology.Desired{Upgrade: topology.UpgradeStatus{ControlPlanePendingUpgrade: true,
			ControlPlaneWaitingFor: "MachineDeployment(s) md-a not on version v1.31.0 yet or still upgrading"}}},
			ControlPlaneUpgradePendingReason, "Control plane rollout and upgrade to version v1.32.0 on hold: MachineDeployment(s) md-a not on version v1.31.0 yet or still upgrading"},
		{"a hook blocks", scope{blockingHook: "BeforeClusterUpgrade", hookMessage: "waiting for a backup", desired: &topology.Desired{}},
			LifecycleHookBlockingReason, `hook "BeforeClusterUpgrade" is blocking: waiting for a backup`},
		{"MachinePools wait for their creation", scope{desired: &topology.Desired{Upgrade: topology.UpgradeStatus{MachinePoolsPendingCreate: []string{"mp-0"}}}},
			MachinePoolsCreatePendingReason, "MachinePool(s) mp-0 creation on hold"},
		{"a MachinePool's upgrade is deferred", scope{desired: &topology.Desired{Upgrade: topology.UpgradeStatus{MachinePoolsPendingUpgrade: []string{"pool"}, MachinePoolsDeferred: []string{"pool"}}}},
			MachinePoolsUpgradeDeferredReason, "MachinePool(s) pool rollout and upgrade to version v1.32.0 on hold"},
		{"a MachinePool upgrades", scope{desired: &topology.Desired{Upgrade: topology.UpgradeStatus{MachinePoolsUpgrading: []string{"pool"}}}},
			ClusterUpgradingReason, "MachinePool(s) pool upgrading to version v1.32.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.s.cluster = cluster
			c := topologyReconciled(&tt.s)
			g.Expect(c.Reason).To(Equal(tt.wantReason))
			g.Expect(c.Message).To(Equal(tt.wantMessage))
		})
	}
}

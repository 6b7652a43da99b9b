package topology

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
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
	g.Expect(conditions.Get(got, TopologyReconciledCondition).Reason).To(Equal(ClusterClassNotReconciledReason))
	g.Expect(conditions.Get(got, clusterv1.InfrastructureReadyCondition)).NotTo(BeNil(), "the other writer's condition is kept")
	g.Expect(conditions.Get(got, clusterv1.InfrastructureReadyCondition).Status).To(Equal(corev1.ConditionTrue))
}

// TestTopologyReconciledReasons: the TopologyReconciled condition, v1beta2 and v1beta1, for what a
// reconcile found; the cases of upstream's TestReconcileTopologyReconciledCondition that apply, with the
// upgrade facts as capstan's engine reports them.
func TestTopologyReconciledReasons(t *testing.T) {
	// upgrade is a reconcile of a Cluster with spec.topology.version version whose desired control plane
	// has spec.version cpVersion.
	upgrade := func(version, cpVersion string, u topology.UpgradeStatus) scope {
		cp := builder.V1Beta1.ControlPlane("ns", "cp")
		if err := unstructured.SetNestedField(cp.Object, cpVersion, "spec", "version"); err != nil {
			t.Fatal(err)
		}
		return scope{
			cluster: &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Version: version}}},
			desired: &topology.Desired{ControlPlane: topology.ControlPlaneState{Object: cp}, Upgrade: u},
		}
	}
	blocked := func(s scope, hook, message string) scope {
		s.blockingHook, s.hookMessage = hook, message
		return s
	}
	afterClusterUpgradePending := func(s scope) scope {
		s.cluster.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: "AfterClusterUpgrade"}
		return s
	}
	mds := []string{"md1", "md2", "md3", "md4"}
	tests := []struct {
		name        string
		s           scope
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
		// wantV1Beta1Reason is the v1beta1 reason where it is not wantReason.
		wantV1Beta1Reason string
	}{
		{
			name:       "a reconcile error",
			s:          scope{err: errors.New("computing the desired state: boom"), cluster: &clusterv1.Cluster{}},
			wantStatus: metav1.ConditionFalse, wantReason: "ReconcileFailed", wantV1Beta1Reason: "TopologyReconcileFailed",
			wantMessage: "Computing the desired state: boom",
		},
		{
			name:       "the ClusterClass is not reconciled",
			s:          scope{classNotReconciled: true, cluster: &clusterv1.Cluster{}},
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterClassNotReconciled",
			wantMessage: "ClusterClass not reconciled. If this condition persists please check ClusterClass status. A ClusterClass is reconciled if" +
				".status.observedGeneration == .metadata.generation is true. If this is not the case either ClusterClass reconciliation failed or the ClusterClass is paused",
		},
		{
			name: "BeforeClusterCreate blocks",
			s: func() scope {
				s := blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}), "BeforeClusterCreate", "msg")
				s.creating = true
				return s
			}(),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterCreating",
			wantMessage: "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: msg",
		},
		{
			name: "BeforeClusterCreate blocks without a message",
			s: func() scope {
				s := blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}), "BeforeClusterCreate", "")
				s.creating = true
				return s
			}(),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterCreating",
			wantMessage: "Following hooks are blocking Cluster topology creation: BeforeClusterCreate",
		},
		{
			name: "a new Cluster's MachineDeployments wait for the control plane",
			s: func() scope {
				s := upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{MachineDeploymentsPendingCreate: []string{"md-1", "md-0"}})
				s.creating = true
				return s
			}(),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployments md-0, md-1 creation deferred while control plane upgrade is in progress",
		},
		{
			name: "the control plane is pending upgrade and a before-upgrade annotation holds it",
			s: blocked(upgrade("v1.22.0", "v1.20.5", topology.UpgradeStatus{ControlPlanePendingUpgrade: true,
				ControlPlanePlan: []string{"v1.21.2", "v1.22.0"}, WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
				"BeforeClusterUpgrade", "annotation before-upgrade.hook.cluster.cluster.x-k8s.io/test is set"),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: BeforeClusterUpgrade: annotation before-upgrade.hook.cluster.cluster.x-k8s.io/test is set\n" +
				"  * GenericControlPlane pending upgrade to version v1.21.2, v1.22.0\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is pending upgrade and BeforeControlPlaneUpgrade blocks (first step)",
			s: blocked(upgrade("v1.22.0", "v1.20.5", topology.UpgradeStatus{ControlPlanePendingUpgrade: true,
				ControlPlanePlan: []string{"v1.21.2", "v1.22.0"}, WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
				"BeforeControlPlaneUpgrade", "msg"),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: BeforeControlPlaneUpgrade: msg\n" +
				"  * GenericControlPlane pending upgrade to version v1.21.2, v1.22.0\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is starting upgrade (first step)",
			s: upgrade("v1.22.0", "v1.21.2", topology.UpgradeStatus{ControlPlaneStartingUpgrade: true,
				ControlPlanePlan: []string{"v1.21.2", "v1.22.0"}, WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * GenericControlPlane upgrading to version v1.21.2 (v1.22.0 pending)\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is upgrading (first step)",
			s: upgrade("v1.22.0", "v1.21.2", topology.UpgradeStatus{ControlPlanePendingUpgrade: true, ControlPlaneUpgrading: true,
				ControlPlanePlan: []string{"v1.22.0"}, WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * GenericControlPlane upgrading to version v1.21.2 (v1.22.0 pending)\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is upgraded and AfterControlPlaneUpgrade blocks (first step)",
			s: blocked(upgrade("v1.22.0", "v1.21.2", topology.UpgradeStatus{ControlPlanePendingUpgrade: true,
				ControlPlanePlan: []string{"v1.22.0"}, WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
				"AfterControlPlaneUpgrade", "msg"),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: AfterControlPlaneUpgrade: msg\n" +
				"  * GenericControlPlane pending upgrade to version v1.22.0\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is upgrading (second step)",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{ControlPlaneUpgrading: true,
				WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * GenericControlPlane upgrading to version v1.22.0\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "the control plane is upgraded and BeforeWorkersUpgrade blocks (second step)",
			s: blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"}, MachineDeploymentsPendingUpgrade: mds}),
				"BeforeWorkersUpgrade", "msg"),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: BeforeWorkersUpgrade: msg\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0",
		},
		{
			name: "MachineDeployments are upgrading (second step)",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsUpgrading: []string{"md1"}, MachineDeploymentsPendingUpgrade: []string{"md2", "md3", "md4"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md1 upgrading to version v1.22.0\n" +
				"  * MachineDeployments md2, md3, md4 pending upgrade to version v1.22.0",
		},
		{
			name:       "MachineDeployments are upgraded and AfterWorkersUpgrade blocks (second step)",
			s:          afterClusterUpgradePending(blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}), "AfterWorkersUpgrade", "msg")),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: AfterWorkersUpgrade: msg",
		},
		{
			name:       "AfterClusterUpgrade blocks",
			s:          afterClusterUpgradePending(blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}), "AfterClusterUpgrade", "msg")),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: AfterClusterUpgrade: msg",
		},
		{
			name:       "AfterClusterUpgrade is still to be called",
			s:          afterClusterUpgradePending(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{})),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0",
		},
		{
			name:       "a hook blocks while nothing else says the Cluster upgrades",
			s:          blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}), "BeforeClusterUpgrade", ""),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: BeforeClusterUpgrade",
		},
		{
			name: "an upgrading MachineDeployment's version is not repeated in its pending versions",
			s: upgrade("v1.23.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0", "v1.23.0"},
				MachineDeploymentsUpgrading: []string{"md1"}, MachineDeploymentsPendingUpgrade: []string{"md2", "md3", "md4"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.23.0\n" +
				"  * MachineDeployment md1 upgrading to version v1.22.0 (v1.23.0 pending)\n" +
				"  * MachineDeployments md2, md3, md4 pending upgrade to version v1.22.0, v1.23.0",
		},
		{
			name: "a MachineDeployment is upgrading, deferred and pending at once: it is named as upgrading",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsUpgrading: []string{"md1"}, MachineDeploymentsDeferred: []string{"md1"}, MachineDeploymentsPendingUpgrade: []string{"md1"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md1 upgrading to version v1.22.0",
		},
		{
			name: "a deferred MachineDeployment beside a pending one",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsDeferred: []string{"md3"}, MachineDeploymentsPendingUpgrade: []string{"md3", "md4"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md4 pending upgrade to version v1.22.0\n" +
				"  * MachineDeployment md3 upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "deferred MachineDeployments alone hold the upgrade",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsDeferred: []string{"md2"}, MachineDeploymentsPendingUpgrade: []string{"md2"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "MachineDeploymentsUpgradeDeferred",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md2 upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "a blocking hook comes before a deferral",
			s: blocked(upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsDeferred: []string{"md2"}, MachineDeploymentsPendingUpgrade: []string{"md2"}}), "BeforeWorkersUpgrade", "msg"),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * Following hooks are blocking upgrade: BeforeWorkersUpgrade: msg\n" +
				"  * MachineDeployment md2 upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "deferred MachinePools alone hold the upgrade",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachinePoolsDeferred: []string{"mp1", "mp2"}, MachinePoolsPendingUpgrade: []string{"mp1", "mp2"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "MachinePoolsUpgradeDeferred",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachinePools mp1, mp2 upgrade to version v1.22.0 deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "deferred MachineDeployments and MachinePools: the MachineDeployments are named in the reason",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsDeferred: []string{"md1"}, MachineDeploymentsPendingUpgrade: []string{"md1"},
				MachinePoolsDeferred: []string{"mp1"}, MachinePoolsPendingUpgrade: []string{"mp1"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "MachineDeploymentsUpgradeDeferred",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md1 upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations\n" +
				"  * MachinePool mp1 upgrade to version v1.22.0 deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "a deferred MachinePool while a MachineDeployment upgrades",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsUpgrading: []string{"md1"}, MachinePoolsDeferred: []string{"mp1"}, MachinePoolsPendingUpgrade: []string{"mp1"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "MachinePoolsUpgradeDeferred",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachineDeployment md1 upgrading to version v1.22.0\n" +
				"  * MachinePool mp1 upgrade to version v1.22.0 deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
		},
		{
			name: "a MachineDeployment's creation waits while the control plane upgrades",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{ControlPlaneUpgrading: true, WorkersPlan: []string{"v1.22.0"},
				MachineDeploymentsPendingUpgrade: mds, MachineDeploymentsPendingCreate: []string{"md5"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * GenericControlPlane upgrading to version v1.22.0\n" +
				"  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0\n" +
				"  * MachineDeployment md5 creation deferred while control plane upgrade is in progress",
		},
		{
			name: "MachinePools upgrade, pending and waiting for their creation",
			s: upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{WorkersPlan: []string{"v1.22.0"},
				MachinePoolsUpgrading: []string{"mp1"}, MachinePoolsPendingUpgrade: []string{"mp2"}, MachinePoolsPendingCreate: []string{"mp3"}}),
			wantStatus: metav1.ConditionFalse, wantReason: "ClusterUpgrading",
			wantMessage: "Cluster is upgrading to v1.22.0\n" +
				"  * MachinePool mp1 upgrading to version v1.22.0\n" +
				"  * MachinePool mp2 pending upgrade to version v1.22.0\n" +
				"  * MachinePool mp3 creation deferred while control plane upgrade is in progress",
		},
		{
			name:       "the Cluster is not upgrading",
			s:          upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{}),
			wantStatus: metav1.ConditionTrue, wantReason: "ReconcileSucceeded",
		},
		{
			name: "the Cluster was created in this reconcile and nothing waits",
			s: func() scope {
				s := upgrade("v1.22.0", "v1.22.0", topology.UpgradeStatus{})
				s.creating = true
				return s
			}(),
			wantStatus: metav1.ConditionTrue, wantReason: "ReconcileSucceeded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := &clusterv1.Cluster{}
			setTopologyReconciled(cluster, &tt.s)

			c := conditions.GetV1Beta2(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.wantStatus))
			g.Expect(c.Reason).To(Equal(tt.wantReason))
			g.Expect(c.Message).To(Equal(tt.wantMessage))

			v1 := conditions.Get(cluster, TopologyReconciledCondition)
			g.Expect(v1).NotTo(BeNil())
			g.Expect(string(v1.Status)).To(Equal(string(tt.wantStatus)))
			if tt.wantStatus == metav1.ConditionTrue {
				return
			}
			wantV1Beta1Reason, wantSeverity := tt.wantReason, clusterv1.ConditionSeverityInfo
			if tt.wantV1Beta1Reason != "" {
				wantV1Beta1Reason, wantSeverity = tt.wantV1Beta1Reason, clusterv1.ConditionSeverityError
			}
			g.Expect(v1.Reason).To(Equal(wantV1Beta1Reason))
			g.Expect(v1.Severity).To(Equal(wantSeverity))
			g.Expect(v1.Message).To(Equal(tt.wantMessage))
		})
	}
}

// TestNameList: up to three workers are named, more are cut after the third in order.
func TestNameList(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"md-1"}, "MachineDeployment md-1"},
		{[]string{"md-2", "md-1"}, "MachineDeployments md-1, md-2"},
		{[]string{"md-1", "md-2", "md-3"}, "MachineDeployments md-1, md-2, md-3"},
		{[]string{"md-5", "md-4", "md-3", "md-2", "md-1"}, "MachineDeployments md-1, md-2, md-3, ... (2 more)"},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		g.Expect(nameList("MachineDeployment", "MachineDeployments", tt.names)).To(Equal(tt.want))
	}
}

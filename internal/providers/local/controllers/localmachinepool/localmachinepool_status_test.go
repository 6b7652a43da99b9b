package localmachinepool

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

func TestInstanceIndex(t *testing.T) {
	tests := []struct {
		id    string
		index int
		ok    bool
	}{
		{id: "local://ns/c/pool-0", index: 0, ok: true},
		{id: "local://ns/c/pool-12", index: 12, ok: true},
		{id: "local://ns/c/pool-a-1", ok: false},
		{id: "local://ns/c/other-1", ok: false},
		{id: "local://ns/c/pool-", ok: false},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		i, ok := instanceIndex("pool", tt.id)
		g.Expect(ok).To(Equal(tt.ok), tt.id)
		if ok {
			g.Expect(i).To(Equal(tt.index), tt.id)
		}
	}
}

func TestSetStatus(t *testing.T) {
	tests := []struct {
		name      string
		facts     facts
		ready     bool
		wasReady  bool
		condition corev1.ConditionStatus
		reason    string
		message   string
	}{
		{name: "all registered", facts: facts{counted: true, registered: 3, desired: 3}, ready: true, condition: corev1.ConditionTrue},
		{name: "some registered", facts: facts{counted: true, registered: 1, desired: 3, waiting: infrav1.WaitingForControlPlaneReason},
			condition: corev1.ConditionFalse, reason: infrav1.WaitingForControlPlaneReason, message: "1 of 3 Nodes registered"},
		{name: "once ready, stays ready while scaling", wasReady: true, ready: true,
			facts:     facts{counted: true, registered: 1, desired: 3, waiting: infrav1.WaitingForControlPlaneReason},
			condition: corev1.ConditionFalse, reason: infrav1.WaitingForControlPlaneReason},
		{name: "zero replicas", facts: facts{counted: true}, ready: true, condition: corev1.ConditionTrue},
		{name: "not looked at: a read error", facts: facts{}, ready: false},
		{name: "bootstrap data invalid", facts: facts{bootstrapInvalid: "invalid bootstrap data: no kubeadm command"},
			condition: corev1.ConditionFalse, reason: infrav1.BootstrapDataInvalidReason, message: "invalid bootstrap data: no kubeadm command"},
		{name: "waiting for the Cluster", facts: facts{waiting: infrav1.WaitingForClusterInfrastructureReason},
			condition: corev1.ConditionFalse, reason: infrav1.WaitingForClusterInfrastructureReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			pool := &infrav1.LocalMachinePool{}
			pool.Status.Ready = tt.wasReady
			setStatus(pool, tt.facts)
			g.Expect(pool.Status.Ready).To(Equal(tt.ready))
			c := conditions.Get(pool, infrav1.NodesRegisteredCondition)
			if tt.condition == "" {
				g.Expect(c).To(BeNil())
				return
			}
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.condition))
			g.Expect(c.Reason).To(Equal(tt.reason))
			if tt.message != "" {
				g.Expect(c.Message).To(Equal(tt.message))
			}
			g.Expect(conditions.GetV1Beta2(pool, string(clusterv1.ReadyCondition))).NotTo(BeNil())
		})
	}
}

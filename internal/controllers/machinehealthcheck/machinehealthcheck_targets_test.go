package machinehealthcheck

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestCheck(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := &clusterv1.Cluster{Status: clusterv1.ClusterStatus{InfrastructureReady: true, ControlPlaneReady: true}}
	notInitialized := &clusterv1.Cluster{Status: clusterv1.ClusterStatus{InfrastructureReady: true}}
	node := func(status corev1.ConditionStatus, since time.Duration) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, LastTransitionTime: ago(since)},
		}}}
	}
	machine := func(mut func(*clusterv1.Machine)) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", CreationTimestamp: ago(time.Hour)}}
		if mut != nil {
			mut(m)
		}
		return m
	}
	conds := []clusterv1.UnhealthyCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 5 * time.Minute}},
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: 5 * time.Minute}},
	}
	tests := []struct {
		name          string
		target        *target
		cluster       *clusterv1.Cluster
		startup       time.Duration
		wantUnhealthy bool
		wantReason    string
		wantNext      time.Duration
	}{
		{name: "healthy Node", target: &target{machine: machine(nil), node: node(corev1.ConditionTrue, time.Hour)}, cluster: ready},
		{name: "Ready False past its timeout", target: &target{machine: machine(nil), node: node(corev1.ConditionFalse, 6*time.Minute)}, cluster: ready,
			wantUnhealthy: true, wantReason: clusterv1.UnhealthyNodeConditionReason},
		{name: "Ready Unknown within its timeout", target: &target{machine: machine(nil), node: node(corev1.ConditionUnknown, 2*time.Minute)}, cluster: ready,
			wantNext: 3*time.Minute + time.Second},
		{name: "remediate-machine annotation", target: &target{machine: machine(func(m *clusterv1.Machine) {
			m.Annotations = map[string]string{clusterv1.RemediateMachineAnnotation: ""}
		}), node: node(corev1.ConditionTrue, time.Hour)}, cluster: ready, wantUnhealthy: true, wantReason: clusterv1.HasRemediateMachineAnnotationReason},
		{name: "failure reported by the provider", target: &target{machine: machine(func(m *clusterv1.Machine) {
			m.Status.FailureReason = ptr.To(clusterv1.MachineStatusError("CreateError"))
		})}, cluster: notInitialized, wantUnhealthy: true, wantReason: clusterv1.MachineHasFailureReason},
		{name: "Node deleted", target: &target{machine: machine(func(m *clusterv1.Machine) {
			m.Status.NodeRef = &corev1.ObjectReference{Name: "gone"}
		}), nodeMissing: true}, cluster: ready, wantUnhealthy: true, wantReason: clusterv1.NodeNotFoundReason},
		{name: "no Node past nodeStartupTimeout", target: &target{machine: machine(nil)}, cluster: ready, startup: 10 * time.Minute,
			wantUnhealthy: true, wantReason: clusterv1.NodeStartupTimeoutReason},
		{name: "no Node, nodeStartupTimeout disabled", target: &target{machine: machine(nil)}, cluster: ready, startup: 0},
		{name: "no Node within nodeStartupTimeout", target: &target{machine: machine(func(m *clusterv1.Machine) {
			m.CreationTimestamp = ago(4 * time.Minute)
		})}, cluster: ready, startup: 10 * time.Minute, wantNext: 6*time.Minute + time.Second},
		{name: "worker not judged before the control plane is initialized", target: &target{machine: machine(nil)}, cluster: notInitialized, startup: 10 * time.Minute},
		{name: "control plane Machine judged before the control plane is initialized", target: &target{machine: machine(func(m *clusterv1.Machine) {
			m.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: ""}
		})}, cluster: notInitialized, startup: 10 * time.Minute, wantUnhealthy: true, wantReason: clusterv1.NodeStartupTimeoutReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v := check(tt.target, tt.cluster, &clusterv1.MachineHealthCheckSpec{UnhealthyConditions: conds}, tt.startup, now)
			g.Expect(v.unhealthy).To(Equal(tt.wantUnhealthy))
			g.Expect(v.v1beta1.Reason).To(Equal(tt.wantReason))
			g.Expect(v.nextCheck).To(Equal(tt.wantNext))
			if tt.wantUnhealthy {
				g.Expect(v.v1beta2.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(v.v1beta2.Message).To(HavePrefix("Health check failed: "))
			}
		})
	}
}

// TestCheckMachineConditions: upstream v1.14's unhealthyMachineConditions, the Machine's own (v1beta2)
// conditions held for their timeout.
func TestCheckMachineConditions(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := &clusterv1.Cluster{Status: clusterv1.ClusterStatus{InfrastructureReady: true, ControlPlaneReady: true}}
	notInitialized := &clusterv1.Cluster{Status: clusterv1.ClusterStatus{InfrastructureReady: true}}
	healthyNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: ago(time.Hour)}}}}
	machine := func(conditions ...metav1.Condition) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", CreationTimestamp: ago(time.Hour)},
			Status: clusterv1.MachineStatus{V1Beta2: &clusterv1.MachineV1Beta2Status{Conditions: conditions}}}
	}
	condition := func(t string, status metav1.ConditionStatus, since time.Duration) metav1.Condition {
		return metav1.Condition{Type: t, Status: status, Reason: "Stuck", LastTransitionTime: ago(since)}
	}
	spec := &clusterv1.MachineHealthCheckSpec{UnhealthyMachineConditions: []clusterv1.UnhealthyMachineCondition{
		{Type: "NodeHealthy", Status: metav1.ConditionFalse, Timeout: metav1.Duration{Duration: 5 * time.Minute}},
		{Type: "UpToDate", Status: metav1.ConditionUnknown, Timeout: metav1.Duration{Duration: 10 * time.Minute}},
	}}

	t.Run("a condition held past its timeout", func(t *testing.T) {
		g := NewWithT(t)
		v := check(&target{machine: machine(condition("NodeHealthy", metav1.ConditionFalse, 6*time.Minute)), node: healthyNode}, ready, spec, 0, now)
		g.Expect(v.unhealthy).To(BeTrue())
		g.Expect(v.v1beta1.Reason).To(Equal("UnhealthyMachine"))
		g.Expect(v.v1beta1.Message).To(Equal("Condition NodeHealthy on Machine is reporting status False with reason Stuck for more than 5m0s"))
		g.Expect(v.v1beta2.Reason).To(Equal("UnhealthyMachine"))
		g.Expect(v.v1beta2.Message).To(Equal("Health check failed:\n  * Condition NodeHealthy on Machine is reporting status False with reason Stuck for more than 5m0s"))
	})
	t.Run("two conditions held past their timeouts, without a Node", func(t *testing.T) {
		g := NewWithT(t)
		v := check(&target{machine: machine(condition("NodeHealthy", metav1.ConditionFalse, 6*time.Minute),
			condition("UpToDate", metav1.ConditionUnknown, time.Hour))}, ready, spec, 0, now)
		g.Expect(v.unhealthy).To(BeTrue())
		g.Expect(v.v1beta2.Message).To(Equal("Health check failed:\n" +
			"  * Condition NodeHealthy on Machine is reporting status False with reason Stuck for more than 5m0s\n" +
			"  * Condition UpToDate on Machine is reporting status Unknown with reason Stuck for more than 10m0s"))
	})
	t.Run("a condition within its timeout is checked again when it would expire", func(t *testing.T) {
		g := NewWithT(t)
		v := check(&target{machine: machine(condition("NodeHealthy", metav1.ConditionFalse, 2*time.Minute)), node: healthyNode}, ready, spec, 0, now)
		g.Expect(v.unhealthy).To(BeFalse())
		g.Expect(v.nextCheck).To(Equal(3*time.Minute + time.Second))
	})
	t.Run("the sooner of a Machine's and a Node's next checks", func(t *testing.T) {
		g := NewWithT(t)
		m := machine(condition("UpToDate", metav1.ConditionUnknown, 2*time.Minute))
		m.CreationTimestamp = ago(4 * time.Minute)
		// No Node yet: nodeStartupTimeout (5m from the Machine's creation, 4m ago) is due in 1m01s, the
		// condition's timeout (10m, held for 2m) in 8m01s.
		v := check(&target{machine: m}, ready, spec, 5*time.Minute, now)
		g.Expect(v.unhealthy).To(BeFalse())
		g.Expect(v.nextCheck).To(Equal(time.Minute + time.Second))
		m.CreationTimestamp = ago(time.Minute)
		sooner := &clusterv1.MachineHealthCheckSpec{UnhealthyMachineConditions: []clusterv1.UnhealthyMachineCondition{
			{Type: "UpToDate", Status: metav1.ConditionUnknown, Timeout: metav1.Duration{Duration: 3 * time.Minute}}}}
		v = check(&target{machine: m}, ready, sooner, 5*time.Minute, now)
		g.Expect(v.nextCheck).To(Equal(time.Minute+time.Second), "the condition's (3m, held for 2m) is sooner than the Node's (4m)")
	})
	t.Run("another status is healthy", func(t *testing.T) {
		g := NewWithT(t)
		v := check(&target{machine: machine(condition("NodeHealthy", metav1.ConditionTrue, time.Hour)), node: healthyNode}, ready, spec, 0, now)
		g.Expect(v).To(Equal(verdict{}))
	})
	t.Run("a worker is not judged before the control plane is initialized", func(t *testing.T) {
		g := NewWithT(t)
		v := check(&target{machine: machine(condition("NodeHealthy", metav1.ConditionFalse, time.Hour)), node: healthyNode}, notInitialized, spec, 0, now)
		g.Expect(v).To(Equal(verdict{}))
	})
}

func TestAllowRemediation(t *testing.T) {
	tests := []struct {
		name             string
		maxUnhealthy     *intstr.IntOrString
		unhealthyRange   *string
		expected, health int
		wantAllowed      bool
		wantRemaining    int32
		wantMessage      string
	}{
		{name: "default 100%", expected: 3, health: 0, wantAllowed: true, wantRemaining: 0},
		{name: "40% of 3 is 1: one unhealthy is allowed", maxUnhealthy: ptr.To(intstr.FromString("40%")), expected: 3, health: 2, wantAllowed: true},
		{name: "40% of 3 is 1: two unhealthy short-circuit", maxUnhealthy: ptr.To(intstr.FromString("40%")), expected: 3, health: 1,
			wantMessage: "Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 40%)"},
		{name: "absolute maxUnhealthy", maxUnhealthy: ptr.To(intstr.FromInt32(2)), expected: 5, health: 4, wantAllowed: true, wantRemaining: 1},
		{name: "in range", unhealthyRange: ptr.To("[1-3]"), expected: 5, health: 3, wantAllowed: true, wantRemaining: 1},
		{name: "below range", unhealthyRange: ptr.To("[1-3]"), expected: 5, health: 5,
			wantMessage: "Remediation is not allowed, the number of not started or unhealthy machines does not fall within the range (total: 5, unhealthy: 0, unhealthyRange: [1-3])"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mhc := &clusterv1.MachineHealthCheck{Spec: clusterv1.MachineHealthCheckSpec{MaxUnhealthy: tt.maxUnhealthy, UnhealthyRange: tt.unhealthyRange}}
			r, err := allowRemediation(mhc, tt.expected, tt.health)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.allowed).To(Equal(tt.wantAllowed))
			g.Expect(r.remaining).To(Equal(tt.wantRemaining))
			g.Expect(r.message).To(Equal(tt.wantMessage))
		})
	}
}

func TestValidate(t *testing.T) {
	g := NewWithT(t)
	bad := &clusterv1.MachineHealthCheck{Spec: clusterv1.MachineHealthCheckSpec{
		UnhealthyRange:     ptr.To("[3-1]"),
		NodeStartupTimeout: &metav1.Duration{Duration: 10 * time.Second},
	}}
	err := validate(bad)
	g.Expect(err).To(MatchError(ContainSubstring("max value 1 cannot be less than min value 3")))
	g.Expect(err).To(MatchError(ContainSubstring("spec.nodeStartupTimeout must be at least 30s")))
	g.Expect(validate(&clusterv1.MachineHealthCheck{Spec: clusterv1.MachineHealthCheckSpec{NodeStartupTimeout: &metav1.Duration{}}})).To(Succeed())
}

package machineset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// testMachine is a healthy Machine created age ago.
func testMachine(name string, age time.Duration, opts ...func(*clusterv1.Machine)) *clusterv1.Machine {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(base.Add(-age))},
		Status:     clusterv1.MachineStatus{NodeRef: &corev1.ObjectReference{Kind: "Node", Name: name}},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func annotatedForDeletion(m *clusterv1.Machine) {
	m.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}
}

func withoutNode(m *clusterv1.Machine) { m.Status.NodeRef = nil }

func deleting(m *clusterv1.Machine) {
	m.DeletionTimestamp = ptr.To(metav1.Now())
}

func TestMachinesToDelete(t *testing.T) {
	machines := func(ms ...*clusterv1.Machine) []*clusterv1.Machine { return ms }
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		count    int
		policy   clusterv1.MachineSetDeletePolicy
		want     []string
	}{
		{
			name:     "oldest first",
			machines: machines(testMachine("b", time.Hour), testMachine("a", time.Minute), testMachine("c", 2*time.Hour)),
			count:    2, policy: clusterv1.OldestMachineSetDeletePolicy,
			want: []string{"c", "b"},
		},
		{
			name:     "newest first",
			machines: machines(testMachine("b", time.Hour), testMachine("a", time.Minute), testMachine("c", 2*time.Hour)),
			count:    2, policy: clusterv1.NewestMachineSetDeletePolicy,
			want: []string{"a", "b"},
		},
		{
			name:     "random (the default) is stable",
			machines: machines(testMachine("b", time.Hour), testMachine("a", time.Minute), testMachine("c", 2*time.Hour)),
			count:    2, policy: "",
			want: []string{"a", "b"},
		},
		{
			name: "the delete-machine annotation goes first, whatever the policy",
			machines: machines(testMachine("old", 2*time.Hour), testMachine("marked", time.Minute, annotatedForDeletion),
				testMachine("mid", time.Hour)),
			count: 1, policy: clusterv1.OldestMachineSetDeletePolicy,
			want: []string{"marked"},
		},
		{
			name: "unhealthy Machines go before healthy ones",
			machines: machines(testMachine("old", 2*time.Hour), testMachine("no-node", time.Minute, withoutNode),
				testMachine("failed", time.Minute, func(m *clusterv1.Machine) { m.Status.FailureMessage = ptr.To("boom") }),
				testMachine("not-ready", time.Minute, func(m *clusterv1.Machine) {
					m.Status.Conditions = clusterv1.Conditions{{Type: "HealthCheckSucceeded", Status: corev1.ConditionFalse}}
				}),
				testMachine("node-unhealthy", time.Minute, func(m *clusterv1.Machine) {
					m.Status.Conditions = clusterv1.Conditions{{Type: "NodeHealthy", Status: corev1.ConditionFalse}}
				})),
			count: 4, policy: clusterv1.OldestMachineSetDeletePolicy,
			want: []string{"failed", "no-node", "node-unhealthy", "not-ready"},
		},
		{
			name: "Unknown NodeHealthy or HealthCheckSucceeded counts as healthy, as upstream",
			machines: machines(testMachine("old", 2*time.Hour),
				testMachine("node-unknown", time.Minute, func(m *clusterv1.Machine) {
					m.Status.Conditions = clusterv1.Conditions{{Type: "NodeHealthy", Status: corev1.ConditionUnknown}}
				}),
				testMachine("check-unknown", time.Minute, func(m *clusterv1.Machine) {
					m.Status.Conditions = clusterv1.Conditions{{Type: "HealthCheckSucceeded", Status: corev1.ConditionUnknown}}
				}),
				testMachine("v1beta2-not-ready", time.Minute, func(m *clusterv1.Machine) {
					m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}}
				})),
			count: 1, policy: clusterv1.OldestMachineSetDeletePolicy,
			want: []string{"old"},
		},
		{
			name: "annotated before unhealthy, deleting before all",
			machines: machines(testMachine("no-node", time.Hour, withoutNode), testMachine("marked", time.Minute, annotatedForDeletion),
				testMachine("going", time.Minute, deleting), testMachine("fine", 3*time.Hour)),
			count: 3, policy: clusterv1.OldestMachineSetDeletePolicy,
			want: []string{"going", "marked", "no-node"},
		},
		{
			name:     "more than there are",
			machines: machines(testMachine("a", time.Minute)),
			count:    3,
			want:     []string{"a"},
		},
		{
			name:     "none",
			machines: machines(testMachine("a", time.Minute)),
			count:    0,
			want:     nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var got []string
			for _, m := range machinesToDelete(tt.machines, tt.count, tt.policy) {
				got = append(got, m.Name)
			}
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

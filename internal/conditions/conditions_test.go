package conditions

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// fakeClock makes now return a time the test advances, until the test ends.
func fakeClock(t *testing.T) func(time.Duration) {
	t.Helper()
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	saved := now
	now = func() metav1.Time { return metav1.NewTime(at) }
	t.Cleanup(func() { now = saved })
	return func(d time.Duration) { at = at.Add(d) }
}

func TestSetKeepsTransitionTimeAndOrder(t *testing.T) {
	g := NewWithT(t)
	advance := fakeClock(t)
	c := &clusterv1.Cluster{}
	MarkFalse(c, clusterv1.InfrastructureReadyCondition, "WaitingForInfrastructure", clusterv1.ConditionSeverityInfo, "Waiting for %s", "FooCluster")
	MarkTrue(c, "ControlPlaneInitialized")
	first := Get(c, clusterv1.InfrastructureReadyCondition).LastTransitionTime
	g.Expect(Get(c, clusterv1.InfrastructureReadyCondition).Message).To(Equal("Waiting for FooCluster"))

	advance(time.Minute)
	MarkFalse(c, clusterv1.InfrastructureReadyCondition, "StillWaiting", clusterv1.ConditionSeverityInfo, "Still waiting")
	g.Expect(Get(c, clusterv1.InfrastructureReadyCondition).LastTransitionTime).To(Equal(first), "same status keeps the time")
	g.Expect(Get(c, clusterv1.InfrastructureReadyCondition).Reason).To(Equal("StillWaiting"))

	MarkTrue(c, clusterv1.InfrastructureReadyCondition)
	g.Expect(Get(c, clusterv1.InfrastructureReadyCondition).LastTransitionTime.After(first.Time)).To(BeTrue())

	SetSummary(c)
	var types []clusterv1.ConditionType
	for _, cond := range c.Status.Conditions {
		types = append(types, cond.Type)
	}
	g.Expect(types).To(Equal([]clusterv1.ConditionType{"Ready", "ControlPlaneInitialized", "InfrastructureReady"}))
	g.Expect(IsTrue(c, clusterv1.ReadyCondition)).To(BeTrue())
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name       string
		conditions []clusterv1.Condition
		types      []clusterv1.ConditionType
		want       clusterv1.Condition
	}{
		{
			name: "all true",
			conditions: []clusterv1.Condition{
				{Type: "A", Status: corev1.ConditionTrue}, {Type: "B", Status: corev1.ConditionTrue},
			},
			want: clusterv1.Condition{Type: "Ready", Status: corev1.ConditionTrue},
		},
		{
			name: "most severe false wins",
			conditions: []clusterv1.Condition{
				{Type: "A", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityInfo, Reason: "Provisioning", Message: "a"},
				{Type: "B", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityError, Reason: "Failed", Message: "b"},
			},
			want: clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityError, Reason: "Failed", Message: "b"},
		},
		{
			name: "first of equally severe in the given order",
			conditions: []clusterv1.Condition{
				{Type: "B", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityInfo, Reason: "WaitB"},
				{Type: "A", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityInfo, Reason: "WaitA"},
			},
			types: []clusterv1.ConditionType{"A", "B"},
			want:  clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityInfo, Reason: "WaitA"},
		},
		{
			name:       "unknown when none false",
			conditions: []clusterv1.Condition{{Type: "A", Status: corev1.ConditionUnknown, Reason: "Probing"}, {Type: "B", Status: corev1.ConditionTrue}},
			want:       clusterv1.Condition{Type: "Ready", Status: corev1.ConditionUnknown, Reason: "Probing"},
		},
		{
			name:       "only the given types count",
			conditions: []clusterv1.Condition{{Type: "A", Status: corev1.ConditionTrue}, {Type: "B", Status: corev1.ConditionFalse}},
			types:      []clusterv1.ConditionType{"A"},
			want:       clusterv1.Condition{Type: "Ready", Status: corev1.ConditionTrue},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{Status: clusterv1.MachineStatus{Conditions: tt.conditions}}
			SetSummary(m, tt.types...)
			got := *Get(m, clusterv1.ReadyCondition)
			got.LastTransitionTime = metav1.Time{}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// With none of the summarised conditions set, there is nothing to summarise: Ready is not set (a Cluster
// whose topology has not yet given it an InfraCluster or a control plane), and one set before stays.
func TestSummaryOfNothing(t *testing.T) {
	g := NewWithT(t)
	c := &clusterv1.Cluster{}
	MarkFalse(c, clusterv1.ConditionType(clusterv1.ClusterTopologyReconciledV1Beta2Condition), "ClusterClassOutdated", clusterv1.ConditionSeverityInfo, "")
	SetSummary(c, clusterv1.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition)
	g.Expect(Get(c, clusterv1.ReadyCondition)).To(BeNil())

	MarkFalse(c, clusterv1.ReadyCondition, "Deleted", clusterv1.ConditionSeverityInfo, "gone")
	SetSummary(c, clusterv1.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition)
	g.Expect(Get(c, clusterv1.ReadyCondition).Reason).To(Equal("Deleted"))

	MarkTrue(c, clusterv1.InfrastructureReadyCondition)
	SetSummary(c, clusterv1.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition)
	g.Expect(IsTrue(c, clusterv1.ReadyCondition)).To(BeTrue())
}

func TestV1Beta2(t *testing.T) {
	g := NewWithT(t)
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	SetV1Beta2(m, metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"})
	c := GetV1Beta2(m, "Paused")
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.ObservedGeneration).To(BeEquivalentTo(4))
	g.Expect(c.LastTransitionTime.IsZero()).To(BeFalse())
	g.Expect(IsV1Beta2True(m, "Paused")).To(BeFalse())
}

package reconciler

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestPausedCondition(t *testing.T) {
	annotated := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}
	pausedCluster := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: true}}
	tests := []struct {
		name    string
		cluster *clusterv1.Cluster
		obj     *clusterv1.Machine
		paused  bool
		want    metav1.Condition
	}{
		{name: "not paused", obj: annotated, cluster: pausedCluster, paused: false,
			want: metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"}},
		{name: "the Cluster and the annotation", obj: annotated, cluster: pausedCluster, paused: true,
			want: metav1.Condition{Type: "Paused", Status: metav1.ConditionTrue, Reason: "Paused",
				Message: "Cluster spec.paused is set to true, Machine has the cluster.x-k8s.io/paused annotation"}},
		{name: "the annotation alone, no Cluster", obj: annotated, paused: true,
			want: metav1.Condition{Type: "Paused", Status: metav1.ConditionTrue, Reason: "Paused",
				Message: "Machine has the cluster.x-k8s.io/paused annotation"}},
		{name: "the Cluster alone", obj: &clusterv1.Machine{}, cluster: pausedCluster, paused: true,
			want: metav1.Condition{Type: "Paused", Status: metav1.ConditionTrue, Reason: "Paused",
				Message: "Cluster spec.paused is set to true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(PausedCondition(tt.cluster, tt.obj, "Machine", tt.paused)).To(Equal(tt.want))
		})
	}
}

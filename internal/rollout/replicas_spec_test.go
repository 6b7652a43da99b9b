package rollout_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// TestDefaultSpecReplicas: an empty spec.replicas gets upstream's webhook default (the current number of
// Machines once reconciled, within the autoscaler's range); one that is set is kept.
func TestDefaultSpecReplicas(t *testing.T) {
	autoscaled := map[string]string{
		clusterv1.AutoscalerMinSizeAnnotation: "2",
		clusterv1.AutoscalerMaxSizeAnnotation: "5",
	}
	tests := []struct {
		name               string
		replicas           *int32
		annotations        map[string]string
		observedGeneration int64
		statusReplicas     int32
		want               int32
	}{
		{name: "set", replicas: ptr.To[int32](3), want: 3},
		{name: "new, without annotations", want: 1},
		{name: "new, autoscaled", annotations: autoscaled, want: 2},
		{name: "reconciled before, autoscaled", annotations: autoscaled, observedGeneration: 1, statusReplicas: 4, want: 4},
		{name: "not reconciled yet, autoscaled", annotations: autoscaled, statusReplicas: 4, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			replicas := tt.replicas
			rollout.DefaultSpecReplicas(context.Background(), &replicas, tt.annotations, tt.observedGeneration, tt.statusReplicas)
			g.Expect(replicas).To(HaveValue(Equal(tt.want)))
		})
	}
}

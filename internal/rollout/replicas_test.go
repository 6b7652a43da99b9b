package rollout

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestDefaultReplicas(t *testing.T) {
	autoscaled := map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "2", clusterv1.AutoscalerMaxSizeAnnotation: "5"}
	tests := []struct {
		name        string
		annotations map[string]string
		current     *int32
		want        int32
		wantErr     bool
	}{
		{name: "no annotations", want: 1},
		{name: "only one annotation", annotations: map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "3"}, want: 1},
		{name: "new object: the minimum size", annotations: autoscaled, want: 2},
		{name: "handed over below the range", annotations: autoscaled, current: ptr.To[int32](1), want: 2},
		{name: "handed over within the range", annotations: autoscaled, current: ptr.To[int32](4), want: 4},
		{name: "handed over above the range", annotations: autoscaled, current: ptr.To[int32](9), want: 5},
		{name: "not a number", annotations: map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "two", clusterv1.AutoscalerMaxSizeAnnotation: "5"},
			want: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := DefaultReplicas(tt.annotations, tt.current)
			g.Expect(err != nil).To(Equal(tt.wantErr))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

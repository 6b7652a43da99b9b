package contract

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFromLabels(t *testing.T) {
	gk := schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "FooCluster"}
	tests := []struct {
		name    string
		labels  map[string]string
		want    Info
		wantErr string
	}{
		{
			name:   "v1beta1 contract with one version",
			labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha1"},
			want:   Info{Contract: V1Beta1, APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1"},
		},
		{
			name:   "newest of several versions",
			labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha3_v1beta1_v1alpha4"},
			want:   Info{Contract: V1Beta1, APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1"},
		},
		{
			name:   "v1beta2 contract only",
			labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2"},
			want:   Info{Contract: V1Beta2, APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2"},
		},
		{
			name:   "both contracts: the core's own is preferred",
			labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"},
			want:   Info{Contract: V1Beta1, APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1"},
		},
		{
			name:    "no label",
			labels:  map[string]string{"app": "x"},
			wantErr: "has no contract label",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := FromLabels(gk, tt.labels)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

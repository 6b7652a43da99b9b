package backend

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestClusterOf(t *testing.T) {
	tests := []struct {
		name string
		ref  *corev1.ObjectReference
		ok   bool
	}{
		{name: "LocalCluster", ref: &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalCluster", Name: "lc"}, ok: true},
		{name: "other kind", ref: &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "DockerCluster", Name: "lc"}},
		{name: "other group", ref: &corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "LocalCluster", Name: "lc"}},
		{name: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			key, ok := ClusterOf(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: clusterv1.ClusterSpec{InfrastructureRef: tt.ref}})
			g.Expect(ok).To(Equal(tt.ok))
			if ok {
				g.Expect(key.String()).To(Equal("ns/lc"))
			}
		})
	}
}

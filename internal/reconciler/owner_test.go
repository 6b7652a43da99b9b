package reconciler_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

func TestRefersTo(t *testing.T) {
	group := clusterv1.GroupVersion.Group
	tests := []struct {
		name string
		ref  metav1.OwnerReference
		want bool
	}{
		{name: "current version", ref: metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"}, want: true},
		{name: "older version of the group", ref: metav1.OwnerReference{APIVersion: group + "/v1alpha4", Kind: "Cluster"}, want: true},
		{name: "other kind", ref: metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"}},
		{name: "same kind in another group", ref: metav1.OwnerReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "Cluster"}},
		{name: "core group", ref: metav1.OwnerReference{APIVersion: "v1", Kind: "Cluster"}},
		{name: "unparsable apiVersion", ref: metav1.OwnerReference{APIVersion: "a/b/c", Kind: "Cluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(reconciler.RefersTo(tt.ref, group, "Cluster")).To(Equal(tt.want))
		})
	}
}

package reconciler

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestIsDeletedForMove(t *testing.T) {
	now := metav1.Now()
	moved := map[string]string{clusterctlv1.DeleteForMoveAnnotation: ""}
	tests := []struct {
		name string
		obj  metav1.ObjectMeta
		want bool
	}{
		{name: "not deleted", obj: metav1.ObjectMeta{}, want: false},
		{name: "annotated but not deleted (yet)", obj: metav1.ObjectMeta{Annotations: moved}, want: false},
		{name: "deleted by someone else", obj: metav1.ObjectMeta{DeletionTimestamp: &now}, want: false},
		{name: "deleted by clusterctl move", obj: metav1.ObjectMeta{DeletionTimestamp: &now, Annotations: moved}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(IsDeletedForMove(&clusterv1.Cluster{ObjectMeta: tt.obj})).To(Equal(tt.want))
		})
	}
}

package managedby

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
)

func TestIsExternal(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		want        bool
	}{
		{name: "neither", want: false},
		{name: "annotation", annotations: map[string]string{clusterv1.ManagedByAnnotation: "kit"}, want: true},
		{name: "empty annotation", annotations: map[string]string{clusterv1.ManagedByAnnotation: ""}, want: true},
		{name: "label", labels: map[string]string{clusterv1.ManagedByAnnotation: "kit"}, want: true},
		{name: "other keys", annotations: map[string]string{"a": "b"}, labels: map[string]string{"c": "d"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			lc := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations, Labels: tt.labels}}
			g.Expect(IsExternal(lc)).To(Equal(tt.want))
			g.Expect(NotExternal().Generic(event.GenericEvent{Object: lc})).To(Equal(!tt.want))
		})
	}
}

package reconciler_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// TestNotOwnStatus: an object is not reconciled again for the status it wrote itself, but for
// any other change (and resyncs).
func TestNotOwnStatus(t *testing.T) {
	old := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", ResourceVersion: "1", Generation: 1}}
	cases := []struct {
		name   string
		change func(*clusterv1.Machine)
		want   bool
	}{
		{"its status alone", func(k *clusterv1.Machine) { k.Status.Phase = "Running" }, false},
		{"a resync", func(k *clusterv1.Machine) { k.ResourceVersion = "1" }, true},
		{"its spec", func(k *clusterv1.Machine) { k.Generation = 2 }, true},
		{"a label", func(k *clusterv1.Machine) { k.Labels = map[string]string{"a": "b"} }, true},
		{"an annotation", func(k *clusterv1.Machine) { k.Annotations = map[string]string{"a": "b"} }, true},
		{"its owner", func(k *clusterv1.Machine) {
			k.OwnerReferences = []metav1.OwnerReference{{Kind: "Cluster", Name: "c"}}
		}, true},
		{"a finalizer", func(k *clusterv1.Machine) { k.Finalizers = []string{"f"} }, true},
		{"its deletion", func(k *clusterv1.Machine) { k.DeletionTimestamp = &metav1.Time{} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			updated := old.DeepCopy()
			updated.ResourceVersion = "2"
			c.change(updated)
			NewWithT(t).Expect(reconciler.NotOwnStatus().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated})).To(Equal(c.want))
		})
	}
}

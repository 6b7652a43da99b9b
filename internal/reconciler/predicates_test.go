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

// TestUpdateChanged: the updates of the watched type pass only when the function says they matter; the
// other events, and updates of other types, pass.
func TestUpdateChanged(t *testing.T) {
	g := NewWithT(t)
	p := reconciler.UpdateChanged(func(before, after *clusterv1.Machine) bool {
		return before.Status.Phase != after.Status.Phase
	})
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	running := m.DeepCopy()
	running.Status.Phase = "Running"
	relabelled := m.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}

	g.Expect(p.Update(event.UpdateEvent{ObjectOld: m, ObjectNew: running})).To(BeTrue())
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: m, ObjectNew: relabelled})).To(BeFalse())
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: &clusterv1.MachineSet{}, ObjectNew: &clusterv1.MachineSet{}})).To(BeTrue())
	g.Expect(p.Create(event.CreateEvent{Object: m})).To(BeTrue())
	g.Expect(p.Delete(event.DeleteEvent{Object: m})).To(BeTrue())
}

package kubeadmcontrolplane

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
)

// TestNotOwnStatus: a KubeadmControlPlane is not reconciled again for the status it wrote itself, but for
// any other change (and resyncs).
func TestNotOwnStatus(t *testing.T) {
	old := &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "kcp", ResourceVersion: "1", Generation: 1}}
	cases := []struct {
		name   string
		change func(*controlplanev1.KubeadmControlPlane)
		want   bool
	}{
		{"its status alone", func(k *controlplanev1.KubeadmControlPlane) { k.Status.Ready = true }, false},
		{"a resync", func(k *controlplanev1.KubeadmControlPlane) { k.ResourceVersion = "1" }, true},
		{"its spec", func(k *controlplanev1.KubeadmControlPlane) { k.Generation = 2 }, true},
		{"a label", func(k *controlplanev1.KubeadmControlPlane) { k.Labels = map[string]string{"a": "b"} }, true},
		{"an annotation", func(k *controlplanev1.KubeadmControlPlane) { k.Annotations = map[string]string{"a": "b"} }, true},
		{"its owner", func(k *controlplanev1.KubeadmControlPlane) {
			k.OwnerReferences = []metav1.OwnerReference{{Kind: "Cluster", Name: "c"}}
		}, true},
		{"a finalizer", func(k *controlplanev1.KubeadmControlPlane) { k.Finalizers = []string{"f"} }, true},
		{"its deletion", func(k *controlplanev1.KubeadmControlPlane) { k.DeletionTimestamp = &metav1.Time{} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			updated := old.DeepCopy()
			updated.ResourceVersion = "2"
			c.change(updated)
			NewWithT(t).Expect(notOwnStatus().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated})).To(Equal(c.want))
		})
	}
}

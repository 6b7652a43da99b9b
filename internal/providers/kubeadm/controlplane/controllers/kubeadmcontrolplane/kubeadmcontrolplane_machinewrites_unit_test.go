package kubeadmcontrolplane

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestMachineWrites: the control plane's Machines are read from the cache only once it shows the Machines
// the controller created and deleted; a Machine missing from a stale cache would be created twice, one
// still there after its deletion would make a scale down delete another.
func TestMachineWrites(t *testing.T) {
	kcp, other := client.ObjectKey{Namespace: "ns", Name: "cp"}, client.ObjectKey{Namespace: "ns", Name: "other"}
	machine := func(name string, deleting bool) clusterv1.Machine {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if deleting {
			m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return m
	}
	tests := []struct {
		name    string
		created []string
		deleted []string
		cached  []clusterv1.Machine
		after   time.Duration
		want    bool
	}{
		{name: "nothing written: the cache is read", cached: []clusterv1.Machine{machine("m1", false)}, want: true},
		{name: "a Machine created, not in the cache yet", created: []string{"m2"}, cached: []clusterv1.Machine{machine("m1", false)}},
		{name: "a Machine created, in the cache", created: []string{"m2"}, cached: []clusterv1.Machine{machine("m1", false), machine("m2", false)}, want: true},
		{name: "a Machine deleted, still in the cache without a deletion timestamp", deleted: []string{"m1"}, cached: []clusterv1.Machine{machine("m1", false), machine("m2", false)}},
		{name: "a Machine deleted, being deleted in the cache", deleted: []string{"m1"}, cached: []clusterv1.Machine{machine("m1", true)}, want: true},
		{name: "a Machine deleted, gone from the cache", deleted: []string{"m1"}, cached: []clusterv1.Machine{machine("m2", false)}, want: true},
		{name: "a Machine created that the cache never shows: forgotten after a while", created: []string{"m2"}, after: machineWritesTTL + time.Second, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := &machineWrites{}
			for _, n := range tt.created {
				w.created(kcp, n)
			}
			for _, n := range tt.deleted {
				w.deleted(kcp, n)
			}
			w.created(other, "x")
			now := time.Now().Add(tt.after)
			g.Expect(w.shownBy(kcp, tt.cached, now)).To(Equal(tt.want))
			if tt.want {
				g.Expect(w.shownBy(kcp, nil, now)).To(BeTrue(), "what the cache showed once is forgotten")
			}
			g.Expect(w.shownBy(other, nil, time.Now())).To(BeFalse(), "another control plane's writes are its own")
			w.forget(other)
			g.Expect(w.shownBy(other, nil, time.Now())).To(BeTrue())
		})
	}
}

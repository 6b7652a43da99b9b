package kubeadmcontrolplane

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

func TestEtcdReads(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := &workload.EtcdState{Endpoint: "etcd-n1"}
	const reuse = 15 * time.Second

	tests := []struct {
		name    string
		cluster types.NamespacedName
		nodes   []string
		at      time.Time
		maxAge  time.Duration
		forget  bool
		want    *workload.EtcdState
	}{
		{name: "the same Nodes a moment later", cluster: a, nodes: []string{"n1", "n2"}, at: t0.Add(time.Second), maxAge: reuse, want: state},
		{name: "the same Nodes in another order", cluster: a, nodes: []string{"n2", "n1"}, at: t0.Add(14 * time.Second), maxAge: reuse, want: state},
		{name: "too old", cluster: a, nodes: []string{"n1", "n2"}, at: t0.Add(reuse), maxAge: reuse},
		{name: "a Node more", cluster: a, nodes: []string{"n1", "n2", "n3"}, at: t0.Add(time.Second), maxAge: reuse},
		{name: "a Node less", cluster: a, nodes: []string{"n1"}, at: t0.Add(time.Second), maxAge: reuse},
		{name: "another cluster", cluster: b, nodes: []string{"n1", "n2"}, at: t0.Add(time.Second), maxAge: reuse},
		{name: "reuse disabled", cluster: a, nodes: []string{"n1", "n2"}, at: t0.Add(time.Second), maxAge: -1},
		{name: "etcd changed since", cluster: a, nodes: []string{"n1", "n2"}, at: t0.Add(time.Second), maxAge: reuse, forget: true},
		{name: "a clock gone back", cluster: a, nodes: []string{"n1", "n2"}, at: t0.Add(-time.Second), maxAge: reuse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var e etcdReads
			e.put(a, []string{"n1", "n2"}, state, t0, reuse)
			if tt.forget {
				e.forget(a)
			}
			g.Expect(e.get(tt.cluster, tt.nodes, tt.at, tt.maxAge)).To(BeIdenticalTo(tt.want))
		})
	}

	t.Run("old entries go when another cluster is read", func(t *testing.T) {
		g := NewWithT(t)
		var e etcdReads
		e.put(a, []string{"n1"}, state, t0, reuse)
		e.put(b, []string{"m1"}, state, t0.Add(reuse), reuse)
		g.Expect(e.reads).To(HaveLen(1))
		g.Expect(e.reads).To(HaveKey(b))
	})
}

func TestWorkerMachineGone(t *testing.T) {
	machine := func(labels map[string]string) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Labels: labels}}
	}
	worker := machine(map[string]string{clusterv1.ClusterNameLabel: "c"})
	cp := machine(map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineControlPlaneLabel: ""})
	p := workerMachineGone()
	g := NewWithT(t)
	g.Expect(p.Delete(event.DeleteEvent{Object: worker})).To(BeTrue(), "a worker gone")
	g.Expect(p.Delete(event.DeleteEvent{Object: cp})).To(BeFalse(), "a control plane Machine is owned: its events come anyway")
	g.Expect(p.Delete(event.DeleteEvent{Object: machine(nil)})).To(BeFalse(), "a Machine of no Cluster")
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: worker, ObjectNew: worker})).To(BeFalse())
	g.Expect(p.Create(event.CreateEvent{Object: worker})).To(BeFalse())
}

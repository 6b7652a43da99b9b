package machine

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// A MachineSet creates a Machine before its clones: the Machine's first status is not written while they
// are missing, for a short while, so that it does not say first that they do not exist.
func TestWaitingForClones(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ms := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms", UID: "u",
		Controller: ptr.To(true)}
	machine := func(change func(*clusterv1.Machine)) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{
			Name: "m", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Second)), OwnerReferences: []metav1.OwnerReference{ms},
		}}
		if change != nil {
			change(m)
		}
		return m
	}
	missing := providerFacts{notFound: true}
	tests := []struct {
		name      string
		m         *clusterv1.Machine
		bootstrap providerFacts
		infra     providerFacts
		want      bool
	}{
		{"a new Machine of a MachineSet whose InfraMachine is missing waits", machine(nil), providerFacts{}, missing, true},
		{"a new Machine of a MachineSet whose bootstrap config is missing waits", machine(nil), missing, providerFacts{}, true},
		{"nothing missing: its status is written", machine(nil), providerFacts{}, providerFacts{}, false},
		{"after the grace period the Machine says what is missing", machine(func(m *clusterv1.Machine) {
			m.CreationTimestamp = metav1.NewTime(now.Add(-cloneGracePeriod))
		}), missing, missing, false},
		{"a Machine whose status was written already says what is missing", machine(func(m *clusterv1.Machine) {
			m.Status.Phase = string(clusterv1.MachinePhasePending)
			m.Status.ObservedGeneration = 1
		}), missing, missing, false},
		{"a stand-alone Machine says what is missing", machine(func(m *clusterv1.Machine) {
			m.OwnerReferences = nil
		}), missing, missing, false},
		{"a Machine being deleted is not held", machine(func(m *clusterv1.Machine) {
			m.DeletionTimestamp = &metav1.Time{Time: now}
		}), missing, missing, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &scope{machine: tt.m, bootstrap: tt.bootstrap, infra: tt.infra}
			g.Expect((&Reconciler{}).waitingForClones(s, now)).To(Equal(tt.want))
		})
	}
}

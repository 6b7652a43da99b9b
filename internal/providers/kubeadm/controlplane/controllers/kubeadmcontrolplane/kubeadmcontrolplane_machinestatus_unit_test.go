package kubeadmcontrolplane

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// A Machine whose status patch conflicted gets again, over the fresh copy, exactly the conditions the
// reconcile changed: what others wrote in between stays.
func TestApplyConditionChanges(t *testing.T) {
	apiServer, scheduler := controlplanev1.MachineAPIServerPodHealthyCondition, controlplanev1.MachineSchedulerPodHealthyCondition
	ownerRemediated := clusterv1.ConditionType("OwnerRemediated")
	cases := []struct {
		name        string
		reconcile   func(m *clusterv1.Machine) // what the reconcile did to the copy it read
		others      func(m *clusterv1.Machine) // what others wrote since
		wantChanged bool
		check       func(g Gomega, fresh *clusterv1.Machine)
	}{
		{
			name: "health conditions added while the core wrote the Machine's Ready",
			reconcile: func(m *clusterv1.Machine) {
				conditions.MarkTrue(m, apiServer)
				conditions.SetV1Beta2(m, metav1.Condition{Type: string(apiServer), Status: metav1.ConditionTrue, Reason: "Running"})
			},
			others:      func(m *clusterv1.Machine) { conditions.MarkTrue(m, clusterv1.ReadyCondition) },
			wantChanged: true,
			check: func(g Gomega, fresh *clusterv1.Machine) {
				g.Expect(conditions.IsTrue(fresh, apiServer)).To(BeTrue())
				g.Expect(conditions.IsV1Beta2True(fresh, string(apiServer))).To(BeTrue())
				g.Expect(conditions.IsTrue(fresh, clusterv1.ReadyCondition)).To(BeTrue())
			},
		},
		{
			name:      "a condition the reconcile did not change keeps what another controller wrote",
			reconcile: func(m *clusterv1.Machine) { conditions.MarkTrue(m, scheduler) },
			others: func(m *clusterv1.Machine) {
				conditions.MarkFalse(m, ownerRemediated, "RemediationFailed", clusterv1.ConditionSeverityWarning, "written since")
			},
			wantChanged: true,
			check: func(g Gomega, fresh *clusterv1.Machine) {
				g.Expect(conditions.IsTrue(fresh, scheduler)).To(BeTrue())
				g.Expect(conditions.Get(fresh, ownerRemediated).Message).To(Equal("written since"))
			},
		},
		{
			name:        "a condition the reconcile removed is removed",
			reconcile:   func(m *clusterv1.Machine) { conditions.Delete(m, ownerRemediated) },
			others:      func(m *clusterv1.Machine) { conditions.MarkTrue(m, clusterv1.ReadyCondition) },
			wantChanged: true,
			check: func(g Gomega, fresh *clusterv1.Machine) {
				g.Expect(conditions.Get(fresh, ownerRemediated)).To(BeNil())
			},
		},
		{
			name:        "nothing to write when others wrote the same",
			reconcile:   func(m *clusterv1.Machine) { conditions.MarkTrue(m, apiServer) },
			others:      func(m *clusterv1.Machine) { conditions.MarkTrue(m, apiServer) },
			wantChanged: false,
			check:       func(Gomega, *clusterv1.Machine) {},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			read := &clusterv1.Machine{}
			conditions.MarkFalse(read, ownerRemediated, "WaitingForRemediation", clusterv1.ConditionSeverityWarning, "")
			conditions.Set(read, clusterv1.Condition{Type: clusterv1.ReadyCondition, Status: corev1.ConditionUnknown, Reason: "Waiting"})
			before := read.DeepCopy()
			after := read.DeepCopy()
			tc.reconcile(after)
			fresh := read.DeepCopy()
			tc.others(fresh)
			g.Expect(applyConditionChanges(before, after, fresh)).To(Equal(tc.wantChanged))
			tc.check(g, fresh)
		})
	}
}

// The health a reconcile read for a Machine without a Node is not written over a copy that has one since
// (the conflict's fresh copy): only a change of the Node reference counts.
func TestNodeChanged(t *testing.T) {
	g := NewWithT(t)
	withNode := func(name, uid string) *clusterv1.Machine {
		m := &clusterv1.Machine{}
		if name != "" {
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(uid)}
		}
		return m
	}
	g.Expect(nodeChanged(withNode("", ""), withNode("n1", "u1"))).To(BeTrue(), "the Machine got its Node")
	g.Expect(nodeChanged(withNode("n1", "u1"), withNode("", ""))).To(BeTrue(), "the Machine lost its Node")
	g.Expect(nodeChanged(withNode("n1", "u1"), withNode("n1", "u2"))).To(BeTrue(), "the Node was created again")
	g.Expect(nodeChanged(withNode("n1", "u1"), withNode("n1", "u1"))).To(BeFalse())
	g.Expect(nodeChanged(withNode("", ""), withNode("", ""))).To(BeFalse())
}

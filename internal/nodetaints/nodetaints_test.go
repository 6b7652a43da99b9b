package nodetaints

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestApply(t *testing.T) {
	always := func(key, value string) clusterv1.MachineTaint {
		return clusterv1.MachineTaint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}
	}
	onInit := func(key string) clusterv1.MachineTaint {
		return clusterv1.MachineTaint{Key: key, Effect: corev1.TaintEffectNoExecute, Propagation: clusterv1.MachineTaintPropagationOnInitialization}
	}
	taint := func(key, value string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Value: value, Effect: effect}
	}
	g := NewWithT(t)
	other := taint("someone/else", "", corev1.TaintEffectPreferNoSchedule)
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{other}}}

	// First sync: both kinds are put; the annotation records the Always one.
	g.Expect(Apply(node, []clusterv1.MachineTaint{always("dedicated", "gpu"), onInit("warming")})).To(BeTrue())
	g.Expect(node.Spec.Taints).To(ConsistOf(other, taint("dedicated", "gpu", corev1.TaintEffectNoSchedule), taint("warming", "", corev1.TaintEffectNoExecute)))
	g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.TaintsFromMachineAnnotation, "dedicated:NoSchedule"))
	g.Expect(Apply(node, []clusterv1.MachineTaint{always("dedicated", "gpu"), onInit("warming")})).To(BeFalse(), "nothing to do")

	// Someone removes both: the Always one comes back, the OnInitialization one does not.
	node.Spec.Taints = []corev1.Taint{other}
	g.Expect(Apply(node, []clusterv1.MachineTaint{always("dedicated", "gpu"), onInit("warming")})).To(BeTrue())
	g.Expect(node.Spec.Taints).To(ConsistOf(other, taint("dedicated", "gpu", corev1.TaintEffectNoSchedule)))

	// A new value is set; an Always taint that leaves the Machine leaves the Node; others' taints stay.
	g.Expect(Apply(node, []clusterv1.MachineTaint{always("dedicated", "cpu")})).To(BeTrue())
	g.Expect(node.Spec.Taints).To(ConsistOf(other, taint("dedicated", "cpu", corev1.TaintEffectNoSchedule)))
	g.Expect(Apply(node, nil)).To(BeTrue())
	g.Expect(node.Spec.Taints).To(ConsistOf(other))
	g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.TaintsFromMachineAnnotation, ""), "the Node stays initialized")

	// A taint the Machine did not put is never removed, even with the same key.
	node.Spec.Taints = append(node.Spec.Taints, taint("dedicated", "x", corev1.TaintEffectNoSchedule))
	g.Expect(Apply(node, nil)).To(BeFalse())
	g.Expect(node.Spec.Taints).To(HaveLen(2))

	// An Always taint turned OnInitialization stays on the Node, no longer recorded.
	node = &corev1.Node{}
	Apply(node, []clusterv1.MachineTaint{always("dedicated", "gpu")})
	g.Expect(Apply(node, []clusterv1.MachineTaint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationOnInitialization}})).To(BeTrue())
	g.Expect(node.Spec.Taints).To(ConsistOf(taint("dedicated", "gpu", corev1.TaintEffectNoSchedule)))
	g.Expect(node.Annotations).To(HaveKeyWithValue(clusterv1.TaintsFromMachineAnnotation, ""))
}

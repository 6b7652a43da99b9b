package machinepool

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestMachinePoolMachinesCarryThePoolsTaints: a MachinePool Machine has the pool template's taints, and
// gets them when they change, so that the Machine controller and the MachinePool put the same taints on the
// Node (with different ones, each would remove the other's).
func TestMachinePoolMachinesCarryThePoolsTaints(t *testing.T) {
	g := NewWithT(t)
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool", UID: "u"}}
	mp.Spec.ClusterName = "c"
	mp.Spec.Template.Spec.Taints = []clusterv1.MachineTaint{{Key: "pool", Value: "a", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}
	im := &unstructured.Unstructured{}
	im.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	im.SetKind("LocalMachine")
	im.SetNamespace("ns")
	im.SetName("pool-0")
	desired := desiredMachine(mp, im)
	g.Expect(desired.Spec.Taints).To(Equal(mp.Spec.Template.Spec.Taints))
	_, changed := updatedMachine(desired, desiredMachine(mp, im))
	g.Expect(changed).To(BeFalse())

	mp.Spec.Template.Spec.Taints[0].Value = "b"
	updated, changed := updatedMachine(desired, desiredMachine(mp, im))
	g.Expect(changed).To(BeTrue())
	g.Expect(updated.Spec.Taints[0].Value).To(Equal("b"))
}

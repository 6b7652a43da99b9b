package patch

import (
	"reflect"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestStatusOnlyChangesConvertTheStatusAsTheWholeObjectDoes: when only the status changed, Patch converts
// the status alone; what it compares and sends must be what converting the whole object gives, or the
// patches would differ (an empty status included).
func TestStatusOnlyChangesConvertTheStatusAsTheWholeObjectDoes(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now()
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", ResourceVersion: "7"},
		Spec: clusterv1.MachineSpec{ClusterName: "c"}}
	for _, tc := range []struct {
		name   string
		before client.Object
		change func(client.Object)
	}{
		{"an empty status set", machine.DeepCopy(), func(o client.Object) {
			m := o.(*clusterv1.Machine)
			m.Status.Phase = string(clusterv1.MachinePhaseProvisioning)
			m.Status.BootstrapReady = true
		}},
		{"conditions changed", func() client.Object {
			m := machine.DeepCopy()
			m.Status.Conditions = clusterv1.Conditions{{Type: clusterv1.ReadyCondition, Status: "False", LastTransitionTime: now}}
			return m
		}(), func(o client.Object) {
			m := o.(*clusterv1.Machine)
			m.Status.Conditions[0].Status = "True"
			m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Ready", LastTransitionTime: now}}}
		}},
		{"a Cluster's counters", &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}, func(o client.Object) {
			c := o.(*clusterv1.Cluster)
			c.Status.V1Beta2 = &clusterv1.ClusterV1Beta2Status{ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](1)}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := tc.before.DeepCopyObject().(client.Object)
			tc.change(after)
			gotBefore, gotAfter, ok, err := changedStatusOnly(tc.before, after)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ok).To(BeTrue(), "only the status changed")
			wholeBefore, err := toMap(tc.before)
			g.Expect(err).NotTo(HaveOccurred())
			wholeAfter, err := toMap(after)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reflect.DeepEqual(gotBefore, wholeBefore["status"])).To(BeTrue(), "before: %v, whole object: %v", gotBefore, wholeBefore["status"])
			g.Expect(reflect.DeepEqual(gotAfter, wholeAfter["status"])).To(BeTrue(), "after: %v, whole object: %v", gotAfter, wholeAfter["status"])
		})
	}

	// A change of anything but the status takes the whole-object path.
	after := machine.DeepCopy()
	after.Labels = map[string]string{"a": "b"}
	after.Status.Phase = "Running"
	_, _, ok, err := changedStatusOnly(machine, after)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
}

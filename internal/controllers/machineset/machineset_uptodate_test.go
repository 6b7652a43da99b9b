package machineset

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func TestMachineUpToDateCondition(t *testing.T) {
	template := func(version string) clusterv1.MachineTemplateSpec {
		return clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			Version:           ptr.To(version),
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "FooMachineTemplate", Name: "a"},
		}}
	}
	created := statusNow.Add(-time.Hour)
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
		Spec: clusterv1.MachineSetSpec{Template: template("v1.31.0")}}
	tests := []struct {
		name string
		md   *clusterv1.MachineDeployment
		want *metav1.Condition
	}{
		{name: "a MachineSet without MachineDeployment does not decide"},
		{name: "same template", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: template("v1.31.0")}},
			want: &metav1.Condition{Type: "UpToDate", Status: metav1.ConditionTrue, Reason: "UpToDate"}},
		{name: "labels are propagated, not rolled out", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: func() clusterv1.MachineTemplateSpec {
			t := template("v1.31.0")
			t.Labels = map[string]string{"new": "label"}
			return t
		}()}},
			want: &metav1.Condition{Type: "UpToDate", Status: metav1.ConditionTrue, Reason: "UpToDate"}},
		{name: "new version", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: template("v1.32.0")}},
			want: &metav1.Condition{Type: "UpToDate", Status: metav1.ConditionFalse, Reason: "NotUpToDate", Message: "* Version v1.31.0, v1.32.0 required"}},
		{name: "rolloutAfter passed", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: template("v1.31.0"),
			RolloutAfter: ptr.To(metav1.NewTime(statusNow.Add(-time.Minute)))}},
			want: &metav1.Condition{Type: "UpToDate", Status: metav1.ConditionFalse, Reason: "NotUpToDate", Message: "* MachineDeployment spec.rolloutAfter expired"}},
		{name: "rolloutAfter not yet", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Template: template("v1.31.0"),
			RolloutAfter: ptr.To(metav1.NewTime(statusNow.Add(time.Minute)))}},
			want: &metav1.Condition{Type: "UpToDate", Status: metav1.ConditionTrue, Reason: "UpToDate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(machineUpToDateCondition(ms, tt.md, statusNow)).To(Equal(tt.want))
		})
	}
}

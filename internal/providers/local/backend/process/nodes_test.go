package process

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeReadyFollowsTheNodeReadyAnnotation: the simulated Node reports the Ready status the LocalMachine
// asks for, and a Node whose status changed is not up to date, so that registering it writes the change.
func TestNodeReadyFollowsTheNodeReadyAnnotation(t *testing.T) {
	tests := []struct {
		ready      string
		wantStatus corev1.ConditionStatus
		wantReason string
	}{
		{ready: "", wantStatus: corev1.ConditionTrue, wantReason: "KubeletReady"},
		{ready: "True", wantStatus: corev1.ConditionTrue, wantReason: "KubeletReady"},
		{ready: "False", wantStatus: corev1.ConditionFalse, wantReason: "KubeletNotReady"},
		{ready: "Unknown", wantStatus: corev1.ConditionUnknown, wantReason: "NodeStatusUnknown"},
	}
	now := metav1.Now()
	healthy := desiredNodeStatus(nodeSpec{Name: "n"}, now)
	for _, tt := range tests {
		t.Run(tt.ready, func(t *testing.T) {
			g := NewWithT(t)
			status := desiredNodeStatus(nodeSpec{Name: "n", Ready: tt.ready}, now)
			var ready *corev1.NodeCondition
			for i := range status.Conditions {
				if status.Conditions[i].Type == corev1.NodeReady {
					ready = &status.Conditions[i]
				}
			}
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(tt.wantStatus))
			g.Expect(ready.Reason).To(Equal(tt.wantReason))
			g.Expect(statusUpToDate(healthy, status)).To(Equal(tt.wantStatus == corev1.ConditionTrue))
		})
	}
}

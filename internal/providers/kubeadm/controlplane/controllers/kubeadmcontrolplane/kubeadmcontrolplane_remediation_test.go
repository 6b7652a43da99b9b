package kubeadmcontrolplane_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
)

// An unhealthy control plane component shows in the Machine's and the KubeadmControlPlane's conditions;
// a Machine a MachineHealthCheck marked is deleted and replaced, and the replacement records the
// remediation.
func TestHealthAndRemediation(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	cluster, kcp := newControlPlane(ctx, g, ns, "remediation", 3)
	readyKCP(ctx, g, kcp, 3, "v1.36.0")

	machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
	sick := machines[0]
	node := sick.Status.NodeRef.Name
	broken.Store(workload.StaticPodName("kube-apiserver", node), true)
	t.Cleanup(func() { broken.Delete(workload.StaticPodName("kube-apiserver", node)) })

	t.Log("the crashing API server Pod is reported")
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&sick), m)).To(Succeed())
		c := conditions.Get(m, controlplanev1.MachineAPIServerPodHealthyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(controlplanev1.PodFailedReason))
		g.Expect(c.Message).To(Equal("CrashLoopBackOff"))
		got := getKCP(ctx, g, kcp)
		g.Expect(conditions.IsFalse(got, controlplanev1.ControlPlaneComponentsHealthyCondition)).To(BeTrue())
		g.Expect(conditions.Get(got, controlplanev1.ControlPlaneComponentsHealthyCondition).Message).To(ContainSubstring(sick.Name))
		c2 := conditions.GetV1Beta2(got, controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyV1Beta2Condition)
		g.Expect(c2).NotTo(BeNil())
		g.Expect(c2.Reason).To(Equal(controlplanev1.KubeadmControlPlaneControlPlaneComponentsNotHealthyV1Beta2Reason))
		g.Expect(c2.Message).To(ContainSubstring("* Machine " + sick.Name + ": APIServerPodHealthy: CrashLoopBackOff"))
	}, timeout, interval).Should(Succeed())

	t.Log("a MachineHealthCheck marks the Machine: it is deleted and replaced")
	g.Eventually(func() error {
		m := &clusterv1.Machine{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&sick), m); err != nil {
			return err
		}
		before := m.DeepCopy()
		conditions.MarkFalse(m, "HealthCheckSucceeded", "UnhealthyNode", clusterv1.ConditionSeverityWarning, "Condition Ready on node is reporting status False")
		conditions.MarkFalse(m, "OwnerRemediated", "WaitingForRemediation", clusterv1.ConditionSeverityWarning, "")
		return env.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, timeout, interval).Should(Succeed())
	broken.Delete(workload.StaticPodName("kube-apiserver", node))
	g.Eventually(func(g Gomega) {
		for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
			g.Expect(m.Name).NotTo(Equal(sick.Name))
		}
	}, timeout, interval).Should(Succeed())
	// The KubeadmControlPlane's status may still count the sick Machine: wait for its replacement first.
	var replacement *clusterv1.Machine
	g.Eventually(func(g Gomega) {
		replacement = nil
		machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
		g.Expect(machines).To(HaveLen(3))
		for i := range machines {
			if _, ok := machines[i].Annotations[controlplanev1.RemediationForAnnotation]; ok {
				replacement = &machines[i]
			}
		}
		g.Expect(replacement).NotTo(BeNil(), "the replacement Machine carries the remediation-for annotation")
	}, timeout, interval).Should(Succeed())
	g.Expect(replacement.Annotations[controlplanev1.RemediationForAnnotation]).To(ContainSubstring(`"machine":"` + sick.Name + `"`))
	readyKCP(ctx, g, kcp, 3, "v1.36.0")
	g.Eventually(func(g Gomega) {
		got := getKCP(ctx, g, kcp)
		g.Expect(got.Annotations).NotTo(HaveKey(controlplanev1.RemediationInProgressAnnotation))
		g.Expect(got.Status.LastRemediation).NotTo(BeNil())
		g.Expect(got.Status.LastRemediation.Machine).To(Equal(sick.Name))
		g.Expect(got.Status.LastRemediation.RetryCount).To(BeZero())
		g.Expect(ptr.Deref(got.Spec.Replicas, 0)).To(BeEquivalentTo(3))
	}, timeout, interval).Should(Succeed())
}

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// TestMachineHealthCheckWithLocalMachines provisions the released cluster template with 3 workers and a
// MachineHealthCheck of its MachineDeployment (Node Ready False or Unknown for 5s, maxUnhealthy 40%: one of
// three; a Machine condition example.com/Degraded True for 5s) with the core, kubeadm and local providers
// running. One worker's Node made NotReady through the LocalMachine's node-ready annotation is replaced by a
// new Machine, and so is a worker whose Machine reports the Degraded condition; then, with two of three
// Nodes NotReady, nothing is remediated and the MachineHealthCheck says why.
func TestMachineHealthCheckWithLocalMachines(t *testing.T) {
	const degraded = "example.com/Degraded"
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	objs := stack.LocalTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "mhc", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "3",
	})
	mdName := ""
	for _, o := range objs {
		if o.GetKind() == "MachineDeployment" {
			mdName = o.GetName()
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	g.Expect(mdName).NotTo(BeEmpty(), "the template has a MachineDeployment")

	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: "mhc",
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: mdName}},
			UnhealthyConditions: []clusterv1.UnhealthyCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 5 * time.Second}},
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: 5 * time.Second}},
			},
			UnhealthyMachineConditions: []clusterv1.UnhealthyMachineCondition{
				{Type: degraded, Status: metav1.ConditionTrue, Timeout: metav1.Duration{Duration: 5 * time.Second}},
			},
			MaxUnhealthy: ptr.To(intstr.FromString("40%")),
		},
	}
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())

	workers := func(g Gomega) []clusterv1.Machine {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: mdName})).To(Succeed())
		return list.Items
	}
	healthy := func(g Gomega, n int32) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.ExpectedMachines).To(Equal(int32(3)))
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(n))
	}
	running := func(g Gomega) []clusterv1.Machine {
		ms := workers(g)
		g.Expect(ms).To(HaveLen(3))
		for _, m := range ms {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "Machine %s", m.Name)
		}
		return ms
	}
	var machines []clusterv1.Machine
	g.Eventually(func(g Gomega) {
		machines = running(g)
		healthy(g, 3)
	}, 4*time.Minute, time.Second).Should(Succeed())

	makeNotReady := func(m clusterv1.Machine) {
		lm := &infrav1.LocalMachine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, lm)).To(Succeed())
		patch := client.MergeFrom(lm.DeepCopy())
		if lm.Annotations == nil {
			lm.Annotations = map[string]string{}
		}
		lm.Annotations[infrav1.NodeReadyAnnotation] = string(corev1.ConditionFalse)
		g.Expect(env.Client.Patch(ctx, lm, patch)).To(Succeed())
	}

	// replaced waits until the MachineSet deleted victim and three healthy workers run again.
	replaced := func(victim clusterv1.Machine) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			m := &clusterv1.Machine{}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), m)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.DeletionTimestamp).NotTo(BeNil(), "the MachineSet deletes the unhealthy Machine")
		}, 2*time.Minute, time.Second).Should(Succeed())
		g.Eventually(func(g Gomega) {
			machines = running(g)
			for _, m := range machines {
				g.Expect(m.Name).NotTo(Equal(victim.Name))
			}
			healthy(g, 3)
		}, 4*time.Minute, time.Second).Should(Succeed())
	}

	t.Log("one unhealthy Node of three: its Machine is replaced")
	victim := machines[0]
	makeNotReady(victim)
	replaced(victim)

	t.Log("a Machine condition listed in unhealthyMachineConditions (upstream v1.12): its Machine is replaced")
	victim = machines[1]
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), m)).To(Succeed())
		before := m.DeepCopy()
		// What an agent of the user's would report, as for a readiness gate.
		conditions.SetV1Beta2(m, metav1.Condition{Type: degraded, Status: metav1.ConditionTrue, Reason: "DiskSlow", Message: "disk latency above 1s"})
		g.Expect(env.Client.Status().Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	}, time.Minute, time.Second).Should(Succeed())
	replaced(victim)

	t.Log("two unhealthy Nodes of three, above maxUnhealthy: nothing is remediated and the MachineHealthCheck says why")
	makeNotReady(machines[0])
	makeNotReady(machines[1])
	const why = "Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 40%)"
	g.Eventually(func(g Gomega) {
		healthy(g, 1)
		g.Expect(mhc.Status.RemediationsAllowed).To(BeZero())
		c := conditions.GetV1Beta2(mhc, clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineHealthCheckTooManyUnhealthyV1Beta2Reason))
		g.Expect(c.Message).To(Equal(why))
	}, 2*time.Minute, time.Second).Should(Succeed())
	g.Consistently(func(g Gomega) {
		ms := workers(g)
		g.Expect(ms).To(HaveLen(3))
		for _, m := range ms {
			g.Expect(m.DeletionTimestamp).To(BeNil(), "Machine %s is not remediated", m.Name)
		}
	}, 10*time.Second, time.Second).Should(Succeed())

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mhc"}}
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue())
}

package kubeadmcontrolplane_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/test/apicount"
)

// healthWithin is how soon the health conditions must be on a Machine whose Node and static Pods are up:
// seconds, far less than the health interval of a ready control plane (5 minutes by default) or the 20
// seconds after which one that is not ready is read again.
const healthWithin = 15 * time.Second

// The health of a control plane Machine is written as soon as its Node and Pods are up, even while others
// keep writing the Machine's status (the core's Machine controller writes it several times while the
// Machine gets its Node: each such write made the control plane's status patch of the Machine conflict,
// and the health waited for a later read, minutes later with many clusters). Then a control plane that is
// healthy and unchanged is read again and again without writing anything: no resourceVersion of the
// KubeadmControlPlane, its Machine or its Cluster changes.
func TestHealthWrittenOnceUp(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	cluster, kcp := newControlPlane(ctx, g, ns, "health", 1)

	var machine clusterv1.Machine
	g.Eventually(func(g Gomega) {
		machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
		g.Expect(machines).To(HaveLen(1))
		machine = machines[0]
	}, timeout, interval).Should(Succeed())

	t.Log("another controller keeps writing the Machine's status while its Node comes up")
	stopWriting := writeMachineStatus(ctx, t, client.ObjectKeyFromObject(&machine))
	defer stopWriting()

	var upAt time.Time
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		g.Expect(m.Status.NodeRef).NotTo(BeNil())
		pod := &corev1.Pod{}
		for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: workload.StaticPodName(c, m.Status.NodeRef.Name)}
			g.Expect(workloadClient.Get(ctx, key, pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}
	}, timeout, interval).Should(Succeed())
	upAt = time.Now()

	t.Log("the Machine's health conditions are written within seconds")
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		for _, c := range []clusterv1.ConditionType{controlplanev1.MachineAPIServerPodHealthyCondition,
			controlplanev1.MachineControllerManagerPodHealthyCondition, controlplanev1.MachineSchedulerPodHealthyCondition} {
			g.Expect(conditions.IsTrue(m, c)).To(BeTrue(), "%s: %v", c, conditions.Get(m, c))
			g.Expect(conditions.IsV1Beta2True(m, string(c))).To(BeTrue(), "%s (v1beta2): %v", c, conditions.GetV1Beta2(m, string(c)))
		}
	}, healthWithin, interval).Should(Succeed(), "health conditions not written %s after the Node and Pods were up", healthWithin)
	t.Logf("health conditions written %s after the Node and Pods were up", time.Since(upAt).Round(time.Millisecond))
	stopWriting()

	t.Log("the Machine, the control plane and the Cluster become ready")
	readyKCP(ctx, g, kcp, 1, "v1.36.0")
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(m, clusterv1.MachineReadyV1Beta2Condition)).To(BeTrue())
		got := getKCP(ctx, g, kcp)
		g.Expect(conditions.IsV1Beta2True(got, controlplanev1.KubeadmControlPlaneMachinesReadyV1Beta2Condition)).To(BeTrue())
		g.Expect(got.Status.V1Beta2).NotTo(BeNil())
		g.Expect(got.Status.V1Beta2.ReadyReplicas).To(HaveValue(Equal(int32(1))))
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		g.Expect(c.Status.ControlPlaneReady).To(BeTrue())
		g.Expect(c.Status.V1Beta2).NotTo(BeNil())
		g.Expect(c.Status.V1Beta2.ControlPlane).NotTo(BeNil())
		g.Expect(c.Status.V1Beta2.ControlPlane.ReadyReplicas).To(HaveValue(Equal(int32(1))))
	}, timeout, interval).Should(Succeed())

	t.Log("nothing changes while the healthy control plane is read again (every 3 s in this suite)")
	versions := func(g Gomega) map[string]string {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		return map[string]string{"Machine": m.ResourceVersion, "KubeadmControlPlane": getKCP(ctx, g, kcp).ResourceVersion, "Cluster": c.ResourceVersion}
	}
	// The Cluster's and Machine's last writes may trail the control plane's by a few seconds: wait until
	// nothing changed for one health interval and more before taking the reference.
	var settled map[string]string
	g.Eventually(func(g Gomega) {
		before := versions(g)
		time.Sleep(4 * time.Second)
		g.Expect(versions(g)).To(Equal(before))
		settled = before
	}, timeout, time.Second).Should(Succeed())
	machineLists := func() int {
		return managerRequests.Snapshot().InNamespace(ns).Sum(func(k apicount.Key) bool {
			return k.Action == "list" && k.Resource == "cluster.x-k8s.io/machines"
		})
	}
	listsBefore := machineLists()
	g.Consistently(versions, 10*time.Second, 500*time.Millisecond).Should(Equal(settled))
	g.Expect(machineLists()-listsBefore).To(BeZero(), "the health reads of a steady control plane read its Machines from the cache")

	t.Log("those reads happened: a component that crashes now is noticed without any Machine event")
	m := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
	pod := workload.StaticPodName("kube-scheduler", m.Status.NodeRef.Name)
	broken.Store(pod, true)
	defer broken.Delete(pod)
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		g.Expect(conditions.IsFalse(m, controlplanev1.MachineSchedulerPodHealthyCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// writeMachineStatus writes the Machine's status.lastUpdated every few milliseconds, as a busy controller
// would, until the returned function is called.
func writeMachineStatus(ctx context.Context, t *testing.T, key client.ObjectKey) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		base := time.Now().Truncate(time.Second)
		for i := 0; ctx.Err() == nil; i++ {
			m := &clusterv1.Machine{}
			if err := env.Client.Get(ctx, key, m); err == nil {
				before := m.DeepCopy()
				m.Status.LastUpdated = &metav1.Time{Time: base.Add(time.Duration(i) * time.Second)}
				_ = env.Client.Status().Patch(ctx, m, client.MergeFrom(before))
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

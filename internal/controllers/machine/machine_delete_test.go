package machine

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

const (
	preDrainHook     = clusterv1.PreDrainDeleteHookAnnotationPrefix + "/test"
	preTerminateHook = clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/test"
)

// createControlPlaneMachine creates a control plane Machine in the Cluster, so that deleting a worker
// drains and deletes its Node (the Machine controller leaves Nodes alone when no control plane is left).
func createControlPlaneMachine(t *testing.T, ns, clusterName string) {
	t.Helper()
	infra := builder.V1Beta1.InfraMachine(ns, "control-plane")
	m := builder.Machine(ns, "control-plane", clusterName, infra, nil)
	m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	m.Spec.Bootstrap.DataSecretName = ptr.To("control-plane")
	NewWithT(t).Expect(env.Client.Create(context.Background(), m)).To(Succeed())
}

// createWorkloadNamespace creates a namespace of the same name in the workload cluster.
func createWorkloadNamespace(t *testing.T, ns string) {
	t.Helper()
	NewWithT(t).Expect(workload.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
}

// createPod creates a Pod bound to a Node of the workload cluster (there is no scheduler nor kubelet), with
// no termination grace period so that evicting it deletes it at once.
func createPod(t *testing.T, ns, name, nodeName string, mutate func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if mutate != nil {
		mutate(pod)
	}
	g.Expect(workload.Client.Create(context.Background(), pod)).To(Succeed())
	return pod
}

func podExists(g Gomega, pod *corev1.Pod) bool {
	err := workload.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return true
}

func removeAnnotation(t *testing.T, m *clusterv1.Machine, key string) {
	t.Helper()
	g := NewWithT(t)
	got := getMachine(g, m)
	before := got.DeepCopy()
	delete(got.Annotations, key)
	g.Expect(env.Client.Patch(context.Background(), got, client.MergeFrom(before))).To(Succeed())
}

func deletingReason(g Gomega, m *clusterv1.Machine) string {
	c := conditions.GetV1Beta2(getMachine(g, m), clusterv1.MachineDeletingV1Beta2Condition)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	return c.Reason
}

func TestMachineDeletionDrainsAndDeletesInOrder(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, tm, node := runningMachine(t, builder.V1Beta2, ns, func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{preDrainHook: "", preTerminateHook: ""}
		m.Spec.NodeDrainTimeout = &metav1.Duration{Duration: 4 * time.Second}
	})
	createControlPlaneMachine(t, ns, cluster.Name)

	createWorkloadNamespace(t, ns)
	evictable := createPod(t, ns, "evictable", node.Name, nil)
	protected := createPod(t, ns, "protected", node.Name, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "protected"} })
	running := protected.DeepCopy()
	// Pending or unready Pods are evicted whatever their budget says: make this one running and ready.
	running.Status.Phase = corev1.PodRunning
	running.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	g.Expect(workload.Client.Status().Patch(ctx, running, client.MergeFrom(protected))).To(Succeed())
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "protected"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}},
		},
	}
	g.Expect(workload.Client.Create(ctx, pdb)).To(Succeed())
	// There is no disruption controller: report the budget's status as it would.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1,
	}
	g.Expect(workload.Client.Status().Update(ctx, pdb)).To(Succeed())
	daemon := createPod(t, ns, "daemon", node.Name, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "d5", Controller: ptr.To(true)}}
	})

	g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())

	// The pre-drain hook holds the deletion before anything is drained.
	g.Eventually(func(g Gomega) {
		g.Expect(deletingReason(g, tm.machine)).To(Equal(clusterv1.MachineDeletingWaitingForPreDrainHookV1Beta2Reason))
		m := getMachine(g, tm.machine)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseDeleting)))
		g.Expect(conditions.IsFalse(m, clusterv1.PreDrainDeleteHookSucceededCondition)).To(BeTrue())
		g.Expect(v1beta2Status(m, clusterv1.MachineReadyV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
		g.Expect(m.Status.Deletion).NotTo(BeNil())
		g.Expect(m.Status.Deletion.WaitForPreDrainHookStartTime).NotTo(BeNil(), "the wait for the pre-drain hook is timed")
		g.Expect(m.Status.Deletion.NodeDrainStartTime).To(BeNil())
	}, timeout, interval).Should(Succeed())
	preDrainStart := getMachine(g, tm.machine).Status.Deletion.WaitForPreDrainHookStartTime
	g.Consistently(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
		g.Expect(n.Spec.Unschedulable).To(BeFalse())
		g.Expect(podExists(g, evictable)).To(BeTrue())
	}, time.Second, interval).Should(Succeed())

	// Without the hook the Node is cordoned and drained; the budget holds one Pod back.
	removeAnnotation(t, tm.machine, preDrainHook)
	g.Eventually(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
		g.Expect(n.Spec.Unschedulable).To(BeTrue())
		g.Expect(podExists(g, evictable)).To(BeFalse())
		g.Expect(deletingReason(g, tm.machine)).To(Equal(clusterv1.MachineDeletingDrainingNodeV1Beta2Reason))
		m := getMachine(g, tm.machine)
		g.Expect(m.Status.Deletion).NotTo(BeNil())
		g.Expect(m.Status.Deletion.NodeDrainStartTime).NotTo(BeNil())
		msg := conditions.GetV1Beta2(m, clusterv1.MachineDeletingV1Beta2Condition).Message
		g.Expect(msg).To(HavePrefix("Drain not completed yet:\n* Pod " + ns + "/protected: cannot evict pod as it would violate the pod's disruption budget"))
		g.Expect(conditions.Get(m, clusterv1.DrainingSucceededCondition).Reason).To(Equal(clusterv1.DrainingReason))
	}, timeout, interval).Should(Succeed())
	g.Expect(podExists(g, protected)).To(BeTrue())
	g.Expect(podExists(g, daemon)).To(BeTrue(), "DaemonSet Pods are not evicted")

	// Once nodeDrainTimeout has passed the deletion goes on, to the pre-terminate hook.
	g.Eventually(func(g Gomega) {
		g.Expect(deletingReason(g, tm.machine)).To(Equal(clusterv1.MachineDeletingWaitingForPreTerminateHookV1Beta2Reason))
		m := getMachine(g, tm.machine)
		g.Expect(conditions.IsTrue(m, clusterv1.VolumeDetachSucceededCondition)).To(BeTrue())
		g.Expect(conditions.IsFalse(m, clusterv1.PreTerminateDeleteHookSucceededCondition)).To(BeTrue())
		g.Expect(m.Status.Deletion.WaitForPreTerminateHookStartTime).NotTo(BeNil(), "the wait for the pre-terminate hook is timed")
		g.Expect(m.Status.Deletion.WaitForPreDrainHookStartTime).To(Equal(preDrainStart), "a start time is set once")
	}, timeout, interval).Should(Succeed())
	g.Expect(podExists(g, protected)).To(BeTrue(), "the budget was respected until the timeout")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.infra), tm.infra)).To(Succeed(), "the pre-terminate hook holds the infrastructure")

	// Without the hook the providers' objects, then the Node, then the Machine go.
	removeAnnotation(t, tm.machine, preTerminateHook)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Machine is gone")
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.infra), tm.infra))).To(BeTrue())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.bootstrap), tm.bootstrap))).To(BeTrue())
	g.Expect(apierrors.IsNotFound(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}))).To(BeTrue())
}

func TestMachineDeletionWaitsForVolumesToDetach(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, tm, node := runningMachine(t, builder.V1Beta1, ns, func(m *clusterv1.Machine) {
		m.Annotations = map[string]string{clusterv1.ExcludeNodeDrainingAnnotation: ""}
	})
	createControlPlaneMachine(t, ns, cluster.Name)
	attached := node.DeepCopy()
	attached.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/disk^vol-1", DevicePath: "/dev/sdb"}}
	g.Expect(workload.Client.Status().Patch(ctx, attached, client.MergeFrom(node))).To(Succeed())

	g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(deletingReason(g, tm.machine)).To(Equal(clusterv1.MachineDeletingWaitingForVolumeDetachV1Beta2Reason))
		m := getMachine(g, tm.machine)
		g.Expect(conditions.GetV1Beta2(m, clusterv1.MachineDeletingV1Beta2Condition).Message).To(
			Equal("Waiting for Node volumes to be detached:\n* Volumes: kubernetes.io/csi/disk^vol-1"))
		g.Expect(m.Status.Deletion.WaitForNodeVolumeDetachStartTime).NotTo(BeNil())
		g.Expect(m.Status.Deletion.NodeDrainStartTime).To(BeNil(), "the drain is excluded")
	}, timeout, interval).Should(Succeed())
	n := &corev1.Node{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
	g.Expect(n.Spec.Unschedulable).To(BeFalse(), "the drain is excluded, so the Node is not cordoned")

	detached := n.DeepCopy()
	detached.Status.VolumesAttached = nil
	g.Expect(workload.Client.Status().Patch(ctx, detached, client.MergeFrom(n))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}))).To(BeTrue())
}

func TestMachineDeletionLeavesTheNodeWithoutControlPlane(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, tm, node := runningMachine(t, builder.V1Beta1, ns)

	g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.infra), tm.infra))).To(BeTrue())
	n := &corev1.Node{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed(), "the Node of the last Machine of a cluster without control plane stays")
	g.Expect(n.Spec.Unschedulable).To(BeFalse())
}

func TestTimeouts(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	tests := []struct {
		name    string
		timeout *metav1.Duration
		start   *metav1.Time
		now     time.Time
		want    bool
	}{
		{name: "no timeout", start: &metav1.Time{Time: start}, now: at(time.Hour)},
		{name: "zero timeout is no timeout", timeout: &metav1.Duration{}, start: &metav1.Time{Time: start}, now: at(time.Hour)},
		{name: "not started", timeout: &metav1.Duration{Duration: time.Second}, now: at(time.Hour)},
		{name: "before", timeout: &metav1.Duration{Duration: time.Minute}, start: &metav1.Time{Time: start}, now: at(59 * time.Second)},
		{name: "at", timeout: &metav1.Duration{Duration: time.Minute}, start: &metav1.Time{Time: start}, now: at(time.Minute), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(timedOut(tt.timeout, tt.start, tt.now)).To(Equal(tt.want))
		})
	}
}

func TestNodeDeletionTimedOut(t *testing.T) {
	deleted := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name    string
		timeout *metav1.Duration
		after   time.Duration
		want    bool
	}{
		{name: "default 10s, before", after: 9 * time.Second},
		{name: "default 10s, after", after: 10 * time.Second, want: true},
		{name: "zero retries forever", timeout: &metav1.Duration{}, after: time.Hour},
		{name: "explicit", timeout: &metav1.Duration{Duration: time.Minute}, after: 2 * time.Minute, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Spec: clusterv1.MachineSpec{NodeDeletionTimeout: tt.timeout}}
			NewWithT(t).Expect(nodeDeletionTimedOut(m, deleted.Add(tt.after))).To(Equal(tt.want))
		})
	}
}

func TestDrainAllowed(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	infra := providerFacts{obj: &unstructured.Unstructured{}}
	deletingInfra := providerFacts{obj: &unstructured.Unstructured{}}
	deletingInfra.obj.SetDeletionTimestamp(&start)
	tests := []struct {
		name    string
		machine clusterv1.Machine
		infra   *providerFacts
		// want is drainAllowed's answer, volumes volumeDetachWaitAllowed's.
		want, volumes bool
	}{
		{name: "no timeout", want: true, volumes: true},
		{name: "excluded", volumes: true, machine: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.ExcludeNodeDrainingAnnotation: ""}}}},
		{
			name: "timeout passed", volumes: true,
			machine: clusterv1.Machine{
				Spec:   clusterv1.MachineSpec{NodeDrainTimeout: &metav1.Duration{Duration: time.Minute}},
				Status: clusterv1.MachineStatus{Deletion: &clusterv1.MachineDeletionStatus{NodeDrainStartTime: &start}},
			},
		},
		{
			name: "pre-terminate hooks waited for",
			machine: clusterv1.Machine{
				Status: clusterv1.MachineStatus{Deletion: &clusterv1.MachineDeletionStatus{WaitForPreTerminateHookStartTime: &start}},
			},
		},
		{name: "InfraMachine gone", infra: &providerFacts{notFound: true}},
		{name: "InfraMachine being deleted", infra: &deletingInfra},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := infra
			if tt.infra != nil {
				facts = *tt.infra
			}
			g := NewWithT(t)
			g.Expect(drainAllowed(&tt.machine, facts, start.Add(time.Hour))).To(Equal(tt.want), "drain")
			g.Expect(volumeDetachWaitAllowed(&tt.machine, facts, start.Add(time.Hour))).To(Equal(tt.volumes), "wait for volumes")
		})
	}
}

func TestHookAnnotations(t *testing.T) {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		clusterv1.PreDrainDeleteHookAnnotationPrefix + "/b":     "",
		clusterv1.PreDrainDeleteHookAnnotationPrefix + "/a":     "",
		clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/c": "",
	}}}
	NewWithT(t).Expect(hookAnnotations(m, clusterv1.PreDrainDeleteHookAnnotationPrefix)).To(Equal([]string{
		clusterv1.PreDrainDeleteHookAnnotationPrefix + "/a", clusterv1.PreDrainDeleteHookAnnotationPrefix + "/b",
	}))
}

func TestVolumesMessage(t *testing.T) {
	g := NewWithT(t)
	g.Expect(volumesMessage([]string{"a"})).To(Equal("Waiting for Node volumes to be detached:\n* Volumes: a"))
	g.Expect(volumesMessage([]string{"a", "b", "c", "d", "e"})).To(Equal("Waiting for Node volumes to be detached:\n* Volumes: a, b, c, ... (2 more)"))
}

package localmachine

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
)

// TestLocalMachineMovedAway deletes a LocalMachine the way clusterctl move deletes what it moved, its
// Cluster paused and the delete-for-move annotation set, while the provider's finalizer is still on it:
// the finalizer goes and the Node stays. The copy in the management cluster it was moved to, which has its
// spec.providerID but not its status, does not boot again: its start-up delay is not waited for.
func TestLocalMachineMovedAway(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, cluster, lc, _, _ := clusterWithControlPlane(t, g)
	wc := workloadClient(g, ns, "c1", lc.Spec.ControlPlaneEndpoint)
	m, lm := createMachine(t, cluster, "m1", machineOptions{owned: true})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, lm) }, 30*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))
	node, err := wc.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("deleted for a move while paused, the LocalMachine goes and its Node stays")
	get(g, cluster)
	cluster.Spec.Paused = true
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	get(g, lm)
	g.Expect(lm.Finalizers).To(ContainElement(infrav1.LocalMachineFinalizer))
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+clusterctlv1.DeleteForMoveAnnotation+`":"true"}}}`))
	g.Expect(env.Client.Patch(ctx, lm, annotate)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, lm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lm), &infrav1.LocalMachine{}))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Consistently(func(g Gomega) {
		n, err := wc.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(n.UID).To(Equal(node.UID))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	t.Log("its copy, with spec.providerID and no status, is registered at once despite a start-up delay")
	moved := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "m1", Labels: lm.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
	}, Spec: infrav1.LocalMachineSpec{ProviderID: lm.Spec.ProviderID, StartupDelay: &metav1.Duration{Duration: time.Hour}}}
	g.Expect(env.Client.Create(ctx, moved)).To(Succeed())
	get(g, cluster)
	cluster.Spec.Paused = false
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, moved) }, 30*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))
	n, err := wc.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n.UID).To(Equal(node.UID))
}

// TestWorkerOfADeletedClusterGoesWithoutAControlPlane deletes a Cluster whose control plane machine is
// gone before its worker: the worker's LocalMachine does not wait for an API server that will never come
// back to delete its Node, it goes (the LocalCluster's deletion removes the rest).
func TestWorkerOfADeletedClusterGoesWithoutAControlPlane(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, cluster, _, _, cp := clusterWithControlPlane(t, g)
	_, lm := createMachine(t, cluster, "m1", machineOptions{owned: true})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, lm) }, 30*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))

	t.Log("the control plane machine goes first")
	g.Expect(env.Client.Delete(ctx, cp)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), &infrav1.LocalMachine{}))
	}, 60*time.Second, 100*time.Millisecond).Should(BeTrue())

	t.Log("with the Cluster being deleted, the worker goes too")
	const hold = "test.capstan.dev/hold"
	get(g, cluster)
	cluster.Finalizers = append(cluster.Finalizers, hold)
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	t.Cleanup(func() {
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(cluster), c); err == nil {
			c.Finalizers = nil
			_ = env.Client.Update(context.Background(), c)
		}
	})
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, lm)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lm), &infrav1.LocalMachine{}))
	}, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "the worker's LocalMachine is deleted")
}

// TestDeletedControlPlaneMachineLeavesTheEndpoint: the provider puts its pre-terminate hook on the control
// plane Machines it runs (not on workers); when such a Machine is deleted, its kube-apiserver leaves the
// cluster's endpoint and stops before the hook goes, so that the control plane provider, which removes
// the etcd member once the other hooks are gone, never removes it under an API server that has clients.
func TestDeletedControlPlaneMachineLeavesTheEndpoint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, cluster, lc, cp0, _ := clusterWithControlPlane(t, g)
	wc := workloadClient(g, ns, "c1", lc.Spec.ControlPlaneEndpoint)
	join := cabpk.CloudConfig(cabpk.Data{Kubeadm: cabpk.JoinConfiguration("127.0.0.1:6443", "cp-1", true, "")})
	cp1, cp1lm := createMachine(t, cluster, "cp-1", machineOptions{owned: true, controlPlane: true, bootstrap: join})
	worker, workerlm := createMachine(t, cluster, "m1", machineOptions{owned: true})
	for _, lm := range []*infrav1.LocalMachine{cp1lm, workerlm} {
		g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, lm) }, 90*time.Second, 100*time.Millisecond).
			Should(Equal(infrav1.NodeRegisteredReason))
	}
	g.Eventually(func(g Gomega) {
		for _, m := range []*clusterv1.Machine{cp0, cp1} {
			get(g, m)
			g.Expect(m.Annotations).To(HaveKey(infrav1.LeaveEndpointHookAnnotation), "Machine %s", m.Name)
		}
		get(g, cp1lm)
		g.Expect(conditions.IsTrue(cp1lm, infrav1.ControlPlaneRunningCondition)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	get(g, worker)
	g.Expect(worker.Annotations).NotTo(HaveKey(infrav1.LeaveEndpointHookAnnotation), "a worker has no API server")

	t.Log("Machine cp-1 is deleted (held by a finalizer, as the Machine controller holds it until its hooks are gone)")
	deleteHeldUntilUnhooked(g, cp1)
	g.Eventually(func(g Gomega) {
		get(g, cp1lm)
		c := conditions.Get(cp1lm, infrav1.ControlPlaneRunningCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.LeftEndpointReason))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	_, err := wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "the endpoint answers through cp-0")

	t.Log("the last control plane Machine has nowhere to send its clients: its hook goes at once")
	deleteHeldUntilUnhooked(g, cp0)
	_, err = wc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "the endpoint still answers through cp-0")
	for _, m := range []*clusterv1.Machine{cp0, cp1} {
		get(g, m)
		m.Finalizers = nil
		g.Expect(env.Client.Update(ctx, m)).To(Succeed())
	}
}

// deleteHeldUntilUnhooked deletes a Machine held by a finalizer of the test (as the Machine controller
// holds one until its hooks are gone) and waits for the provider to remove its pre-terminate hook.
func deleteHeldUntilUnhooked(g Gomega, m *clusterv1.Machine) {
	ctx := context.Background()
	get(g, m)
	m.Finalizers = append(m.Finalizers, "test.cluster.x-k8s.io/hold")
	g.Expect(env.Client.Update(ctx, m)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, m)
		g.Expect(m.Annotations).NotTo(HaveKey(infrav1.LeaveEndpointHookAnnotation))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
}

// clusterWithControlPlane runs the provider and a Cluster c1 of a new namespace, its infrastructure ready and
// its control plane Machine cp-0 registered.
func clusterWithControlPlane(t *testing.T, g Gomega) (string, *clusterv1.Cluster, *infrav1.LocalCluster, *clusterv1.Machine, *infrav1.LocalMachine) {
	t.Helper()
	ns := env.NewNamespace(t)
	startProvider(t, t.TempDir())
	cluster, lc := createCluster(t, ns, "c1", true)
	g.Eventually(func(g Gomega) {
		get(g, lc)
		g.Expect(lc.Status.Ready).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	setInfrastructureReady(g, cluster, lc)
	cp, cplm := createMachine(t, cluster, "cp-0", machineOptions{owned: true, controlPlane: true})
	g.Eventually(func(g Gomega) string { return nodeRegisteredReason(g, cplm) }, 90*time.Second, 100*time.Millisecond).
		Should(Equal(infrav1.NodeRegisteredReason))
	return ns, cluster, lc, cp, cplm
}

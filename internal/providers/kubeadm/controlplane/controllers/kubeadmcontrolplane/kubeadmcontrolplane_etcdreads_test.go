package kubeadmcontrolplane

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/workload"
	"github.com/capstan-dev/capstan/internal/test/etcdtest"
)

// TestNoDestructiveDecisionOnAReusedEtcdRead: a read of etcd that found every member healthy is reused for
// the status of the next reconciles (DefaultEtcdHealthReuse), but a member that died since must not be
// counted healthy when the reconcile deletes a Machine or removes a member: that would leave 1 live member
// of 3 and lose quorum. Each case runs a real 3-member etcd cluster, reads it (all healthy, the read is
// kept), kills node-1's member, then reconciles within the reuse window.
func TestNoDestructiveDecisionOnAReusedEtcdRead(t *testing.T) {
	tests := []struct {
		name string
		// replicas is spec.replicas at the second reconcile (3 Machines exist).
		replicas int32
		// change makes the third Machine (node-2's) what the case needs, before the first read.
		change func(m *clusterv1.Machine)
		// check asserts the outcome, with the Machines as the second reconcile left them.
		check func(g Gomega, r *Reconciler, s *scope, c *etcdtest.Cluster)
	}{
		{
			name: "scale down 3 → 2 does not delete another member's Machine", replicas: 2,
			check: func(g Gomega, r *Reconciler, s *scope, _ *etcdtest.Cluster) {
				g.Expect(exists(g, r, "m-0")).To(BeTrue(), "the oldest Machine is not deleted while node-1's member is dead")
				g.Expect(conditions.IsFalse(s.machines["m-1"], controlplanev1.MachineEtcdMemberHealthyCondition)).To(BeTrue(),
					"node-1's member is reported unhealthy: %v", conditions.Get(s.machines["m-1"], controlplanev1.MachineEtcdMemberHealthyCondition))
				g.Expect(s.preflight.etcdClusterNotHealthy).To(BeTrue())
			},
		},
		{
			name: "remediation does not delete a Machine whose member keeps quorum", replicas: 3,
			change: func(m *clusterv1.Machine) {
				conditions.MarkFalse(m, healthCheckSucceededCondition, "NodeNotReady", clusterv1.ConditionSeverityWarning, "")
				conditions.MarkFalse(m, ownerRemediatedCondition, waitingForRemediationReason, clusterv1.ConditionSeverityWarning, "")
			},
			check: func(g Gomega, r *Reconciler, s *scope, _ *etcdtest.Cluster) {
				g.Expect(exists(g, r, "m-2")).To(BeTrue(), "the Machine to remediate is kept: without it, node-0's member would be alone of 2")
				c := conditions.Get(s.machines["m-2"], ownerRemediatedCondition)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Message).To(ContainSubstring("etcd loosing quorum"))
			},
		},
		{
			name: "the pre-terminate hook does not remove a live member when the others would lose quorum", replicas: 3,
			change: func(m *clusterv1.Machine) {
				m.DeletionTimestamp = ptr.To(metav1.NewTime(epoch))
				m.Finalizers = []string{clusterv1.MachineFinalizer}
				m.Annotations[controlplanev1.PreTerminateHookCleanupAnnotation] = ""
				conditions.MarkFalse(m, clusterv1.PreTerminateDeleteHookSucceededCondition, clusterv1.WaitingExternalHookReason, clusterv1.ConditionSeverityInfo, "")
			},
			check: func(g Gomega, r *Reconciler, _ *scope, c *etcdtest.Cluster) {
				gen := &etcd.Generator{DialPod: c.DialPod, DialTimeout: 5 * time.Second, CallTimeout: 5 * time.Second}
				cl, err := gen.ForNode(context.Background(), "node-0")
				g.Expect(err).NotTo(HaveOccurred())
				defer func() { _ = cl.Close() }()
				members, err := cl.Members(context.Background())
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(members).To(HaveLen(3), "node-2's member is not removed: node-0's would be alone of 2")
				m := &clusterv1.Machine{}
				g.Expect(r.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "m-2"}, m)).To(Succeed())
				g.Expect(m.Annotations).To(HaveKey(controlplanev1.PreTerminateHookCleanupAnnotation), "the Machine waits on its hook")
				g.Expect(events(r)).To(ContainElement(And(ContainSubstring("EtcdMemberRemovalDeferred"),
					ContainSubstring("1 of the 2 other etcd members answer (node-1 down), at least 2 required"))), "the wait says why")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			c := etcdtest.Start(t, 3)
			machines := func() []*clusterv1.Machine {
				var out []*clusterv1.Machine
				for i, node := range c.Nodes {
					m := machine(fmt.Sprintf("m-%d", i), time.Duration(3-i)*time.Hour, "")
					m.Namespace = "ns"
					m.Status.NodeRef = &corev1.ObjectReference{Name: node}
					if i == 2 && tt.change != nil {
						tt.change(m)
					}
					out = append(out, m)
				}
				return out
			}
			r, w := etcdReadsReconciler(t, c, machines())

			t.Log("a read that finds the 3 members healthy is kept")
			var readAt time.Time
			g.Eventually(func(g Gomega) {
				s := etcdReadsScope(w, 3, time.Now(), machines())
				r.inspectHealth(ctx, s)
				for _, m := range s.active() {
					g.Expect(conditions.IsTrue(m, controlplanev1.MachineEtcdMemberHealthyCondition)).To(BeTrue(),
						"%s: %v", m.Name, conditions.Get(m, controlplanev1.MachineEtcdMemberHealthyCondition))
				}
				g.Expect(s.etcdErrors).To(BeEmpty())
				readAt = s.now
			}, 60*time.Second, 500*time.Millisecond).Should(Succeed())
			g.Expect(r.etcdReads.reads).To(HaveKey(client.ObjectKey{Namespace: "ns", Name: "c"}), "the healthy read is kept for the next reconciles")

			t.Log("node-1's member dies; the next reconcile comes within the reuse window")
			c.Kill("node-1")
			s := etcdReadsScope(w, tt.replicas, readAt, machines())
			s.now = readAt.Add(time.Second)
			_, _ = r.reconcileControlPlane(ctx, s)
			tt.check(g, r, s, c)
		})
	}
}

// etcdReadsReconciler returns a Reconciler over a fake management cluster holding machines, and the
// workload cluster: a fake API server with the control plane Nodes and their static Pods, running and
// ready, and the real etcd cluster c.
func etcdReadsReconciler(t *testing.T, c *etcdtest.Cluster, machines []*clusterv1.Machine) (*Reconciler, *workload.Cluster) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, controlplanev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	var objs []client.Object
	for _, m := range machines {
		objs = append(objs, m.DeepCopy())
	}
	mgmt := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&clusterv1.Machine{}).Build()
	var workloadObjs []client.Object
	for _, node := range c.Nodes {
		workloadObjs = append(workloadObjs, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{workload.ControlPlaneNodeRoleLabel: ""}},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
		for _, component := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
			workloadObjs = append(workloadObjs, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: workload.StaticPodName(component, node)},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				}},
			})
		}
	}
	w := &workload.Cluster{
		Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(workloadObjs...).Build(),
		Etcd:   &etcd.Generator{DialPod: c.DialPod, DialTimeout: 5 * time.Second, CallTimeout: 5 * time.Second},
	}
	r := &Reconciler{Client: mgmt, APIReader: mgmt, EtcdHealthReuse: DefaultEtcdHealthReuse, recorder: record.NewFakeRecorder(100)}
	return r, w
}

// etcdReadsScope is a reconcile's scope of the initialized control plane of Cluster ns/c, with machines,
// connected to w.
func etcdReadsScope(w *workload.Cluster, replicas int32, now time.Time, machines []*clusterv1.Machine) *scope {
	s := testScope(nil, machines...)
	s.now = now
	s.cluster.Namespace, s.cluster.Name = "ns", "c"
	s.kcp.Namespace, s.kcp.Name = "ns", "c-cp"
	s.kcp.Spec.Replicas = ptr.To(replicas)
	s.kcp.Status.Initialized = true
	s.workload = w
	s.machineWriters = map[string]*machineWriter{}
	return s
}

// exists reports whether the Machine is still there and not being deleted.
func exists(g Gomega, r *Reconciler, name string) bool {
	m := &clusterv1.Machine{}
	err := r.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, m)
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return m.DeletionTimestamp.IsZero()
}

// events returns the events the Reconciler recorded so far.
func events(r *Reconciler) []string {
	var out []string
	for {
		select {
		case e := <-r.recorder.(*record.FakeRecorder).Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

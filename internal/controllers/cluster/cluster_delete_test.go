package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func held(obj client.Object, clusterName string, extraLabels ...string) client.Object {
	obj.SetFinalizers([]string{holdFinalizer})
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	for _, l := range extraLabels {
		labels[l] = ""
	}
	obj.SetLabels(labels)
	return obj
}

func machineSet(ns, name, clusterName string, md *clusterv1.MachineDeployment) *clusterv1.MachineSet {
	tmpl := builder.MachineDeployment(ns, name, clusterName, 1, builder.V1Beta1.InfraMachineTemplate(ns, "t"), nil)
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: clusterName, Replicas: ptr.To[int32](1),
			Selector: tmpl.Spec.Selector, Template: tmpl.Spec.Template,
		},
	}
	if md != nil {
		ms.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: md.Name, UID: md.UID, Controller: ptr.To(true),
		}}
	}
	return ms
}

// isDeleting reports whether obj is being deleted, or already gone.
func isDeleting(g Gomega, obj client.Object) bool {
	latest := obj.DeepCopyObject().(client.Object)
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), latest)
	if apierrors.IsNotFound(err) {
		return true
	}
	g.Expect(err).NotTo(HaveOccurred())
	return !latest.GetDeletionTimestamp().IsZero()
}

func release(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		update(t, obj, func(o client.Object) {
			o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == holdFinalizer }))
		})
	}
}

func gone(g Gomega, obj client.Object) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s should be gone", obj.GetName())
}

func TestDeletionOrder(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)

	infra := held(builder.V1Beta1.InfraCluster(ns, "infra"), "c1")
	cp := held(builder.V1Beta1.ControlPlane(ns, "cp"), "c1")
	create(t, infra, cp)
	cluster := builder.Cluster(ns, "c1", infra.(*unstructured.Unstructured), cp.(*unstructured.Unstructured))
	create(t, cluster)

	tmpl := builder.V1Beta1.InfraMachineTemplate(ns, "t")
	md0 := held(builder.MachineDeployment(ns, "md-0", "c1", 1, tmpl, nil), "c1").(*clusterv1.MachineDeployment)
	md1 := held(builder.MachineDeployment(ns, "md-1", "c1", 1, tmpl, nil), "c1")
	create(t, md0, md1)
	ms0 := held(machineSet(ns, "ms-0", "c1", md0), "c1").(*clusterv1.MachineSet)
	ms1 := held(machineSet(ns, "ms-1", "c1", nil), "c1")
	create(t, ms0, ms1)
	infraMachine := builder.V1Beta1.InfraMachine(ns, "im")
	w0 := held(builder.Machine(ns, "w-0", "c1", infraMachine, nil), "c1")
	w0.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: ms0.Name, UID: ms0.UID, Controller: ptr.To(true),
	}})
	w1 := held(builder.Machine(ns, "w-1", "c1", infraMachine, nil), "c1")
	cp0 := held(builder.Machine(ns, "cp-0", "c1", infraMachine, nil), "c1", clusterv1.MachineControlPlaneLabel)
	other := held(builder.Machine(ns, "other-0", "other", infraMachine, nil), "other")
	create(t, w0, w1, cp0, other)

	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
		for _, o := range []client.Object{infra, cp} {
			latest := o.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), latest)).To(Succeed())
			g.Expect(latest.GetOwnerReferences()).NotTo(BeEmpty())
		}
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())

	// stage checks that the Cluster deletes exactly the objects of one stage, says so, and holds back the
	// objects of the later stages.
	stage := func(name string, deleted, later []client.Object, message string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			for _, o := range deleted {
				g.Expect(isDeleting(g, o)).To(BeTrue(), "%s: %s should be deleting", name, o.GetName())
			}
			c := getCluster(g, cluster)
			g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseDeleting)))
			g.Expect(v1beta2Condition(c, clusterv1.ClusterDeletingV1Beta2Condition).Message).To(Equal(message))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), name)
		g.Consistently(func(g Gomega) {
			for _, o := range later {
				g.Expect(isDeleting(g, o)).To(BeFalse(), "%s: %s must wait", name, o.GetName())
			}
		}).WithTimeout(500*time.Millisecond).WithPolling(interval).Should(Succeed(), name)
	}

	stage("MachineDeployments", []client.Object{md0, md1}, []client.Object{ms0, ms1, w0, w1, cp0, cp, infra},
		"Waiting for MachineDeployments md-0, md-1 to be deleted")
	release(t, md0, md1)

	stage("MachineSets", []client.Object{ms0, ms1}, []client.Object{w0, w1, cp0, cp, infra},
		"Waiting for MachineSets ms-0, ms-1 to be deleted")
	release(t, ms0, ms1)

	stage("worker Machines", []client.Object{w0, w1}, []client.Object{cp0, cp, infra},
		"Waiting for Machines w-0, w-1 to be deleted")
	release(t, w0, w1)

	// The control plane deletes its own Machines: the Cluster deletes the control plane object only.
	stage("control plane", []client.Object{cp}, []client.Object{cp0, infra},
		"Waiting for GenericControlPlane cp to be deleted")
	// The progress of the control plane's deletion, which is no new step of the Cluster's, still reaches
	// the Cluster's status (at most DeletingStatusInterval after its last write).
	setStatus(t, cp.(*unstructured.Unstructured), map[string]any{"replicas": int64(7)})
	g.Eventually(func(g Gomega) {
		c := getCluster(g, cluster)
		g.Expect(c.Status.V1Beta2).NotTo(BeNil())
		g.Expect(c.Status.V1Beta2.ControlPlane).NotTo(BeNil())
		g.Expect(c.Status.V1Beta2.ControlPlane.Replicas).To(HaveValue(BeEquivalentTo(7)))
		g.Expect(v1beta2Condition(c, clusterv1.ClusterDeletingV1Beta2Condition).Message).To(Equal("Waiting for GenericControlPlane cp to be deleted"))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), "the control plane's counters while it is deleted")
	g.Expect(env.Client.Delete(ctx, cp0)).To(Succeed())
	release(t, cp0, cp)

	stage("infrastructure", []client.Object{infra}, nil,
		"Waiting for GenericInfrastructureCluster infra to be deleted")
	release(t, infra)

	g.Eventually(func(g Gomega) {
		gone(g, cluster)
		for _, o := range []client.Object{md0, md1, ms0, ms1, w0, w1, cp0, cp, infra} {
			gone(g, o)
		}
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(isDeleting(g, other)).To(BeFalse(), "a Machine of another Cluster is left alone")
}

func TestDeletionWithoutControlPlaneObject(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	infra := held(builder.V1Beta2.InfraCluster(ns, "infra"), "c1")
	create(t, infra)
	cluster := builder.Cluster(ns, "c1", infra.(*unstructured.Unstructured), nil)
	create(t, cluster)
	infraMachine := builder.V1Beta2.InfraMachine(ns, "im")
	w0 := held(builder.Machine(ns, "w-0", "c1", infraMachine, nil), "c1")
	cp0 := held(builder.Machine(ns, "cp-0", "c1", infraMachine, nil), "c1", clusterv1.MachineControlPlaneLabel)
	create(t, w0, cp0)
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, cluster).Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(env.Client.Delete(context.Background(), cluster)).To(Succeed())

	g.Eventually(func(g Gomega) { g.Expect(isDeleting(g, w0)).To(BeTrue()) }).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(isDeleting(g, cp0)).To(BeFalse(), "control plane Machines go after the workers")
	}).WithTimeout(500 * time.Millisecond).WithPolling(interval).Should(Succeed())
	release(t, w0)
	g.Eventually(func(g Gomega) {
		g.Expect(isDeleting(g, cp0)).To(BeTrue())
		g.Expect(v1beta2Condition(getCluster(g, cluster), clusterv1.ClusterDeletingV1Beta2Condition).Message).
			To(Equal("Waiting for control plane Machine cp-0 to be deleted"))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	g.Expect(isDeleting(g, infra)).To(BeFalse())
	release(t, cp0)
	g.Eventually(func(g Gomega) { g.Expect(isDeleting(g, infra)).To(BeTrue()) }).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	release(t, infra)
	g.Eventually(func(g Gomega) { gone(g, cluster) }).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

func TestPlanDeletion(t *testing.T) {
	deleting := &metav1.Time{Time: time.Now()}
	md := func(name string, d *metav1.Time) clusterv1.MachineDeployment {
		return clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), DeletionTimestamp: d}}
	}
	ms := func(name string, owner *clusterv1.MachineDeployment) clusterv1.MachineSet {
		s := clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name)}}
		if owner != nil {
			s.OwnerReferences = []metav1.OwnerReference{{Kind: "MachineDeployment", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
		}
		return s
	}
	machine := func(name string, owner *clusterv1.MachineSet) clusterv1.Machine {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if owner != nil {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "MachineSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
		}
		return m
	}
	object := func(kind, name string, d *metav1.Time) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetName(name)
		if d != nil {
			u.SetDeletionTimestamp(d)
		}
		return u
	}
	withCP := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{
		InfrastructureRef: &corev1.ObjectReference{Kind: "FooCluster", Name: "infra"},
		ControlPlaneRef:   &corev1.ObjectReference{Kind: "FooControlPlane", Name: "cp"},
	}}
	withoutCP := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: &corev1.ObjectReference{Kind: "FooCluster", Name: "infra"}}}
	md0 := md("md-0", nil)
	ms0 := ms("ms-0", &md0)
	existingCP := externalObject{obj: object("FooControlPlane", "cp", nil)}
	existingInfra := externalObject{obj: object("FooCluster", "infra", nil)}
	many := []clusterv1.MachineDeployment{md("a", nil), md("b", nil), md("c", nil), md("d", nil), md("e", nil), md("f", nil), md("g", nil)}

	tests := []struct {
		name        string
		cluster     *clusterv1.Cluster
		descendants descendants
		cp, infra   externalObject
		wantReason  string
		wantMessage string
		wantDelete  []string
		wantDone    bool
	}{
		{
			name:        "MachineDeployments first; one already deleting is not deleted again",
			cluster:     withCP,
			descendants: descendants{machineDeployments: []clusterv1.MachineDeployment{md0, md("md-1", deleting)}, machineSets: []clusterv1.MachineSet{ms0}, workerMachines: []clusterv1.Machine{machine("w-0", nil)}},
			cp:          existingCP, infra: existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason,
			wantMessage: "Waiting for MachineDeployments md-0, md-1 to be deleted",
			wantDelete:  []string{"MachineDeployment md-0"},
		},
		{
			name:        "many names are counted",
			cluster:     withCP,
			descendants: descendants{machineDeployments: many},
			cp:          existingCP, infra: existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason,
			wantMessage: "Waiting for MachineDeployments a, b, c, d, e, ... (2 more) to be deleted",
			wantDelete:  []string{"MachineDeployment a", "MachineDeployment b", "MachineDeployment c", "MachineDeployment d", "MachineDeployment e", "MachineDeployment f", "MachineDeployment g"},
		},
		{
			name:        "MachineSets whose MachineDeployment is gone",
			cluster:     withCP,
			descendants: descendants{machineSets: []clusterv1.MachineSet{ms0, ms("ms-1", nil)}, workerMachines: []clusterv1.Machine{machine("w-0", &ms0)}},
			cp:          existingCP, infra: existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason,
			wantMessage: "Waiting for MachineSets ms-0, ms-1 to be deleted",
			wantDelete:  []string{"MachineSet ms-0", "MachineSet ms-1"},
		},
		{
			name:        "worker Machines, not the control plane's",
			cluster:     withCP,
			descendants: descendants{workerMachines: []clusterv1.Machine{machine("w-0", &ms0)}, controlPlaneMachines: []clusterv1.Machine{machine("cp-0", nil)}},
			cp:          existingCP, infra: existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason,
			wantMessage: "Waiting for Machine w-0 to be deleted",
			wantDelete:  []string{"Machine w-0"},
		},
		{
			name:        "the control plane object deletes its own Machines",
			cluster:     withCP,
			descendants: descendants{controlPlaneMachines: []clusterv1.Machine{machine("cp-0", nil)}},
			cp:          existingCP, infra: existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason,
			wantMessage: "Waiting for FooControlPlane cp to be deleted",
			wantDelete:  []string{"FooControlPlane cp"},
		},
		{
			name:        "control plane Machines without control plane object",
			cluster:     withoutCP,
			descendants: descendants{controlPlaneMachines: []clusterv1.Machine{machine("cp-0", nil)}},
			infra:       existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason,
			wantMessage: "Waiting for control plane Machine cp-0 to be deleted",
			wantDelete:  []string{"Machine cp-0"},
		},
		{
			name:        "a control plane being deleted is waited for",
			cluster:     withCP,
			cp:          externalObject{obj: object("FooControlPlane", "cp", deleting)},
			infra:       existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason,
			wantMessage: "Waiting for FooControlPlane cp to be deleted",
		},
		{
			name:        "a control plane that cannot be read blocks the InfraCluster",
			cluster:     withCP,
			infra:       existingInfra,
			wantReason:  clusterv1.ClusterDeletingInternalErrorV1Beta2Reason,
			wantMessage: "Please check controller logs for errors",
		},
		{
			name:        "the InfraCluster last",
			cluster:     withCP,
			cp:          externalObject{notFound: true},
			infra:       existingInfra,
			wantReason:  clusterv1.ClusterDeletingWaitingForInfrastructureDeletionV1Beta2Reason,
			wantMessage: "Waiting for FooCluster infra to be deleted",
			wantDelete:  []string{"FooCluster infra"},
		},
		{
			name:        "done",
			cluster:     withCP,
			cp:          externalObject{notFound: true},
			infra:       externalObject{notFound: true},
			wantReason:  clusterv1.ClusterDeletingDeletionCompletedV1Beta2Reason,
			wantMessage: "Deletion completed",
			wantDone:    true,
		},
		{
			name:        "done without references",
			cluster:     &clusterv1.Cluster{},
			wantReason:  clusterv1.ClusterDeletingDeletionCompletedV1Beta2Reason,
			wantMessage: "Deletion completed",
			wantDone:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			step := planDeletion(tt.cluster, tt.descendants, tt.cp, tt.infra)
			g.Expect(step.reason).To(Equal(tt.wantReason))
			g.Expect(step.message).To(Equal(tt.wantMessage))
			g.Expect(step.done).To(Equal(tt.wantDone))
			var got []string
			for _, o := range step.toDelete {
				got = append(got, o.kind+" "+o.obj.GetName())
			}
			g.Expect(got).To(Equal(tt.wantDelete), cmp.Diff(tt.wantDelete, got))
		})
	}
}

// TestDeletePollGoesAtLowPriority checks that the look at a deleting Cluster's descendants is queued behind
// the events of other Clusters (so that with many Clusters deleting at once the polls do not hold back the
// deletions' events), and that a sooner requeue of another phase keeps its own priority.
func TestDeletePollGoesAtLowPriority(t *testing.T) {
	g := NewWithT(t)
	r := &Reconciler{}
	poll := func(context.Context, *scope) (ctrl.Result, error) { return r.deletePoll(), nil }
	after := func(d time.Duration) func(context.Context, *scope) (ctrl.Result, error) {
		return func(context.Context, *scope) (ctrl.Result, error) { return ctrl.Result{RequeueAfter: d}, nil }
	}

	res, err := reconciler.RunPhasesWith(context.Background(), &scope{}, reconciler.PhaseOptions{All: true}, after(30*time.Second), poll)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(5 * time.Second))
	g.Expect(res.Priority).To(HaveValue(Equal(handler.LowPriority)))

	res, err = reconciler.RunPhasesWith(context.Background(), &scope{}, reconciler.PhaseOptions{All: true}, poll, after(time.Second))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	g.Expect(res.Priority).To(BeNil(), "a requeue sooner than the poll is not one to put off")
}

// TestHoldBackDeletingStatus: a deleting Cluster writes a new step of its deletion at once, and the rest
// of its status at most once per interval.
func TestHoldBackDeletingStatus(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	status := func(phase, reason, message string, replicas int32) *clusterv1.ClusterStatus {
		return &clusterv1.ClusterStatus{Phase: phase, V1Beta2: &clusterv1.ClusterV1Beta2Status{
			Conditions:   []metav1.Condition{{Type: clusterv1.ClusterDeletingV1Beta2Condition, Status: metav1.ConditionTrue, Reason: reason, Message: message}},
			ControlPlane: &clusterv1.ClusterControlPlaneStatus{Replicas: ptr.To(replicas)},
		}}
	}
	waitingForWorkers := status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for MachineDeployment md to be deleted", 1)
	tests := []struct {
		name          string
		before, after *clusterv1.ClusterStatus
		lastWrite     time.Time
		want          time.Duration
	}{
		{"the first write of the deletion: a new phase", &clusterv1.ClusterStatus{Phase: "Provisioned"}, waitingForWorkers, now.Add(-time.Second), 0},
		{"a new step: what the deletion waits for", waitingForWorkers,
			status("Deleting", clusterv1.ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason, "Waiting for KubeadmControlPlane cp to be deleted", 1), now.Add(-time.Second), 0},
		{"fewer objects to wait for", status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for Machines m-0, m-1 to be deleted", 1),
			status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for Machine m-1 to be deleted", 1), now.Add(-time.Second), 0},
		{"progress 3s after the last write", waitingForWorkers, status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for MachineDeployment md to be deleted", 0),
			now.Add(-3 * time.Second), 7 * time.Second},
		{"progress 10s after the last write", waitingForWorkers, status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for MachineDeployment md to be deleted", 0),
			now.Add(-10 * time.Second), 0},
		{"progress with no write remembered (a restarted manager)", waitingForWorkers, status("Deleting", clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason, "Waiting for MachineDeployment md to be deleted", 0),
			time.Time{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(holdBackDeletingStatus(tt.before, tt.after, tt.lastWrite, now, 10*time.Second)).To(Equal(tt.want))
		})
	}
}

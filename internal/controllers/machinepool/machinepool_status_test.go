package machinepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

func TestSetPhase(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name        string
		replicas    *int32
		annotations map[string]string
		status      clusterv1.MachinePoolStatus
		deleting    bool
		want        clusterv1.MachinePoolPhase
	}{
		{name: "new", want: clusterv1.MachinePoolPhasePending},
		{name: "bootstrap ready", status: clusterv1.MachinePoolStatus{BootstrapReady: true}, want: clusterv1.MachinePoolPhaseProvisioning},
		{name: "some Nodes, infrastructure not ready", status: clusterv1.MachinePoolStatus{BootstrapReady: true, NodeRefs: []corev1.ObjectReference{{Name: "n"}}},
			want: clusterv1.MachinePoolPhaseProvisioned},
		{name: "as many Ready Nodes as replicas", replicas: ptr.To[int32](2), status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 2},
			want: clusterv1.MachinePoolPhaseRunning},
		{name: "fewer Ready Nodes", replicas: ptr.To[int32](3), status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 2},
			want: clusterv1.MachinePoolPhaseScalingUp},
		{name: "more Ready Nodes", replicas: ptr.To[int32](1), status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 2},
			want: clusterv1.MachinePoolPhaseScalingDown},
		{name: "resized by an autoscaler", replicas: ptr.To[int32](1), annotations: map[string]string{clusterv1.ReplicasManagedByAnnotation: ""},
			status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 2}, want: clusterv1.MachinePoolPhaseScaling},
		{name: "failed", replicas: ptr.To[int32](1), status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 1, FailureMessage: ptr.To("x")},
			want: clusterv1.MachinePoolPhaseFailed},
		{name: "deleting", replicas: ptr.To[int32](1), status: clusterv1.MachinePoolStatus{InfrastructureReady: true, ReadyReplicas: 1}, deleting: true,
			want: clusterv1.MachinePoolPhaseDeleting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}, Spec: clusterv1.MachinePoolSpec{Replicas: tt.replicas}, Status: tt.status}
			if tt.deleting {
				mp.DeletionTimestamp = &now
			}
			setPhase(mp)
			g.Expect(mp.Status.Phase).To(Equal(string(tt.want)))
		})
	}
}

func infraPool(ready bool, extra map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"ready": ready}}}
	for k, v := range extra {
		u.Object["status"].(map[string]any)[k] = v
	}
	u.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	u.SetKind("FooMachinePool")
	u.SetName("pool")
	return u
}

func TestSetStatus(t *testing.T) {
	pool := func() *clusterv1.MachinePool {
		return &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Name: "pool", Generation: 3},
			Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](2), Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("data")},
				InfrastructureRef: corev1.ObjectReference{Kind: "FooMachinePool", Name: "pool"},
			}}},
		}
	}
	tests := []struct {
		name  string
		scope func(mp *clusterv1.MachinePool) *scope
		check func(g Gomega, mp *clusterv1.MachinePool)
	}{
		{
			name: "ready pool with all its Nodes",
			scope: func(mp *clusterv1.MachinePool) *scope {
				return &scope{mp: mp,
					infra: providerFacts{obj: infraPool(true, nil), ready: true, replicas: 2, replicasFound: true},
					nodes: &nodeFacts{refs: []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}, ready: 2, available: 2,
						versions: []clusterv1.StatusVersion{{Version: "v1.33.1", Replicas: 2}}}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.33.1", Replicas: 2}}), "the Nodes' versions")
				g.Expect(mp.Status.Replicas).To(BeEquivalentTo(2))
				g.Expect(mp.Status.UnavailableReplicas).To(BeEquivalentTo(0))
				g.Expect(mp.Status.ObservedGeneration).To(BeEquivalentTo(3))
				g.Expect(mp.Status.Phase).To(Equal("Running"))
				g.Expect(conditions.IsTrue(mp, clusterv1.ReadyCondition)).To(BeTrue())
				g.Expect(conditions.IsTrue(mp, clusterv1.ReplicasReadyCondition)).To(BeTrue())
				g.Expect(conditions.IsV1Beta2True(mp, clusterv1.MachinePoolAvailableV1Beta2Condition)).To(BeTrue())
				g.Expect(conditions.GetV1Beta2(mp, clusterv1.MachinePoolBootstrapConfigReadyV1Beta2Condition)).To(
					HaveField("Reason", clusterv1.MachineBootstrapDataSecretProvidedV1Beta2Reason))
				g.Expect(conditions.IsV1Beta2True(mp, clusterv1.MachinePoolScalingUpV1Beta2Condition)).To(BeFalse())
				g.Expect(mp.Status.V1Beta2.ReadyReplicas).To(HaveValue(BeEquivalentTo(2)))
				g.Expect(mp.Status.V1Beta2.UpToDateReplicas).To(HaveValue(BeEquivalentTo(2)))
			},
		},
		{
			name: "a Node not Ready",
			scope: func(mp *clusterv1.MachinePool) *scope {
				return &scope{mp: mp,
					infra: providerFacts{obj: infraPool(true, nil), ready: true, replicas: 2, replicasFound: true},
					nodes: &nodeFacts{refs: []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}, ready: 1, available: 1}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.Phase).To(Equal("ScalingUp"))
				g.Expect(conditions.Get(mp, clusterv1.ReplicasReadyCondition)).To(HaveField("Reason", clusterv1.WaitingForReplicasReadyReason))
				g.Expect(conditions.IsTrue(mp, clusterv1.ReadyCondition)).To(BeFalse())
				available := conditions.GetV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition)
				g.Expect(available).To(HaveField("Message", "1 available replicas, at least 2 required"))
				g.Expect(conditions.GetV1Beta2(mp, clusterv1.MachinePoolScalingUpV1Beta2Condition)).To(
					HaveField("Message", "Scaling up from 1 to 2 replicas"))
				g.Expect(mp.Status.UnavailableReplicas).To(BeEquivalentTo(1))
			},
		},
		{
			name: "the InfraMachinePool's Ready condition is mirrored",
			scope: func(mp *clusterv1.MachinePool) *scope {
				obj := infraPool(false, map[string]any{"conditions": []any{map[string]any{
					"type": "Ready", "status": "False", "reason": "QuotaExceeded", "severity": "Warning", "message": "No more instances",
				}}})
				mp.Status.Versions = []clusterv1.StatusVersion{{Version: "v1.33.1", Replicas: 2}}
				return &scope{mp: mp, infra: providerFacts{obj: obj}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.33.1", Replicas: 2}}),
					"kept when neither the Nodes nor the Machines were read")
				c := conditions.Get(mp, clusterv1.InfrastructureReadyCondition)
				g.Expect(c).To(HaveField("Reason", "QuotaExceeded"))
				g.Expect(c).To(HaveField("Severity", clusterv1.ConditionSeverityWarning))
				v2 := conditions.GetV1Beta2(mp, clusterv1.MachinePoolInfrastructureReadyV1Beta2Condition)
				g.Expect(v2).To(HaveField("Message", "No more instances"))
				g.Expect(mp.Status.Phase).To(Equal("Provisioning"))
			},
		},
		{
			name: "a terminal failure of the InfraMachinePool",
			scope: func(mp *clusterv1.MachinePool) *scope {
				return &scope{mp: mp, infra: providerFacts{obj: infraPool(false, nil), failureReason: "InvalidConfiguration", failureMessage: "bad zone"}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.FailureReason).To(HaveValue(BeEquivalentTo("InvalidConfiguration")))
				g.Expect(mp.Status.FailureMessage).To(HaveValue(ContainSubstring("bad zone")))
				g.Expect(mp.Status.Phase).To(Equal("Failed"))
			},
		},
		{
			name: "the InfraMachinePool deleted after it was ready",
			scope: func(mp *clusterv1.MachinePool) *scope {
				mp.Status.InfrastructureReady = true
				return &scope{mp: mp, infra: providerFacts{notFound: true}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.FailureReason).To(HaveValue(Equal(clusterv1.InvalidConfigurationMachinePoolError)))
				g.Expect(mp.Status.FailureMessage).To(HaveValue(ContainSubstring("has been deleted after being ready")))
			},
		},
		{
			name: "MachinePool Machines count the v1beta2 replicas",
			scope: func(mp *clusterv1.MachinePool) *scope {
				ready := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: ptr.To("v1.33.1")}}
				conditions.SetV1Beta2(ready, metav1.Condition{Type: clusterv1.MachineReadyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: "Ready"})
				notUpToDate := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: ptr.To("v1.33.1")},
					Status: clusterv1.MachineStatus{NodeInfo: &corev1.NodeSystemInfo{KubeletVersion: "v1.32.4"}}}
				conditions.SetV1Beta2(notUpToDate, metav1.Condition{Type: clusterv1.MachineUpToDateV1Beta2Condition, Status: metav1.ConditionFalse, Reason: "NotUpToDate"})
				// The Nodes were read too: the Machines' versions win, as upstream.
				return &scope{mp: mp, machinesRead: true, machines: []clusterv1.Machine{*ready, *notUpToDate},
					nodes: &nodeFacts{versions: []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 2}}}}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 1}, {Version: "v1.33.1", Replicas: 1}}))
				g.Expect(mp.Status.V1Beta2.ReadyReplicas).To(HaveValue(BeEquivalentTo(1)))
				g.Expect(mp.Status.V1Beta2.AvailableReplicas).To(HaveValue(BeEquivalentTo(0)))
				g.Expect(mp.Status.V1Beta2.UpToDateReplicas).To(HaveValue(BeEquivalentTo(1)))
			},
		},
		{
			name: "deleting",
			scope: func(mp *clusterv1.MachinePool) *scope {
				now := metav1.Now()
				mp.DeletionTimestamp = &now
				mp.Status.InfrastructureReady, mp.Status.Replicas = true, 2
				return &scope{mp: mp, deletingMessage: "Waiting for 2 Machines to be deleted"}
			},
			check: func(g Gomega, mp *clusterv1.MachinePool) {
				g.Expect(mp.Status.Phase).To(Equal("Deleting"))
				g.Expect(mp.Status.Replicas).To(BeEquivalentTo(2), "kept while deleting")
				g.Expect(conditions.GetV1Beta2(mp, clusterv1.MachinePoolDeletingV1Beta2Condition)).To(
					HaveField("Message", "Waiting for 2 Machines to be deleted"))
				g.Expect(conditions.GetV1Beta2(mp, clusterv1.MachinePoolAvailableV1Beta2Condition)).To(
					HaveField("Reason", clusterv1.MachinePoolAvailableDeletingV1Beta2Reason))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mp := pool()
			setStatus(tt.scope(mp), time.Now())
			tt.check(g, mp)
		})
	}
}

func TestNodeRefsOf(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	node := func(name string, ready corev1.ConditionStatus, since time.Duration) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastTransitionTime: metav1.NewTime(now.Add(-since))}}}}
	}
	byID := map[string]*corev1.Node{
		"p://a": node("a", corev1.ConditionTrue, time.Minute),
		"p://b": node("b", corev1.ConditionTrue, time.Second),
		"p://c": node("c", corev1.ConditionFalse, time.Minute),
	}
	f := nodeRefsOf([]string{"p://a", "p://b", "p://c", "p://missing"}, byID, 30, now)
	g.Expect(f.refs).To(HaveLen(3))
	g.Expect(f.refs[0]).To(Equal(corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "a", UID: "uid-a"}))
	g.Expect(f.ready).To(BeEquivalentTo(2))
	g.Expect(f.available).To(BeEquivalentTo(1), "b has been Ready for less than minReadySeconds")
}

// The pool's status.versions are its Nodes' kubelet versions, as upstream's versionsFromNodeRefs: each
// Node of spec.providerIDList, Ready or not, counts once.
func TestNodeRefsOfVersions(t *testing.T) {
	node := func(name, kubelet string, ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	byID := map[string]*corev1.Node{
		"p://a": node("a", "v1.33.1", corev1.ConditionTrue),
		"p://b": node("b", "v1.32.4", corev1.ConditionTrue),
		"p://c": node("c", "v1.33.1", corev1.ConditionFalse),
		"p://d": node("d", "", corev1.ConditionTrue),
		"p://e": node("e", "v1.32.4", corev1.ConditionTrue), // not in the pool
	}
	tests := []struct {
		name        string
		providerIDs []string
		want        []clusterv1.StatusVersion
	}{
		{name: "no Nodes", providerIDs: nil, want: nil},
		{name: "Nodes not found yet", providerIDs: []string{"p://missing"}, want: nil},
		{name: "a Node without a kubelet version yet", providerIDs: []string{"p://d"}, want: nil},
		{
			name:        "counted by version, oldest first",
			providerIDs: []string{"p://a", "p://b", "p://c", "p://d", "p://missing"},
			want:        []clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 1}, {Version: "v1.33.1", Replicas: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeRefsOf(tt.providerIDs, byID, 0, time.Now()).versions
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
		})
	}
}

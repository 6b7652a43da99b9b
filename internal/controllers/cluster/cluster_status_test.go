package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
)

var (
	infraRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "FooCluster", Name: "infra"}
	cpRef    = &corev1.ObjectReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "FooControlPlane", Name: "cp"}
	now      = &metav1.Time{Time: time.Now()}
)

func providerObject(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: kind})
	u.SetName("infra")
	return u
}

// condition returns a v1beta2 condition without the fields the clock and the generation set.
func condition(c *clusterv1.Cluster, t string) metav1.Condition {
	cond := conditions.GetV1Beta2(c, t)
	if cond == nil {
		return metav1.Condition{}
	}
	out := *cond
	out.LastTransitionTime, out.ObservedGeneration = metav1.Time{}, 0
	return out
}

func v1beta1Condition(c *clusterv1.Cluster, t clusterv1.ConditionType) clusterv1.Condition {
	cond := conditions.Get(c, t)
	if cond == nil {
		return clusterv1.Condition{}
	}
	out := *cond
	out.LastTransitionTime = metav1.Time{}
	return out
}

func TestComputePhase(t *testing.T) {
	tests := []struct {
		name    string
		cluster clusterv1.Cluster
		want    clusterv1.ClusterPhase
	}{
		{name: "nothing referenced", want: clusterv1.ClusterPhasePending},
		{name: "infrastructure referenced", cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}}, want: clusterv1.ClusterPhaseProvisioning},
		{name: "control plane referenced", cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}}, want: clusterv1.ClusterPhaseProvisioning},
		{
			name: "infrastructure ready without endpoint",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef},
				Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			want: clusterv1.ClusterPhaseProvisioning,
		},
		{
			name: "infrastructure ready with endpoint",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "h", Port: 1}},
				Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			want: clusterv1.ClusterPhaseProvisioned,
		},
		{
			name: "failed",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "h", Port: 1}},
				Status: clusterv1.ClusterStatus{InfrastructureReady: true, FailureMessage: ptr.To("boom")}},
			want: clusterv1.ClusterPhaseFailed,
		},
		{
			name: "deleting wins",
			cluster: clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now},
				Status: clusterv1.ClusterStatus{FailureReason: ptr.To(clusterv1.CreateClusterError)}},
			want: clusterv1.ClusterPhaseDeleting,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(computePhase(&tt.cluster)).To(Equal(tt.want))
		})
	}
}

func TestSetInfrastructureStatus(t *testing.T) {
	fds := clusterv1.FailureDomains{"a": {ControlPlane: true}}
	tests := []struct {
		name   string
		before clusterv1.ClusterStatus
		spec   clusterv1.ClusterSpec
		infra  externalObject
		want   clusterv1.ClusterStatus
	}{
		{
			name: "no InfraCluster: ready",
			want: clusterv1.ClusterStatus{InfrastructureReady: true},
		},
		{
			// Upstream's Cluster controller waits for the topology controller before it looks at the
			// infrastructure; infrastructureReady set now would stay true while the InfraCluster is made.
			name: "topology not generated yet: not ready",
			spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}},
			want: clusterv1.ClusterStatus{},
		},
		{
			name:  "not provisioned: failure domains wait",
			spec:  clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			infra: externalObject{obj: providerObject("FooCluster"), failureDomains: fds},
			want:  clusterv1.ClusterStatus{},
		},
		{
			name:  "provisioned",
			spec:  clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			infra: externalObject{obj: providerObject("FooCluster"), ready: true, failureDomains: fds},
			want:  clusterv1.ClusterStatus{InfrastructureReady: true, FailureDomains: fds},
		},
		{
			name:   "ready stays ready",
			spec:   clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			before: clusterv1.ClusterStatus{InfrastructureReady: true, FailureDomains: fds},
			infra:  externalObject{obj: providerObject("FooCluster")},
			want:   clusterv1.ClusterStatus{InfrastructureReady: true, FailureDomains: fds},
		},
		{
			name:  "terminal failure",
			spec:  clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			infra: externalObject{obj: providerObject("FooCluster"), failureReason: "CreateError", failureMessage: "No quota"},
			want: clusterv1.ClusterStatus{FailureReason: ptr.To(clusterv1.CreateClusterError),
				FailureMessage: ptr.To(`Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, Kind=FooCluster with name "infra": No quota`)},
		},
		{
			name:   "a failure is never cleared",
			spec:   clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			before: clusterv1.ClusterStatus{FailureReason: ptr.To(clusterv1.CreateClusterError)},
			infra:  externalObject{obj: providerObject("FooCluster")},
			want:   clusterv1.ClusterStatus{FailureReason: ptr.To(clusterv1.CreateClusterError)},
		},
		{
			name:   "unreadable: unchanged",
			spec:   clusterv1.ClusterSpec{InfrastructureRef: infraRef},
			before: clusterv1.ClusterStatus{InfrastructureReady: true},
			want:   clusterv1.ClusterStatus{InfrastructureReady: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterv1.Cluster{Spec: tt.spec, Status: tt.before}
			setInfrastructureStatus(c, tt.infra)
			NewWithT(t).Expect(c.Status).To(Equal(tt.want), cmp.Diff(tt.want, c.Status))
			setV1Beta1InfrastructureReadyCondition(c, tt.infra)
			if tt.spec.Topology != nil {
				NewWithT(t).Expect(conditions.Get(c, clusterv1.InfrastructureReadyCondition)).To(BeNil(), "no InfrastructureReady condition before the topology is generated")
			}
		})
	}
}

func TestV1Beta1Conditions(t *testing.T) {
	cpWarning := &contract.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Warning", Reason: "ScalingUp", Message: "Scaling up"}
	tests := []struct {
		name                 string
		cluster              clusterv1.Cluster
		infra, cp            externalObject
		descendants          descendants
		wantInfra, wantCP    clusterv1.Condition
		wantInit, wantReady  clusterv1.Condition
		noControlPlaneReady  bool
		noDescendantsRead    bool
		initializedBefore    bool
		wantNoInitializedSet bool
	}{
		{
			name:      "InfraCluster without Ready condition, not provisioned",
			cluster:   clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:     externalObject{obj: providerObject("FooCluster")},
			wantInfra: clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForInfrastructure"},
			wantInit: clusterv1.Condition{Type: "ControlPlaneInitialized", Status: corev1.ConditionFalse, Severity: "Info", Reason: "MissingNodeRef",
				Message: "Waiting for the first control plane machine to have its status.nodeRef set"},
			wantReady:           clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForInfrastructure"},
			noControlPlaneReady: true,
		},
		{
			name:    "mirrors the Ready conditions; a control plane Machine with a Node initializes a Cluster without control plane object",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: providerObject("FooCluster"), ready: true, readyCondition: &contract.Condition{Type: "Ready", Status: corev1.ConditionTrue}},
			descendants: descendants{controlPlaneMachines: []clusterv1.Machine{
				{Status: clusterv1.MachineStatus{}}, {Status: clusterv1.MachineStatus{NodeRef: &corev1.ObjectReference{Name: "n"}}},
			}},
			wantInfra:           clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionTrue},
			wantInit:            clusterv1.Condition{Type: "ControlPlaneInitialized", Status: corev1.ConditionTrue},
			wantReady:           clusterv1.Condition{Type: "Ready", Status: corev1.ConditionTrue},
			noControlPlaneReady: true,
		},
		{
			name:      "control plane Ready condition mirrored with its severity",
			cluster:   clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneRef: cpRef}},
			infra:     externalObject{obj: providerObject("FooCluster"), ready: true},
			cp:        externalObject{obj: providerObject("FooControlPlane"), initialized: true, readyCondition: cpWarning},
			wantInfra: clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionTrue},
			wantCP:    clusterv1.Condition{Type: "ControlPlaneReady", Status: corev1.ConditionFalse, Severity: "Warning", Reason: "ScalingUp", Message: "Scaling up"},
			wantInit:  clusterv1.Condition{Type: "ControlPlaneInitialized", Status: corev1.ConditionTrue},
			wantReady: clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Warning", Reason: "ScalingUp", Message: "Scaling up"},
		},
		{
			name:      "control plane not initialized, InfraCluster missing",
			cluster:   clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef, ControlPlaneRef: cpRef}},
			infra:     externalObject{notFound: true},
			cp:        externalObject{obj: providerObject("FooControlPlane")},
			wantInfra: clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForInfrastructure", Message: "FooCluster infra does not exist"},
			wantCP:    clusterv1.Condition{Type: "ControlPlaneReady", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForControlPlane"},
			wantInit: clusterv1.Condition{Type: "ControlPlaneInitialized", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForControlPlaneProviderInitialized",
				Message: "Waiting for control plane provider to indicate the control plane has been initialized"},
			wantReady: clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Info", Reason: "WaitingForControlPlane"},
		},
		{
			name: "InfraCluster deleted after it was ready",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef},
				Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			infra:               externalObject{notFound: true},
			wantInfra:           clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionFalse, Severity: "Error", Reason: "Deleted", Message: "FooCluster infra has been deleted while the Cluster still exists"},
			wantReady:           clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Error", Reason: "Deleted", Message: "FooCluster infra has been deleted while the Cluster still exists"},
			noControlPlaneReady: true,
			initializedBefore:   true,
			wantInit:            clusterv1.Condition{Type: "ControlPlaneInitialized", Status: corev1.ConditionTrue},
		},
		{
			name:                 "deleting without Ready condition",
			cluster:              clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now}, Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:                externalObject{obj: providerObject("FooCluster")},
			wantInfra:            clusterv1.Condition{Type: "InfrastructureReady", Status: corev1.ConditionFalse, Severity: "Info", Reason: "Deleting"},
			wantReady:            clusterv1.Condition{Type: "Ready", Status: corev1.ConditionFalse, Severity: "Info", Reason: "Deleting"},
			noControlPlaneReady:  true,
			noDescendantsRead:    true,
			wantNoInitializedSet: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tt.cluster.DeepCopy()
			if tt.initializedBefore {
				conditions.MarkTrue(c, clusterv1.ControlPlaneInitializedCondition)
			}
			setInfrastructureStatus(c, tt.infra)
			setV1Beta1InfrastructureReadyCondition(c, tt.infra)
			setV1Beta1ControlPlaneReadyCondition(c, tt.cp)
			setV1Beta1ControlPlaneInitializedCondition(c, tt.cp, tt.descendants, !tt.noDescendantsRead)
			conditions.SetSummary(c, clusterv1.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition)

			g.Expect(v1beta1Condition(c, "InfrastructureReady")).To(Equal(tt.wantInfra), cmp.Diff(tt.wantInfra, v1beta1Condition(c, "InfrastructureReady")))
			if tt.noControlPlaneReady {
				g.Expect(conditions.Get(c, clusterv1.ControlPlaneReadyCondition)).To(BeNil())
			} else {
				g.Expect(v1beta1Condition(c, "ControlPlaneReady")).To(Equal(tt.wantCP), cmp.Diff(tt.wantCP, v1beta1Condition(c, "ControlPlaneReady")))
			}
			if tt.wantNoInitializedSet {
				g.Expect(conditions.Get(c, clusterv1.ControlPlaneInitializedCondition)).To(BeNil())
			} else {
				g.Expect(v1beta1Condition(c, "ControlPlaneInitialized")).To(Equal(tt.wantInit), cmp.Diff(tt.wantInit, v1beta1Condition(c, "ControlPlaneInitialized")))
			}
			g.Expect(v1beta1Condition(c, "Ready")).To(Equal(tt.wantReady), cmp.Diff(tt.wantReady, v1beta1Condition(c, "Ready")))
		})
	}
}

func TestInfrastructureReadyCondition(t *testing.T) {
	v1beta2Infra := providerObject("FooCluster")
	tests := []struct {
		name    string
		cluster clusterv1.Cluster
		infra   externalObject
		want    metav1.Condition
	}{
		{
			name: "no InfraCluster",
			want: metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionTrue, Reason: "DoesNotExist"},
		},
		{
			name:    "no InfraCluster yet: the topology is not reconciled",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}}},
			want: metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "DoesNotExist",
				Message: "Waiting for cluster topology to be reconciled"},
		},
		{
			name:    "mirrors a v1beta2 Ready condition",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra: externalObject{obj: v1beta2Infra, v1beta2Condition: &contract.Condition{Type: "Ready", Status: corev1.ConditionFalse,
				Reason: "LoadBalancerProvisioning", Message: "Waiting for the load balancer"}},
			want: metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "LoadBalancerProvisioning", Message: "Waiting for the load balancer"},
		},
		{
			name:    "a true v1beta1 Ready condition without reason",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: v1beta2Infra, v1beta2Condition: &contract.Condition{Type: "Ready", Status: corev1.ConditionTrue}},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionTrue, Reason: "Ready"},
		},
		{
			name:    "a false condition without reason",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: v1beta2Infra, v1beta2Condition: &contract.Condition{Type: "Ready", Status: corev1.ConditionFalse}},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "NoReasonReported"},
		},
		{
			name:    "no condition, v1beta1 contract, not provisioned",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: v1beta2Infra, contract: contract.V1Beta1},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "NotReady", Message: "FooCluster status.ready is false"},
		},
		{
			name:    "no condition, v1beta2 contract, not provisioned",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: v1beta2Infra, contract: contract.V1Beta2},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "NotReady", Message: "FooCluster status.initialization.provisioned is false"},
		},
		{
			name:    "no condition, provisioned",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}, Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			infra:   externalObject{obj: v1beta2Infra, contract: contract.V1Beta2},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionTrue, Reason: "Ready"},
		},
		{
			name:    "invalid condition",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{obj: v1beta2Infra, conditionError: errors.New("status \"Yes\" is not True, False or Unknown")},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionUnknown, Reason: "InvalidConditionReported", Message: "status \"Yes\" is not True, False or Unknown"},
		},
		{
			name:    "cannot be read",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
		},
		{
			name:    "does not exist yet",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}},
			infra:   externalObject{notFound: true},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "FooCluster does not exist"},
		},
		{
			name:    "deleted while the Cluster lives",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}, Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			infra:   externalObject{notFound: true},
			want:    metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "Deleted", Message: "FooCluster has been deleted while the cluster still exists"},
		},
		{
			name: "deleted with the Cluster",
			cluster: clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now},
				Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef}, Status: clusterv1.ClusterStatus{InfrastructureReady: true}},
			infra: externalObject{notFound: true},
			want:  metav1.Condition{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "Deleted", Message: "FooCluster has been deleted"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cluster.DeepCopy()
			setInfrastructureReadyCondition(c, tt.infra)
			got := condition(c, "InfrastructureReady")
			NewWithT(t).Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

func TestControlPlaneConditions(t *testing.T) {
	cp := providerObject("FooControlPlane")
	withCP := clusterv1.ClusterSpec{ControlPlaneRef: cpRef}
	tests := []struct {
		name                       string
		cluster                    clusterv1.Cluster
		cp                         externalObject
		descendants                descendants
		descendantsNotRead         bool
		initializedBefore          bool
		wantAvailable, wantInitial metav1.Condition
	}{
		{
			name:          "no control plane object, no Machine with a Node",
			descendants:   descendants{controlPlaneMachines: []clusterv1.Machine{{}}},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "DoesNotExist"},
			wantInitial: metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionFalse, Reason: "NotInitialized",
				Message: "Waiting for the first control plane machine to have status.nodeRef set"},
		},
		{
			name:          "no control plane object, a Machine with a Node",
			descendants:   descendants{controlPlaneMachines: []clusterv1.Machine{{Status: clusterv1.MachineStatus{NodeRef: &corev1.ObjectReference{Name: "n"}}}}},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "DoesNotExist"},
			wantInitial:   metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionTrue, Reason: "Initialized"},
		},
		{
			name:               "no control plane object, Machines not listed",
			descendantsNotRead: true,
			wantAvailable:      metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "DoesNotExist"},
			wantInitial:        metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
		},
		{
			name:          "topology not generated yet",
			cluster:       clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}}},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "DoesNotExist"},
			wantInitial:   metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionUnknown, Reason: "DoesNotExist", Message: "Waiting for cluster topology to be reconciled"},
		},
		{
			name:    "not ready, not initialized, no conditions",
			cluster: clusterv1.Cluster{Spec: withCP},
			cp:      externalObject{obj: cp, contract: contract.V1Beta1},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "FooControlPlane status.ready is false"},
			wantInitial: metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionFalse, Reason: "NotInitialized", Message: "Control plane not yet initialized"},
		},
		{
			name:          "ready and initialized",
			cluster:       clusterv1.Cluster{Spec: withCP, Status: clusterv1.ClusterStatus{ControlPlaneReady: true}},
			cp:            externalObject{obj: cp, contract: contract.V1Beta2, initialized: true},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionTrue, Reason: "Available"},
			wantInitial:   metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionTrue, Reason: "Initialized"},
		},
		{
			name:    "Available mirrored; initialized stays initialized",
			cluster: clusterv1.Cluster{Spec: withCP, Status: clusterv1.ClusterStatus{ControlPlaneReady: true}},
			cp: externalObject{obj: cp, v1beta2Condition: &contract.Condition{Type: "Available", Status: corev1.ConditionFalse,
				Reason: "NotAvailable", Message: "2 of 3 etcd members are healthy"}},
			initializedBefore: true,
			wantAvailable:     metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "NotAvailable", Message: "2 of 3 etcd members are healthy"},
			wantInitial:       metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionTrue, Reason: "Initialized"},
		},
		{
			name:          "does not exist",
			cluster:       clusterv1.Cluster{Spec: withCP},
			cp:            externalObject{notFound: true},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "FooControlPlane does not exist"},
			wantInitial:   metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "FooControlPlane does not exist"},
		},
		{
			name:          "cannot be read",
			cluster:       clusterv1.Cluster{Spec: withCP},
			wantAvailable: metav1.Condition{Type: "ControlPlaneAvailable", Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
			wantInitial:   metav1.Condition{Type: "ControlPlaneInitialized", Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tt.cluster.DeepCopy()
			if tt.initializedBefore {
				setV1Beta2(c, "ControlPlaneInitialized", metav1.ConditionTrue, "Initialized", "")
			}
			setControlPlaneAvailableCondition(c, tt.cp)
			setControlPlaneInitializedCondition(c, tt.cp, tt.descendants, !tt.descendantsNotRead)
			g.Expect(condition(c, "ControlPlaneAvailable")).To(Equal(tt.wantAvailable), cmp.Diff(tt.wantAvailable, condition(c, "ControlPlaneAvailable")))
			g.Expect(condition(c, "ControlPlaneInitialized")).To(Equal(tt.wantInitial), cmp.Diff(tt.wantInitial, condition(c, "ControlPlaneInitialized")))
		})
	}
}

func machineWith(name string, owner string, conds ...string) clusterv1.Machine {
	m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if owner != "" {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: owner, Name: "o", Controller: ptr.To(true)}}
	}
	for _, t := range conds {
		conditions.SetV1Beta2(&m, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t})
	}
	return m
}

func TestReplicaCounters(t *testing.T) {
	mdOwned := clusterv1.MachineSet{Spec: clusterv1.MachineSetSpec{Replicas: ptr.To[int32](2)}}
	mdOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", Controller: ptr.To(true)}}
	d := descendants{
		machineDeployments: []clusterv1.MachineDeployment{{Spec: clusterv1.MachineDeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: clusterv1.MachineDeploymentStatus{Replicas: 2, V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{
				ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](2)}}}},
		machineSets: []clusterv1.MachineSet{mdOwned, {Spec: clusterv1.MachineSetSpec{Replicas: ptr.To[int32](1)},
			Status: clusterv1.MachineSetStatus{Replicas: 1}}},
		workerMachines: []clusterv1.Machine{
			machineWith("a", "MachineSet", "Ready", "Available", "UpToDate"),
			machineWith("b", "MachineSet", "Ready", "UpToDate"),
			machineWith("c", "MachineSet"),
			machineWith("standalone", "", "Ready", "Available"),
		},
		controlPlaneMachines: []clusterv1.Machine{machineWith("cp-0", "", "Ready", "Available", "UpToDate"), machineWith("cp-1", "", "UpToDate")},
	}
	tests := []struct {
		name             string
		cluster          clusterv1.Cluster
		cp               externalObject
		descendants      descendants
		descendantsRead  bool
		wantControlPlane *clusterv1.ClusterControlPlaneStatus
		wantWorkers      *clusterv1.WorkersStatus
	}{
		{
			name:            "from Machines without control plane object",
			descendants:     d,
			descendantsRead: true,
			wantControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](2), Replicas: ptr.To[int32](2),
				ReadyReplicas: ptr.To[int32](1), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](2)},
			// 2 of the MachineDeployment + 1 of the MachineSet of its own + 1 standalone Machine, counted from
			// the status of the MachineDeployment and the MachineSet (not from their Machines) and from the
			// standalone Machine's conditions.
			wantWorkers: &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](4), Replicas: ptr.To[int32](4),
				ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](2), UpToDateReplicas: ptr.To[int32](2)},
		},
		{
			name:    "from the control plane object",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}},
			cp: externalObject{obj: providerObject("FooControlPlane"), replicas: contract.ControlPlaneReplicas{
				Desired: ptr.To[int32](3), Replicas: ptr.To[int32](1), Ready: ptr.To[int32](1)}},
			descendants:      descendants{},
			descendantsRead:  true,
			wantControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](3), Replicas: ptr.To[int32](1), ReadyReplicas: ptr.To[int32](1)},
			wantWorkers: &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](0),
				ReadyReplicas: ptr.To[int32](0), AvailableReplicas: ptr.To[int32](0), UpToDateReplicas: ptr.To[int32](0)},
		},
		{
			name:    "unknown counters are left alone",
			cluster: clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tt.cluster.DeepCopy()
			setControlPlaneReplicas(c, tt.cp, tt.descendants, tt.descendantsRead)
			setWorkersReplicas(c, tt.descendants, tt.descendantsRead)
			status := ptr.Deref(c.Status.V1Beta2, clusterv1.ClusterV1Beta2Status{})
			g.Expect(status.ControlPlane).To(Equal(tt.wantControlPlane), cmp.Diff(tt.wantControlPlane, status.ControlPlane))
			g.Expect(status.Workers).To(Equal(tt.wantWorkers), cmp.Diff(tt.wantWorkers, status.Workers))
		})
	}
}

// TestStatusVersions: status.v1beta2.controlPlane.versions is the control plane object's status.versions
// (none when it has none) or counts the control plane Machines' versions; workers.versions merges the
// versions of the MachinePools, the MachineDeployments, the MachineSets no MachineDeployment owns and the
// worker Machines no MachineSet owns, as upstream v1.14; the upgrade plans are kept.
func TestStatusVersions(t *testing.T) {
	versioned := func(m clusterv1.Machine, version, kubelet string) clusterv1.Machine {
		m.Spec.Version = ptr.To(version)
		if kubelet != "" {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: kubelet}
		}
		return m
	}
	sv := func(version string, replicas int32) clusterv1.StatusVersion {
		return clusterv1.StatusVersion{Version: version, Replicas: replicas}
	}
	mdOwned := clusterv1.MachineSet{Status: clusterv1.MachineSetStatus{Versions: []clusterv1.StatusVersion{sv("v1.30.0", 5)}}}
	mdOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: "md", Controller: ptr.To(true)}}
	workers := descendants{
		machinePools: []clusterv1.MachinePool{{Status: clusterv1.MachinePoolStatus{Versions: []clusterv1.StatusVersion{sv("v1.33.1", 2)}}}},
		machineDeployments: []clusterv1.MachineDeployment{
			{Status: clusterv1.MachineDeploymentStatus{Versions: []clusterv1.StatusVersion{sv("v1.32.4", 1), sv("v1.33.1", 2)}}},
			{Status: clusterv1.MachineDeploymentStatus{Versions: []clusterv1.StatusVersion{sv("v1.32.4", 3)}}},
		},
		machineSets: []clusterv1.MachineSet{mdOwned, {Status: clusterv1.MachineSetStatus{Versions: []clusterv1.StatusVersion{sv("v1.31.9", 1)}}}},
		workerMachines: []clusterv1.Machine{
			versioned(machineWith("owned", "MachineSet"), "v1.30.0", ""),
			versioned(machineWith("standalone", ""), "v1.33.1", ""),
		},
	}
	upgradePlans := clusterv1.ClusterStatus{V1Beta2: &clusterv1.ClusterV1Beta2Status{
		ControlPlane: &clusterv1.ClusterControlPlaneStatus{UpgradePlan: []clusterv1.StatusUpgradePlanVersion{{Version: "v1.34.0"}}},
		Workers:      &clusterv1.WorkersStatus{UpgradePlan: []clusterv1.StatusUpgradePlanVersion{{Version: "v1.34.0"}}},
	}}
	withControlPlaneVersions := func(versions ...clusterv1.StatusVersion) clusterv1.ClusterStatus {
		status := *upgradePlans.DeepCopy()
		status.V1Beta2.ControlPlane.Versions = versions
		return status
	}
	cpObject := providerObject("FooControlPlane")
	tests := []struct {
		name             string
		cluster          clusterv1.Cluster
		cp               externalObject
		descendants      descendants
		wantControlPlane []clusterv1.StatusVersion
		wantWorkers      []clusterv1.StatusVersion
	}{
		{
			name:             "nothing to count",
			cluster:          clusterv1.Cluster{Status: upgradePlans},
			wantControlPlane: nil,
			wantWorkers:      nil,
		},
		{
			name:    "control plane Machines without control plane object; workers merged and sorted",
			cluster: clusterv1.Cluster{Status: upgradePlans},
			descendants: descendants{
				controlPlaneMachines: []clusterv1.Machine{
					versioned(machineWith("cp-0", ""), "v1.33.1", "v1.33.1"),
					versioned(machineWith("cp-1", ""), "v1.33.1", "v1.32.4"),
					versioned(machineWith("cp-2", ""), "v1.33.1", ""),
				},
				machinePools: workers.machinePools, machineDeployments: workers.machineDeployments,
				machineSets: workers.machineSets, workerMachines: workers.workerMachines,
			},
			wantControlPlane: []clusterv1.StatusVersion{sv("v1.32.4", 1), sv("v1.33.1", 2)},
			wantWorkers:      []clusterv1.StatusVersion{sv("v1.31.9", 1), sv("v1.32.4", 4), sv("v1.33.1", 5)},
		},
		{
			name:             "the control plane object's status.versions",
			cluster:          clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}, Status: withControlPlaneVersions(sv("v1.32.4", 3))},
			cp:               externalObject{obj: cpObject, versions: []clusterv1.StatusVersion{sv("v1.32.4", 2), sv("v1.33.1", 1)}, versionsRead: true},
			wantControlPlane: []clusterv1.StatusVersion{sv("v1.32.4", 2), sv("v1.33.1", 1)},
		},
		{
			name:             "a control plane object without status.versions",
			cluster:          clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}, Status: withControlPlaneVersions(sv("v1.32.4", 3))},
			cp:               externalObject{obj: cpObject, versionsRead: true},
			wantControlPlane: nil,
		},
		{
			name:             "a control plane object's status.versions that cannot be used keep the last ones",
			cluster:          clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneRef: cpRef}, Status: withControlPlaneVersions(sv("v1.32.4", 3))},
			cp:               externalObject{obj: cpObject},
			wantControlPlane: []clusterv1.StatusVersion{sv("v1.32.4", 3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tt.cluster.DeepCopy()
			setControlPlaneReplicas(c, tt.cp, tt.descendants, true)
			setWorkersReplicas(c, tt.descendants, true)
			g.Expect(c.Status.V1Beta2.ControlPlane.Versions).To(Equal(tt.wantControlPlane), cmp.Diff(tt.wantControlPlane, c.Status.V1Beta2.ControlPlane.Versions))
			g.Expect(c.Status.V1Beta2.Workers.Versions).To(Equal(tt.wantWorkers), cmp.Diff(tt.wantWorkers, c.Status.V1Beta2.Workers.Versions))
			g.Expect(c.Status.V1Beta2.ControlPlane.UpgradePlan).To(Equal(upgradePlans.V1Beta2.ControlPlane.UpgradePlan))
			g.Expect(c.Status.V1Beta2.Workers.UpgradePlan).To(Equal(upgradePlans.V1Beta2.Workers.UpgradePlan))
		})
	}
}

func TestWorkersAvailableCondition(t *testing.T) {
	md := func(name string, status metav1.ConditionStatus, message string) clusterv1.MachineDeployment {
		m := clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if status != "" {
			conditions.SetV1Beta2(&m, metav1.Condition{Type: "Available", Status: status, Reason: "R", Message: message})
		}
		return m
	}
	tests := []struct {
		name        string
		descendants descendants
		notRead     bool
		want        metav1.Condition
	}{
		{name: "no MachineDeployments", want: metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionTrue, Reason: "NoWorkers"}},
		{
			name:        "all available",
			descendants: descendants{machineDeployments: []clusterv1.MachineDeployment{md("a", metav1.ConditionTrue, ""), md("b", metav1.ConditionTrue, "")}},
			want:        metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionTrue, Reason: "Available"},
		},
		{
			name: "issues grouped by message",
			descendants: descendants{machineDeployments: []clusterv1.MachineDeployment{
				md("a", metav1.ConditionFalse, "1 available replica, at least 2 required"), md("b", metav1.ConditionUnknown, ""),
				md("c", metav1.ConditionFalse, "1 available replica, at least 2 required"), md("d", metav1.ConditionFalse, "0 available replicas"),
			}},
			want: metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "* MachineDeployments a, c: 1 available replica, at least 2 required\n* MachineDeployment d: 0 available replicas"},
		},
		{
			name: "many different messages are counted",
			descendants: descendants{machineDeployments: []clusterv1.MachineDeployment{
				md("a", metav1.ConditionFalse, "1"), md("b", metav1.ConditionFalse, "2"), md("c", metav1.ConditionFalse, "3"),
				md("d", metav1.ConditionFalse, "4"), md("e", metav1.ConditionFalse, "5"), md("f", metav1.ConditionFalse, "6"),
				md("g", metav1.ConditionFalse, "7"), md("h", metav1.ConditionFalse, "6"),
			}},
			want: metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "* MachineDeployment a: 1\n* MachineDeployment b: 2\n* MachineDeployment c: 3\n* MachineDeployment d: 4\n* MachineDeployment e: 5\n" +
					"* And 3 MachineDeployments with other messages"},
		},
		{
			name:        "unknown",
			descendants: descendants{machineDeployments: []clusterv1.MachineDeployment{md("a", "", ""), md("b", metav1.ConditionTrue, "")}},
			want: metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionUnknown, Reason: "AvailableUnknown",
				Message: "* MachineDeployment a: Condition Available not yet reported"},
		},
		{
			name:    "not listed",
			notRead: true,
			want:    metav1.Condition{Type: "WorkersAvailable", Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterv1.Cluster{}
			setWorkersAvailableCondition(c, tt.descendants, !tt.notRead)
			got := condition(c, "WorkersAvailable")
			NewWithT(t).Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

func TestDeletingAndPausedConditions(t *testing.T) {
	tests := []struct {
		name            string
		cluster         clusterv1.Cluster
		reason, message string
		wantDeleting    metav1.Condition
		wantPaused      metav1.Condition
	}{
		{
			name:         "neither",
			wantDeleting: metav1.Condition{Type: "Deleting", Status: metav1.ConditionFalse, Reason: "NotDeleting"},
			wantPaused:   metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"},
		},
		{
			name:         "deleting, waiting for workers",
			cluster:      clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now}},
			reason:       "WaitingForWorkersDeletion",
			message:      "Waiting for MachineDeployment md-0 to be deleted",
			wantDeleting: metav1.Condition{Type: "Deleting", Status: metav1.ConditionTrue, Reason: "WaitingForWorkersDeletion", Message: "Waiting for MachineDeployment md-0 to be deleted"},
			wantPaused:   metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"},
		},
		{
			name:         "deleting, nothing known",
			cluster:      clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: now}},
			wantDeleting: metav1.Condition{Type: "Deleting", Status: metav1.ConditionTrue, Reason: "InternalError", Message: "Please check controller logs for errors"},
			wantPaused:   metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"},
		},
		{
			name: "paused both ways",
			cluster: clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
				Spec: clusterv1.ClusterSpec{Paused: true}},
			wantDeleting: metav1.Condition{Type: "Deleting", Status: metav1.ConditionFalse, Reason: "NotDeleting"},
			wantPaused: metav1.Condition{Type: "Paused", Status: metav1.ConditionTrue, Reason: "Paused",
				Message: "Cluster spec.paused is set to true, Cluster has the cluster.x-k8s.io/paused annotation"},
		},
		{
			name:         "paused by annotation",
			cluster:      clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: "true"}}},
			wantDeleting: metav1.Condition{Type: "Deleting", Status: metav1.ConditionFalse, Reason: "NotDeleting"},
			wantPaused:   metav1.Condition{Type: "Paused", Status: metav1.ConditionTrue, Reason: "Paused", Message: "Cluster has the cluster.x-k8s.io/paused annotation"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := tt.cluster.DeepCopy()
			setDeletingCondition(c, tt.reason, tt.message)
			setPausedCondition(c)
			g.Expect(condition(c, "Deleting")).To(Equal(tt.wantDeleting), cmp.Diff(tt.wantDeleting, condition(c, "Deleting")))
			g.Expect(condition(c, "Paused")).To(Equal(tt.wantPaused), cmp.Diff(tt.wantPaused, condition(c, "Paused")))
		})
	}
}

func TestAvailableCondition(t *testing.T) {
	type cond struct {
		t      string
		status metav1.ConditionStatus
		msg    string
	}
	healthy := []cond{
		{"Deleting", metav1.ConditionFalse, ""}, {"InfrastructureReady", metav1.ConditionTrue, ""},
		{"ControlPlaneAvailable", metav1.ConditionTrue, ""}, {"WorkersAvailable", metav1.ConditionTrue, ""},
	}
	with := func(extra ...cond) []cond { return append(append([]cond{}, healthy...), extra...) }
	tests := []struct {
		name       string
		spec       clusterv1.ClusterSpec
		conditions []cond
		want       metav1.Condition
	}{
		{
			name:       "healthy",
			conditions: healthy,
			want:       metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "Available"},
		},
		{
			name:       "deleting",
			conditions: with(cond{"Deleting", metav1.ConditionTrue, "Waiting for MachineDeployment md-0 to be deleted"}),
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "* Deleting: Waiting for MachineDeployment md-0 to be deleted"},
		},
		{
			name: "issues listed in order, multi-line messages indented",
			conditions: with(
				cond{"WorkersAvailable", metav1.ConditionFalse, "* MachineDeployment a: not enough\n* MachineDeployment b: none"},
				cond{"InfrastructureReady", metav1.ConditionFalse, "Load balancer pending"},
			),
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "* InfrastructureReady: Load balancer pending\n* WorkersAvailable: * MachineDeployment a: not enough\n  * MachineDeployment b: none"},
		},
		{
			name:       "missing condition",
			conditions: []cond{{"Deleting", metav1.ConditionFalse, ""}, {"InfrastructureReady", metav1.ConditionTrue, ""}, {"WorkersAvailable", metav1.ConditionTrue, ""}},
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionUnknown, Reason: "AvailableUnknown",
				Message: "* ControlPlaneAvailable: Condition not yet reported"},
		},
		{
			name:       "topology reconciled counts for a Cluster with a topology",
			spec:       clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}},
			conditions: healthy,
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionUnknown, Reason: "AvailableUnknown",
				Message: "* TopologyReconciled: Condition not yet reported"},
		},
		{
			name: "availability gates, both polarities",
			spec: clusterv1.ClusterSpec{AvailabilityGates: []clusterv1.ClusterAvailabilityGate{
				{ConditionType: "example.com/Healthy"},
				{ConditionType: "example.com/Degraded", Polarity: clusterv1.NegativePolarityCondition},
			}},
			conditions: with(cond{"example.com/Healthy", metav1.ConditionTrue, ""}, cond{"example.com/Degraded", metav1.ConditionTrue, "Disk pressure"}),
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "NotAvailable",
				Message: "* example.com/Degraded: Disk pressure"},
		},
		{
			name: "a gate duplicating a built-in condition counts once",
			spec: clusterv1.ClusterSpec{AvailabilityGates: []clusterv1.ClusterAvailabilityGate{{ConditionType: "InfrastructureReady"}}},
			conditions: with(
				cond{"InfrastructureReady", metav1.ConditionUnknown, "Probing"},
			),
			want: metav1.Condition{Type: "Available", Status: metav1.ConditionUnknown, Reason: "AvailableUnknown",
				Message: "* InfrastructureReady: Probing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterv1.Cluster{Spec: tt.spec}
			for _, x := range tt.conditions {
				setV1Beta2(c, x.t, x.status, "SomeReason", x.msg)
			}
			setAvailableCondition(c)
			got := condition(c, "Available")
			NewWithT(t).Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

// A Cluster whose topology has not yet given it an InfraCluster and a control plane has nothing its v1beta1
// Ready summarises: it is not set (upstream sets no Ready then either), where it used to say True.
func TestTopologyClusterNotReadyBeforeItsObjects(t *testing.T) {
	g := NewWithT(t)
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}}}
	updateStatus(&scope{cluster: c})
	g.Expect(conditions.Get(c, clusterv1.ReadyCondition)).To(BeNil())
	g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhasePending)))
	g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeFalse())
}

package machine

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// cond is a v1beta2 condition without the fields the tests do not care about.
type cond struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

func v1beta2(m *clusterv1.Machine, t string) cond {
	c := conditions.GetV1Beta2(m, t)
	if c == nil {
		return cond{}
	}
	return cond{Status: c.Status, Reason: c.Reason, Message: c.Message}
}

func TestSetPhase(t *testing.T) {
	deleted := metav1.NewTime(now)
	tests := []struct {
		name    string
		machine clusterv1.Machine
		want    clusterv1.MachinePhase
	}{
		{name: "new", want: clusterv1.MachinePhasePending},
		{name: "bootstrap ready", machine: clusterv1.Machine{Status: clusterv1.MachineStatus{BootstrapReady: true}}, want: clusterv1.MachinePhaseProvisioning},
		{
			name:    "providerID",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{ProviderID: ptr.To("p")}, Status: clusterv1.MachineStatus{BootstrapReady: true, InfrastructureReady: true}},
			want:    clusterv1.MachinePhaseProvisioned,
		},
		{
			name: "node linked",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{ProviderID: ptr.To("p")},
				Status: clusterv1.MachineStatus{BootstrapReady: true, InfrastructureReady: true, NodeRef: &corev1.ObjectReference{Name: "n"}}},
			want: clusterv1.MachinePhaseRunning,
		},
		{
			name:    "terminal failure",
			machine: clusterv1.Machine{Status: clusterv1.MachineStatus{Phase: "Running", NodeRef: &corev1.ObjectReference{Name: "n"}, InfrastructureReady: true, FailureMessage: ptr.To("x")}},
			want:    clusterv1.MachinePhaseFailed,
		},
		{
			name:    "deleting wins",
			machine: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Status: clusterv1.MachineStatus{FailureMessage: ptr.To("x")}},
			want:    clusterv1.MachinePhaseDeleting,
		},
		{
			name:    "the phase does not go back when bootstrap data disappears",
			machine: clusterv1.Machine{Status: clusterv1.MachineStatus{Phase: "Provisioning"}},
			want:    clusterv1.MachinePhaseProvisioning,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := tt.machine.DeepCopy()
			setPhase(m, now)
			g.Expect(m.Status.GetTypedPhase()).To(Equal(tt.want))
			if string(tt.want) != tt.machine.Status.Phase {
				g.Expect(m.Status.LastUpdated).To(Equal(ptr.To(metav1.NewTime(now))))
			} else {
				g.Expect(m.Status.LastUpdated).To(BeNil())
			}
		})
	}
}

func nodeWith(conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: conds}}
}

var (
	readyTrue     = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}
	memoryFalse   = corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}
	diskFalse     = corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse}
	pidFalse      = corev1.NodeCondition{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse}
	healthyNode   = nodeWith(readyTrue, memoryFalse, diskFalse, pidFalse)
	unhealthyNode = nodeWith(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Message: "kubelet down"},
		corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}, memoryFalse, pidFalse)
)

func TestSummarizeNode(t *testing.T) {
	tests := []struct {
		name       string
		node       *corev1.Node
		want       cond
		wantStatus corev1.ConditionStatus
		wantMsg    string
	}{
		{
			name: "healthy", node: healthyNode,
			want:       cond{Status: metav1.ConditionTrue, Reason: clusterv1.MachineNodeHealthyV1Beta2Reason},
			wantStatus: corev1.ConditionTrue,
		},
		{
			name: "not ready and under disk pressure", node: unhealthyNode,
			want: cond{Status: metav1.ConditionFalse, Reason: clusterv1.MachineNodeNotHealthyV1Beta2Reason,
				Message: "* Node.Ready: kubelet down\n* Node.DiskPressure: Condition is True"},
			wantStatus: corev1.ConditionFalse, wantMsg: "Node condition Ready is False; Node condition DiskPressure is True",
		},
		{
			name: "nothing reported yet", node: nodeWith(),
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeHealthUnknownV1Beta2Reason,
				Message: "* Node.Ready: Condition not yet reported\n* Node.MemoryPressure: Condition not yet reported\n" +
					"* Node.DiskPressure: Condition not yet reported\n* Node.PIDPressure: Condition not yet reported"},
			wantStatus: corev1.ConditionUnknown, wantMsg: "Node condition Ready is not reported",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			status, reason, message := summarizeNode(tt.node)
			g.Expect(cond{Status: status, Reason: reason, Message: message}).To(Equal(tt.want))
			status1, message1 := summarizeNodeV1Beta1(tt.node)
			g.Expect(status1).To(Equal(tt.wantStatus))
			g.Expect(message1).To(Equal(tt.wantMsg))
		})
	}
}

func TestSetNodeConditions(t *testing.T) {
	initialized := &clusterv1.Cluster{Status: clusterv1.ClusterStatus{ControlPlaneReady: true}}
	deleted := metav1.NewTime(now)
	withProviderID := func(m *clusterv1.Machine) { m.Spec.ProviderID = ptr.To("test://1") }
	withNodeRef := func(m *clusterv1.Machine) { m.Status.NodeRef = &corev1.ObjectReference{Name: "n1"} }
	deleting := func(m *clusterv1.Machine) { m.DeletionTimestamp = &deleted }
	notConnected := fmt.Errorf("x: %w", clustercache.ErrClusterNotConnected)
	tests := []struct {
		name      string
		cluster   *clusterv1.Cluster
		mutate    []func(*clusterv1.Machine)
		existing  []metav1.Condition
		node      *corev1.Node
		nodeErr   error
		health    clustercache.Health
		want      cond
		wantReady cond
	}{
		{
			name: "healthy Node", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID, withNodeRef}, node: healthyNode,
			want:      cond{Status: metav1.ConditionTrue, Reason: clusterv1.MachineNodeHealthyV1Beta2Reason},
			wantReady: cond{Status: metav1.ConditionTrue, Reason: "KubeletReady"},
		},
		{
			name: "waiting for the providerID", cluster: initialized,
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeInspectionFailedV1Beta2Reason, Message: "Waiting for GenericInfrastructureMachine to report spec.providerID"},
		},
		{
			name: "control plane not initialized", cluster: &clusterv1.Cluster{}, mutate: []func(*clusterv1.Machine){withProviderID},
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeInspectionFailedV1Beta2Reason, Message: "Waiting for Cluster control plane to be initialized"},
		},
		{
			name: "never connected", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID}, nodeErr: notConnected,
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeRemoteConnectionFailedV1Beta2Reason, Message: "Remote connection not established yet"},
		},
		{
			name: "connection down within the grace period keeps the last values", cluster: initialized,
			mutate: []func(*clusterv1.Machine){withProviderID, withNodeRef}, nodeErr: notConnected,
			health: clustercache.Health{LastProbeSuccess: now.Add(-time.Minute)},
			existing: []metav1.Condition{
				{Type: clusterv1.MachineNodeHealthyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineNodeHealthyV1Beta2Reason},
				{Type: clusterv1.MachineNodeReadyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: "KubeletReady"},
			},
			want:      cond{Status: metav1.ConditionTrue, Reason: clusterv1.MachineNodeHealthyV1Beta2Reason},
			wantReady: cond{Status: metav1.ConditionTrue, Reason: "KubeletReady"},
		},
		{
			name: "connection down beyond the grace period", cluster: initialized,
			mutate: []func(*clusterv1.Machine){withProviderID, withNodeRef}, nodeErr: notConnected,
			health: clustercache.Health{LastProbeSuccess: now.Add(-time.Hour)},
			existing: []metav1.Condition{
				{Type: clusterv1.MachineNodeHealthyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineNodeHealthyV1Beta2Reason},
			},
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeRemoteConnectionFailedV1Beta2Reason, Message: "Remote connection probe failed"},
		},
		{
			name: "other error", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID}, nodeErr: fmt.Errorf("boom"),
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeInternalErrorV1Beta2Reason, Message: "Please check controller logs for errors"},
		},
		{
			name: "waiting for the Node", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID},
			want: cond{Status: metav1.ConditionUnknown, Reason: clusterv1.MachineNodeInspectionFailedV1Beta2Reason, Message: "Waiting for a Node with spec.providerID test://1 to exist"},
		},
		{
			name: "Node deleted under the Machine", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID, withNodeRef},
			want: cond{Status: metav1.ConditionFalse, Reason: clusterv1.MachineNodeDeletedV1Beta2Reason, Message: "Node n1 has been deleted while the Machine still exists"},
		},
		{
			name: "Node deleted while deleting", cluster: initialized, mutate: []func(*clusterv1.Machine){withProviderID, withNodeRef, deleting},
			want: cond{Status: metav1.ConditionFalse, Reason: clusterv1.MachineNodeDeletedV1Beta2Reason, Message: "Node n1 has been deleted"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{InfrastructureRef: corev1.ObjectReference{Kind: "GenericInfrastructureMachine"}}}
			for _, f := range tt.mutate {
				f(m)
			}
			for _, c := range tt.existing {
				conditions.SetV1Beta2(m, c)
			}
			s := &scope{cluster: tt.cluster, machine: m, node: tt.node, nodeGetErr: tt.nodeErr, health: tt.health}
			setNodeConditions(s, now, 5*time.Minute)
			g.Expect(v1beta2(m, clusterv1.MachineNodeHealthyV1Beta2Condition)).To(Equal(tt.want))
			wantReady := tt.wantReady
			if wantReady == (cond{}) {
				wantReady = tt.want
			}
			g.Expect(v1beta2(m, clusterv1.MachineNodeReadyV1Beta2Condition)).To(Equal(wantReady))
		})
	}
}

func provider(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetKind("GenericInfrastructureMachine")
	u.SetName("m1")
	return u
}

func TestSetInfrastructureConditions(t *testing.T) {
	deleted := metav1.NewTime(now)
	tests := []struct {
		name        string
		facts       providerFacts
		ready       bool
		deleting    bool
		want        cond
		wantV1Beta1 clusterv1.Condition
	}{
		{
			name:        "v1beta1 contract, not ready, no condition",
			facts:       providerFacts{obj: provider(map[string]any{"ready": false}), contract: contract.V1Beta1},
			want:        cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "GenericInfrastructureMachine status.ready is false"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.WaitingForInfrastructureFallbackReason, Severity: clusterv1.ConditionSeverityInfo},
		},
		{
			name:        "v1beta2 contract, provisioned, no condition",
			facts:       providerFacts{obj: provider(map[string]any{}), contract: contract.V1Beta2, ready: true},
			ready:       true,
			want:        cond{Status: metav1.ConditionTrue, Reason: "Ready"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionTrue},
		},
		{
			name:        "v1beta2 contract, not provisioned",
			facts:       providerFacts{obj: provider(map[string]any{}), contract: contract.V1Beta2},
			want:        cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "GenericInfrastructureMachine status.initialization.provisioned is false"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.WaitingForInfrastructureFallbackReason, Severity: clusterv1.ConditionSeverityInfo},
		},
		{
			name: "the provider's Ready condition is mirrored, preferring its v1beta2 preview",
			facts: providerFacts{obj: provider(map[string]any{
				"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "VMBooting", "severity": "Warning", "message": "Booting"}},
				"v1beta2":    map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Booting", "message": "Booting the VM"}}},
			}), contract: contract.V1Beta1},
			want:        cond{Status: metav1.ConditionFalse, Reason: "Booting", Message: "Booting the VM"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: "VMBooting", Severity: clusterv1.ConditionSeverityWarning, Message: "Booting"},
		},
		{
			name:  "an invalid Ready condition",
			facts: providerFacts{obj: provider(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Maybe"}}}), contract: contract.V1Beta2},
			want: cond{Status: metav1.ConditionUnknown, Reason: "InvalidConditionReported",
				Message: `Reading condition Ready of GenericInfrastructureMachine m1: status "Maybe" is not True, False or Unknown`},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.WaitingForInfrastructureFallbackReason, Severity: clusterv1.ConditionSeverityInfo},
		},
		{
			name:        "not found yet",
			facts:       providerFacts{notFound: true},
			want:        cond{Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "GenericInfrastructureMachine does not exist"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.WaitingForInfrastructureFallbackReason, Severity: clusterv1.ConditionSeverityInfo},
		},
		{
			name:        "deleted after being ready",
			facts:       providerFacts{notFound: true},
			ready:       true,
			want:        cond{Status: metav1.ConditionFalse, Reason: "Deleted", Message: "GenericInfrastructureMachine has been deleted while the Machine still exists"},
			wantV1Beta1: clusterv1.Condition{Status: corev1.ConditionFalse, Reason: clusterv1.DeletedReason, Severity: clusterv1.ConditionSeverityError, Message: "GenericInfrastructureMachine has been deleted while the Machine still exists"},
		},
		{
			name:     "deleted during the deletion",
			facts:    providerFacts{notFound: true},
			ready:    true,
			deleting: true,
			want:     cond{Status: metav1.ConditionFalse, Reason: "Deleted", Message: "GenericInfrastructureMachine has been deleted"},
		},
		{
			name:  "read error",
			facts: providerFacts{getErr: true},
			want:  cond{Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{InfrastructureRef: corev1.ObjectReference{Kind: "GenericInfrastructureMachine"}}}
			m.Status.InfrastructureReady = tt.ready
			if tt.deleting {
				m.DeletionTimestamp = &deleted
			}
			setInfrastructureConditions(m, tt.facts)
			g.Expect(v1beta2(m, clusterv1.MachineInfrastructureReadyV1Beta2Condition)).To(Equal(tt.want))
			got := conditions.Get(m, clusterv1.InfrastructureReadyCondition)
			if tt.wantV1Beta1 == (clusterv1.Condition{}) {
				g.Expect(got).To(BeNil())
				return
			}
			tt.wantV1Beta1.Type = clusterv1.InfrastructureReadyCondition
			if diff := cmp.Diff(tt.wantV1Beta1, *got, cmpopts.IgnoreFields(clusterv1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("v1beta1 InfrastructureReady (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetBootstrapConditions(t *testing.T) {
	ref := &corev1.ObjectReference{Kind: "GenericBootstrapConfig"}
	tests := []struct {
		name    string
		machine clusterv1.Machine
		facts   providerFacts
		want    cond
		v1beta1 corev1.ConditionStatus
	}{
		{
			name:    "data secret given",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("s")}}},
			want:    cond{Status: metav1.ConditionTrue, Reason: "DataSecretProvided"},
			v1beta1: corev1.ConditionTrue,
		},
		{
			name:    "waiting for the data secret",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{ConfigRef: ref}}},
			facts:   providerFacts{obj: provider(map[string]any{}), contract: contract.V1Beta2},
			want:    cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "GenericBootstrapConfig status.initialization.dataSecretCreated is false"},
			v1beta1: corev1.ConditionFalse,
		},
		{
			name: "data secret copied",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{ConfigRef: ref, DataSecretName: ptr.To("s")}},
				Status: clusterv1.MachineStatus{BootstrapReady: true}},
			facts:   providerFacts{obj: provider(map[string]any{"ready": true}), contract: contract.V1Beta1, ready: true},
			want:    cond{Status: metav1.ConditionTrue, Reason: "Ready"},
			v1beta1: corev1.ConditionTrue,
		},
		{
			name:    "does not exist",
			machine: clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{ConfigRef: ref}}},
			facts:   providerFacts{notFound: true},
			want:    cond{Status: metav1.ConditionFalse, Reason: "DoesNotExist", Message: "GenericBootstrapConfig does not exist"},
			v1beta1: corev1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := tt.machine.DeepCopy()
			setBootstrapConditions(m, tt.facts)
			g.Expect(v1beta2(m, clusterv1.MachineBootstrapConfigReadyV1Beta2Condition)).To(Equal(tt.want))
			g.Expect(conditions.Get(m, clusterv1.BootstrapReadyCondition).Status).To(Equal(tt.v1beta1))
		})
	}
}

func TestSetReadyAndAvailable(t *testing.T) {
	set := func(t string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message}
	}
	allGood := []metav1.Condition{
		set(clusterv1.MachineDeletingV1Beta2Condition, metav1.ConditionFalse, "NotDeleting", ""),
		set(clusterv1.MachineUpdatingV1Beta2Condition, metav1.ConditionFalse, "NotUpdating", ""),
		set(clusterv1.MachineBootstrapConfigReadyV1Beta2Condition, metav1.ConditionTrue, "Ready", ""),
		set(clusterv1.MachineInfrastructureReadyV1Beta2Condition, metav1.ConditionTrue, "Ready", ""),
		set(clusterv1.MachineNodeHealthyV1Beta2Condition, metav1.ConditionTrue, "NodeHealthy", ""),
	}
	tests := []struct {
		name          string
		conditions    []metav1.Condition
		gates         []clusterv1.MachineReadinessGate
		want          cond
		wantAvailable metav1.ConditionStatus
	}{
		{name: "all good", conditions: allGood, want: cond{Status: metav1.ConditionTrue, Reason: "Ready"}, wantAvailable: metav1.ConditionTrue},
		{
			name: "issues and unknowns, in order",
			conditions: append(append([]metav1.Condition{}, allGood...),
				set(clusterv1.MachineInfrastructureReadyV1Beta2Condition, metav1.ConditionFalse, "NotReady", "GenericInfrastructureMachine status.ready is false"),
				set(clusterv1.MachineNodeHealthyV1Beta2Condition, metav1.ConditionUnknown, "InspectionFailed", "Waiting for a Node\nwith a providerID"),
			),
			want: cond{Status: metav1.ConditionFalse, Reason: "NotReady",
				Message: "* InfrastructureReady: GenericInfrastructureMachine status.ready is false\n* NodeHealthy:\n  Waiting for a Node\n  with a providerID"},
			wantAvailable: metav1.ConditionFalse,
		},
		{
			name:       "deleting",
			conditions: append(append([]metav1.Condition{}, allGood...), set(clusterv1.MachineDeletingV1Beta2Condition, metav1.ConditionTrue, "DrainingNode", "Drain not completed yet")),
			want:       cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "* Deleting: Machine deletion in progress, stage: DrainingNode"},
		},
		{
			name:       "updating in place",
			conditions: append(append([]metav1.Condition{}, allGood...), set(clusterv1.MachineUpdatingV1Beta2Condition, metav1.ConditionTrue, "InPlaceUpdating", "In-place update in progress")),
			want:       cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "* Updating: In-place update in progress"},
		},
		{
			name:       "unknown only",
			conditions: append(append([]metav1.Condition{}, allGood...), set(clusterv1.MachineNodeHealthyV1Beta2Condition, metav1.ConditionUnknown, "NodeHealthUnknown", "")),
			want:       cond{Status: metav1.ConditionUnknown, Reason: "ReadyUnknown", Message: "* NodeHealthy: NodeHealthUnknown"},
		},
		{
			name:       "a failed health check",
			conditions: append(append([]metav1.Condition{}, allGood...), set("HealthCheckSucceeded", metav1.ConditionFalse, "UnhealthyNode", "Node not ready for 5m")),
			want:       cond{Status: metav1.ConditionFalse, Reason: "NotReady", Message: "* HealthCheckSucceeded: Node not ready for 5m"},
		},
		{
			name:       "readiness gates, missing and negative",
			conditions: append(append([]metav1.Condition{}, allGood...), set("example.com/Degraded", metav1.ConditionTrue, "Degraded", "Disk slow")),
			gates: []clusterv1.MachineReadinessGate{
				{ConditionType: "example.com/Networked"},
				{ConditionType: "example.com/Degraded", Polarity: clusterv1.NegativePolarityCondition},
			},
			want: cond{Status: metav1.ConditionFalse, Reason: "NotReady",
				Message: "* example.com/Networked: Condition not yet reported\n* example.com/Degraded: Disk slow"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{ReadinessGates: tt.gates}}
			for _, c := range tt.conditions {
				conditions.SetV1Beta2(m, c)
			}
			setReadyCondition(m)
			g.Expect(v1beta2(m, clusterv1.MachineReadyV1Beta2Condition)).To(Equal(tt.want))
			setAvailableCondition(m)
			wantAvailable := tt.wantAvailable
			if wantAvailable == "" {
				wantAvailable = metav1.ConditionFalse
			}
			g.Expect(v1beta2(m, clusterv1.MachineAvailableV1Beta2Condition).Status).To(Equal(wantAvailable))
		})
	}
}

func TestSetUpToDateLeavesTheOwnersVerdict(t *testing.T) {
	g := NewWithT(t)
	m := &clusterv1.Machine{}
	setUpToDateCondition(m)
	g.Expect(v1beta2(m, clusterv1.MachineUpToDateV1Beta2Condition)).To(Equal(cond{Status: metav1.ConditionTrue, Reason: "UpToDate"}))
	conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineUpToDateV1Beta2Condition, Status: metav1.ConditionFalse, Reason: "NotUpToDate", Message: "Version v1.30.0, v1.31.0 required"})
	setUpToDateCondition(m)
	g.Expect(v1beta2(m, clusterv1.MachineUpToDateV1Beta2Condition).Status).To(Equal(metav1.ConditionFalse))
}

func TestSetDeletionConditions(t *testing.T) {
	deleted := metav1.NewTime(now)
	tests := []struct {
		name        string
		deleting    bool
		facts       deletionFacts
		want        cond
		wantV1Beta1 map[clusterv1.ConditionType]corev1.ConditionStatus
	}{
		{name: "not deleting", want: cond{Status: metav1.ConditionFalse, Reason: "NotDeleting"}},
		{
			name: "waiting for a pre-drain hook", deleting: true,
			facts:       deletionFacts{executed: true, reason: "WaitingForPreDrainHook", message: "Waiting for pre-drain hooks to succeed (hooks: x)", preDrainHook: stepWaiting},
			want:        cond{Status: metav1.ConditionTrue, Reason: "WaitingForPreDrainHook", Message: "Waiting for pre-drain hooks to succeed (hooks: x)"},
			wantV1Beta1: map[clusterv1.ConditionType]corev1.ConditionStatus{clusterv1.PreDrainDeleteHookSucceededCondition: corev1.ConditionFalse},
		},
		{
			name: "draining", deleting: true,
			facts: deletionFacts{executed: true, reason: "DrainingNode", message: "Drain not completed yet", preDrainHook: stepDone, drain: stepWaiting, drainMessage: "Drain not completed yet"},
			want:  cond{Status: metav1.ConditionTrue, Reason: "DrainingNode", Message: "Drain not completed yet"},
			wantV1Beta1: map[clusterv1.ConditionType]corev1.ConditionStatus{
				clusterv1.PreDrainDeleteHookSucceededCondition: corev1.ConditionTrue, clusterv1.DrainingSucceededCondition: corev1.ConditionFalse,
			},
		},
		{
			name: "node deletion failed", deleting: true,
			facts: deletionFacts{executed: true, reason: "DeletingNode", message: "Error deleting Node, please check controller logs for errors",
				preDrainHook: stepDone, drain: stepDone, volumeDetach: stepDone, preTerminateHook: stepDone, nodeDeletionFailed: true},
			want: cond{Status: metav1.ConditionTrue, Reason: "DeletingNode", Message: "Error deleting Node, please check controller logs for errors"},
			wantV1Beta1: map[clusterv1.ConditionType]corev1.ConditionStatus{
				clusterv1.PreDrainDeleteHookSucceededCondition: corev1.ConditionTrue, clusterv1.DrainingSucceededCondition: corev1.ConditionTrue,
				clusterv1.VolumeDetachSucceededCondition: corev1.ConditionTrue, clusterv1.PreTerminateDeleteHookSucceededCondition: corev1.ConditionTrue,
				clusterv1.MachineNodeHealthyCondition: corev1.ConditionFalse,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := &clusterv1.Machine{}
			if tt.deleting {
				m.DeletionTimestamp = &deleted
			}
			setDeletionConditions(m, tt.facts)
			g.Expect(v1beta2(m, clusterv1.MachineDeletingV1Beta2Condition)).To(Equal(tt.want))
			got := map[clusterv1.ConditionType]corev1.ConditionStatus{}
			for _, c := range m.Status.Conditions {
				got[c.Type] = c.Status
			}
			if tt.wantV1Beta1 == nil {
				tt.wantV1Beta1 = map[clusterv1.ConditionType]corev1.ConditionStatus{}
			}
			g.Expect(got).To(Equal(tt.wantV1Beta1))
		})
	}
}

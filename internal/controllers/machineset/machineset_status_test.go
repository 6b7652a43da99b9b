package machineset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

var statusNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// withConditions gives a Machine v1beta2 conditions; readySince is when Ready became True.
func withConditions(readySince time.Duration, types ...string) func(*clusterv1.Machine) {
	return func(m *clusterv1.Machine) {
		m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{}
		for _, t := range types {
			m.Status.V1Beta2.Conditions = append(m.Status.V1Beta2.Conditions, metav1.Condition{
				Type: t, Status: metav1.ConditionTrue, Reason: t, LastTransitionTime: metav1.NewTime(statusNow.Add(-readySince)),
			})
		}
	}
}

// withVersion gives a Machine spec.version and, unless empty, the kubelet version its Node reports.
func withVersion(version, kubelet string) func(*clusterv1.Machine) {
	return func(m *clusterv1.Machine) {
		m.Spec.Version = ptr.To(version)
		if kubelet != "" {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: kubelet}
		}
	}
}

func statusMachineSet(replicas, minReadySeconds int32) *clusterv1.MachineSet {
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ms", Generation: 3},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: "c", Replicas: ptr.To(replicas), MinReadySeconds: minReadySeconds,
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"set": "ms"}},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"set": "ms"}},
				Spec:       clusterv1.MachineSpec{InfrastructureRef: corev1.ObjectReference{Kind: "InfraTemplate", Name: "infra"}},
			},
		},
	}
}

func labelled(m *clusterv1.Machine) {
	m.Labels = map[string]string{"set": "ms", clusterv1.ClusterNameLabel: "c"}
}

func TestReplicaCounters(t *testing.T) {
	tests := []struct {
		name            string
		minReadySeconds int32
		machines        []*clusterv1.Machine
		want            clusterv1.MachineSetStatus
		wantRequeue     time.Duration
	}{
		{
			name: "ready and available without minReadySeconds",
			machines: []*clusterv1.Machine{
				testMachine("a", time.Hour, labelled, withConditions(time.Second, "Ready", "Available", "UpToDate")),
				testMachine("b", time.Hour, labelled, withConditions(time.Second, "Ready")),
				testMachine("c", time.Hour),
			},
			want: clusterv1.MachineSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				V1Beta2: &clusterv1.MachineSetV1Beta2Status{ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](1)}},
		},
		{
			name:            "available once Ready for minReadySeconds",
			minReadySeconds: 60,
			machines: []*clusterv1.Machine{
				testMachine("a", time.Hour, withConditions(2*time.Minute, "Ready")),
				testMachine("b", time.Hour, withConditions(20*time.Second, "Ready")),
			},
			want: clusterv1.MachineSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1,
				V1Beta2: &clusterv1.MachineSetV1Beta2Status{ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](0), UpToDateReplicas: ptr.To[int32](0)}},
			wantRequeue: 40 * time.Second,
		},
		{
			name: "deleting Machines still count",
			machines: []*clusterv1.Machine{
				testMachine("a", time.Hour, deleting, withConditions(time.Minute, "Ready")),
			},
			want: clusterv1.MachineSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				V1Beta2: &clusterv1.MachineSetV1Beta2Status{ReadyReplicas: ptr.To[int32](1), AvailableReplicas: ptr.To[int32](0), UpToDateReplicas: ptr.To[int32](0)}},
		},
		{
			name: "versions: the Machines' Kubernetes versions counted, oldest first; the kubelet's once the Node reports it",
			machines: []*clusterv1.Machine{
				testMachine("a", time.Hour, withVersion("v1.33.1", "")),
				testMachine("b", time.Hour, withVersion("v1.33.1", "v1.32.4")),
				testMachine("c", time.Hour, withVersion("v1.32.4", "v1.32.4")),
				testMachine("d", time.Hour),
			},
			want: clusterv1.MachineSetStatus{Replicas: 4,
				V1Beta2:  &clusterv1.MachineSetV1Beta2Status{ReadyReplicas: ptr.To[int32](0), AvailableReplicas: ptr.To[int32](0), UpToDateReplicas: ptr.To[int32](0)},
				Versions: []clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 2}, {Version: "v1.33.1", Replicas: 1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &scope{ms: statusMachineSet(int32(len(tt.machines)), tt.minReadySeconds), machines: tt.machines,
				getMachinesSucceeded: true, now: statusNow}
			setReplicas(s)
			got := s.ms.Status
			got.Conditions = nil
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
			g.Expect(requeueForAvailability(s)).To(Equal(tt.wantRequeue))
		})
	}
}

func TestConditions(t *testing.T) {
	ready := withConditions(time.Hour, "Ready", "UpToDate")
	notReady := func(m *clusterv1.Machine) {
		m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotReady", Message: "* NodeHealthy: Node not ready"},
			{Type: "UpToDate", Status: metav1.ConditionFalse, Reason: "NotUpToDate", Message: "* Version v1.30.0, v1.31.0 required"},
		}}
	}
	tests := []struct {
		name     string
		scope    *scope
		want     map[string]metav1.Condition
		wantV1B1 map[clusterv1.ConditionType]clusterv1.Condition
	}{
		{
			name: "steady",
			scope: &scope{ms: statusMachineSet(2, 0), getMachinesSucceeded: true,
				machines: []*clusterv1.Machine{testMachine("a", time.Hour, ready), testMachine("b", time.Hour, ready)}},
			want: map[string]metav1.Condition{
				"ScalingUp":        {Status: metav1.ConditionFalse, Reason: "NotScalingUp"},
				"ScalingDown":      {Status: metav1.ConditionFalse, Reason: "NotScalingDown"},
				"MachinesReady":    {Status: metav1.ConditionTrue, Reason: "Ready"},
				"MachinesUpToDate": {Status: metav1.ConditionTrue, Reason: "UpToDate"},
				"Deleting":         {Status: metav1.ConditionFalse, Reason: "NotDeleting"},
				"Paused":           {Status: metav1.ConditionFalse, Reason: "NotPaused"},
			},
			wantV1B1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Ready": {Status: "True"}, "MachinesCreated": {Status: "True"}, "Resized": {Status: "True"},
			},
		},
		{
			name: "scaling up blocked by a missing template, Machines not ready",
			scope: &scope{ms: statusMachineSet(3, 0), getMachinesSucceeded: true, infrastructureTemplateNotFound: true,
				machines: []*clusterv1.Machine{testMachine("a", time.Hour, notReady), testMachine("b", 5*time.Second)}},
			want: map[string]metav1.Condition{
				"ScalingUp": {Status: metav1.ConditionTrue, Reason: "ScalingUp",
					Message: "Scaling up from 2 to 3 replicas is blocked because:\n* InfraTemplate infra does not exist"},
				"MachinesReady": {Status: metav1.ConditionFalse, Reason: "NotReady",
					Message: "* Machine a: * NodeHealthy: Node not ready\n* Machine b: Condition Ready not yet reported"},
				// b is new and has no UpToDate condition yet: it is not counted.
				"MachinesUpToDate": {Status: metav1.ConditionFalse, Reason: "NotUpToDate", Message: "* Machine a: * Version v1.30.0, v1.31.0 required"},
			},
			wantV1B1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Resized": {Status: "False", Severity: "Warning", Reason: "ScalingUp", Message: "Scaling up MachineSet to 3 replicas (actual 2)"},
			},
		},
		{
			name: "not scaling up, but it would be blocked; a Machine is not ready yet",
			scope: &scope{ms: statusMachineSet(2, 0), getMachinesSucceeded: true, infrastructureTemplateNotFound: true,
				machines: []*clusterv1.Machine{testMachine("a", time.Hour, ready), testMachine("b", time.Minute)}},
			want: map[string]metav1.Condition{
				"ScalingUp":        {Status: metav1.ConditionFalse, Reason: "NotScalingUp", Message: "Scaling up would be blocked because:\n* InfraTemplate infra does not exist"},
				"MachinesReady":    {Status: metav1.ConditionUnknown, Reason: "ReadyUnknown", Message: "* Machine b: Condition Ready not yet reported"},
				"MachinesUpToDate": {Status: metav1.ConditionUnknown, Reason: "UpToDateUnknown", Message: "* Machine b: Condition UpToDate not yet reported"},
			},
			wantV1B1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Resized": {Status: "False", Severity: "Info", Reason: "ScalingUp", Message: "Waiting for 1 of 2 Machines to be ready"},
			},
		},
		{
			name: "scaling down",
			scope: &scope{ms: statusMachineSet(1, 0), getMachinesSucceeded: true,
				machines: []*clusterv1.Machine{testMachine("a", time.Hour, ready), testMachine("b", time.Hour, ready)}},
			want: map[string]metav1.Condition{
				"ScalingDown": {Status: metav1.ConditionTrue, Reason: "ScalingDown", Message: "Scaling down from 2 to 1 replicas"},
			},
			wantV1B1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Resized": {Status: "False", Severity: "Warning", Reason: "ScalingDown", Message: "Scaling down MachineSet to 1 replicas (actual 2)"},
				"Ready":   {Status: "False", Severity: "Warning", Reason: "ScalingDown", Message: "Scaling down MachineSet to 1 replicas (actual 2)"},
			},
		},
		{
			name:  "invalid configuration",
			scope: &scope{ms: statusMachineSet(1, 0), getMachinesSucceeded: true, invalidConfiguration: "Spec.selector does not match the labels of spec.template.metadata"},
			want: map[string]metav1.Condition{
				"ScalingUp": {Status: metav1.ConditionTrue, Reason: "ScalingUp",
					Message: "Scaling up from 0 to 1 replicas is blocked because:\n* Spec.selector does not match the labels of spec.template.metadata"},
				"MachinesReady": {Status: metav1.ConditionTrue, Reason: "NoReplicas"},
			},
			wantV1B1: map[clusterv1.ConditionType]clusterv1.Condition{
				"MachinesCreated": {Status: "False", Severity: "Error", Reason: "InvalidConfiguration", Message: "Spec.selector does not match the labels of spec.template.metadata"},
			},
		},
		{
			name: "deleting, with a Machine stuck",
			scope: &scope{ms: func() *clusterv1.MachineSet {
				ms := statusMachineSet(2, 0)
				ms.DeletionTimestamp = ptr.To(metav1.NewTime(statusNow.Add(-time.Hour)))
				return ms
			}(), getMachinesSucceeded: true, machines: []*clusterv1.Machine{
				testMachine("a", time.Hour, ready, func(m *clusterv1.Machine) {
					m.DeletionTimestamp = ptr.To(metav1.NewTime(statusNow.Add(-20 * time.Minute)))
				}),
			}},
			want: map[string]metav1.Condition{
				"Deleting":    {Status: metav1.ConditionTrue, Reason: "Deleting", Message: "Deleting 1 Machine\n* Machine a is in deletion since more than 15m0s"},
				"ScalingDown": {Status: metav1.ConditionTrue, Reason: "ScalingDown", Message: "Scaling down from 1 to 0 replicas\n* Machine a is in deletion since more than 15m0s"},
			},
		},
		{
			name:  "listing Machines failed",
			scope: &scope{ms: statusMachineSet(2, 0)},
			want: map[string]metav1.Condition{
				"MachinesReady": {Status: metav1.ConditionUnknown, Reason: "InternalError", Message: "Please check controller logs for errors"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := tt.scope
			s.now = statusNow
			setStatus(s)
			for typ, want := range tt.want {
				c := conditions.GetV1Beta2(s.ms, typ)
				g.Expect(c).NotTo(BeNil(), typ)
				got := metav1.Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
				g.Expect(got).To(Equal(want), "%s: %s", typ, cmp.Diff(want, got))
			}
			for typ, want := range tt.wantV1B1 {
				c := conditions.Get(s.ms, typ)
				g.Expect(c).NotTo(BeNil(), string(typ))
				got := clusterv1.Condition{Status: c.Status, Severity: c.Severity, Reason: c.Reason, Message: c.Message}
				g.Expect(got).To(Equal(want), "%s: %s", typ, cmp.Diff(want, got))
			}
			g.Expect(s.ms.Status.ObservedGeneration).To(BeEquivalentTo(3))
		})
	}
}

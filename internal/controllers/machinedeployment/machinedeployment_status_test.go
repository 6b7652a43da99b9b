package machinedeployment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

func withV1Beta2Counters(ms *clusterv1.MachineSet, ready, available, upToDate int32) *clusterv1.MachineSet {
	ms.Status.V1Beta2 = &clusterv1.MachineSetV1Beta2Status{ReadyReplicas: ptr.To(ready), AvailableReplicas: ptr.To(available), UpToDateReplicas: ptr.To(upToDate)}
	return ms
}

func TestStatus(t *testing.T) {
	rolling := strategy{kind: clusterv1.RollingUpdateMachineDeploymentStrategyType, maxSurge: 1, maxUnavailable: 0, maxUnavailableText: "0"}
	mdWith := func(replicas int32) *clusterv1.MachineDeployment {
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Generation: 2},
			Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c", Replicas: ptr.To(replicas), Template: testTemplate()}}
		return md
	}
	oldTemplate := func(ms *clusterv1.MachineSet) *clusterv1.MachineSet {
		ms.Spec.Template = testTemplate()
		ms.Spec.Template.Spec.Version = ptr.To("v1.30.0")
		return ms
	}
	tests := []struct {
		name        string
		scope       func() *scope
		wantStatus  clusterv1.MachineDeploymentStatus
		wantV1Beta2 map[string]metav1.Condition
		wantV1Beta1 map[clusterv1.ConditionType]clusterv1.Condition
	}{
		{
			name: "running",
			scope: func() *scope {
				ms := withV1Beta2Counters(testMS("new", 1, 3, 3, 3), 3, 3, 3)
				return &scope{md: mdWith(3), strategy: rolling, machineSets: []*clusterv1.MachineSet{ms}, newMS: ms,
					getMachineSetsSucceeded: true, getMachinesSucceeded: true}
			},
			wantStatus: clusterv1.MachineDeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
				Phase: "Running", ObservedGeneration: 2, Selector: "cluster.x-k8s.io/cluster-name=c,cluster.x-k8s.io/deployment-name=md",
				V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](3), UpToDateReplicas: ptr.To[int32](3)}},
			wantV1Beta2: map[string]metav1.Condition{
				"Available":   {Status: metav1.ConditionTrue, Reason: "Available"},
				"RollingOut":  {Status: metav1.ConditionFalse, Reason: "NotRollingOut"},
				"ScalingUp":   {Status: metav1.ConditionFalse, Reason: "NotScalingUp"},
				"ScalingDown": {Status: metav1.ConditionFalse, Reason: "NotScalingDown"},
				"Deleting":    {Status: metav1.ConditionFalse, Reason: "NotDeleting"},
			},
			wantV1Beta1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Available": {Status: "True"}, "Ready": {Status: "True"},
				"MachineSetReady": {Status: "False", Severity: "Info", Reason: "WaitingForMachineSet", Message: "Waiting for MachineSet new to report its status"},
			},
		},
		{
			name: "rolling out with a surge Machine",
			scope: func() *scope {
				newMS := withV1Beta2Counters(testMS("new", 1, 1, 1, 0), 0, 0, 1)
				newMS.Status.Versions = []clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 1}}
				oldMS := withV1Beta2Counters(oldTemplate(testMS("old", 10, 3, 3, 3)), 3, 3, 0)
				// One old Machine's Node already runs the new kubelet (an in-place update).
				oldMS.Status.Versions = []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 2}, {Version: "v1.31.0", Replicas: 1}}
				return &scope{md: mdWith(3), strategy: rolling, machineSets: []*clusterv1.MachineSet{oldMS, newMS}, newMS: newMS,
					oldMSs: []*clusterv1.MachineSet{oldMS}, getMachineSetsSucceeded: true, getMachinesSucceeded: true}
			},
			wantStatus: clusterv1.MachineDeploymentStatus{Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3,
				UnavailableReplicas: 1, Phase: "Running", ObservedGeneration: 2, Selector: "cluster.x-k8s.io/cluster-name=c,cluster.x-k8s.io/deployment-name=md",
				V1Beta2:  &clusterv1.MachineDeploymentV1Beta2Status{ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](3), UpToDateReplicas: ptr.To[int32](1)},
				Versions: []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 2}, {Version: "v1.31.0", Replicas: 2}}},
			wantV1Beta2: map[string]metav1.Condition{
				"Available":   {Status: metav1.ConditionTrue, Reason: "Available"},
				"RollingOut":  {Status: metav1.ConditionTrue, Reason: "RollingOut", Message: "Rolling out 3 not up-to-date replicas\n* Version v1.30.0, v1.31.0 required"},
				"ScalingDown": {Status: metav1.ConditionTrue, Reason: "ScalingDown", Message: "Scaling down from 4 to 3 replicas"},
			},
		},
		{
			name: "scaling up, not available",
			scope: func() *scope {
				ms := withV1Beta2Counters(testMS("new", 1, 3, 1, 1), 1, 1, 1)
				return &scope{md: mdWith(3), strategy: rolling, machineSets: []*clusterv1.MachineSet{ms}, newMS: ms,
					getMachineSetsSucceeded: true, getMachinesSucceeded: true}
			},
			wantStatus: clusterv1.MachineDeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				UnavailableReplicas: 2, Phase: "ScalingUp", ObservedGeneration: 2, Selector: "cluster.x-k8s.io/cluster-name=c,cluster.x-k8s.io/deployment-name=md",
				V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{ReadyReplicas: ptr.To[int32](1), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](1)}},
			wantV1Beta2: map[string]metav1.Condition{
				"Available": {Status: metav1.ConditionFalse, Reason: "NotAvailable",
					Message: "1 available replicas, at least 3 required (spec.strategy.rollingUpdate.maxUnavailable is 0, spec.replicas is 3)"},
				"ScalingUp": {Status: metav1.ConditionTrue, Reason: "ScalingUp", Message: "Scaling up from 1 to 3 replicas"},
			},
			wantV1Beta1: map[clusterv1.ConditionType]clusterv1.Condition{
				"Available": {Status: "False", Severity: "Warning", Reason: "WaitingForAvailableMachines", Message: "Minimum availability requires 3 replicas, current 1 available"},
				"Ready":     {Status: "False", Severity: "Warning", Reason: "WaitingForAvailableMachines", Message: "Minimum availability requires 3 replicas, current 1 available"},
			},
		},
		{
			name: "invalid configuration",
			scope: func() *scope {
				return &scope{md: mdWith(2), strategy: rolling, invalidConfiguration: "Spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0",
					getMachineSetsSucceeded: true, getMachinesSucceeded: true}
			},
			wantStatus: clusterv1.MachineDeploymentStatus{Phase: "Failed", ObservedGeneration: 2, Selector: "cluster.x-k8s.io/cluster-name=c,cluster.x-k8s.io/deployment-name=md",
				V1Beta2: &clusterv1.MachineDeploymentV1Beta2Status{}},
			wantV1Beta2: map[string]metav1.Condition{
				"ScalingUp": {Status: metav1.ConditionTrue, Reason: "ScalingUp",
					Message: "Scaling up from 0 to 2 replicas is blocked because:\n* Spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0"},
				"MachinesReady": {Status: metav1.ConditionTrue, Reason: "NoReplicas"},
			},
			wantV1Beta1: map[clusterv1.ConditionType]clusterv1.Condition{
				"MachineSetReady": {Status: "False", Severity: "Error", Reason: "InvalidConfiguration",
					Message: "Spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0"},
				"Ready": {Status: "False", Severity: "Error", Reason: "InvalidConfiguration",
					Message: "Spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0"},
			},
		},
		{
			name: "deleting",
			scope: func() *scope {
				md := mdWith(2)
				md.DeletionTimestamp = ptr.To(metav1.Now())
				ms := testMS("new", 1, 2, 2, 2)
				return &scope{md: md, machineSets: []*clusterv1.MachineSet{ms}, machines: []*clusterv1.Machine{{}, {}},
					getMachineSetsSucceeded: true, getMachinesSucceeded: true}
			},
			wantV1Beta2: map[string]metav1.Condition{
				"Deleting":    {Status: metav1.ConditionTrue, Reason: "Deleting", Message: "Deleting 1 MachineSet and 2 Machines"},
				"Available":   {Status: metav1.ConditionFalse, Reason: "Deleting"},
				"ScalingDown": {Status: metav1.ConditionTrue, Reason: "ScalingDown", Message: "Scaling down from 2 to 0 replicas"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := tt.scope()
			s.now = base
			setStatus(s)
			if tt.wantStatus.ObservedGeneration != 0 {
				got := s.md.Status
				got.Conditions = nil
				if got.V1Beta2 != nil {
					got.V1Beta2 = got.V1Beta2.DeepCopy()
					got.V1Beta2.Conditions = nil
				}
				g.Expect(got).To(Equal(tt.wantStatus), cmp.Diff(tt.wantStatus, got))
			}
			for typ, want := range tt.wantV1Beta2 {
				c := conditions.GetV1Beta2(s.md, typ)
				g.Expect(c).NotTo(BeNil(), typ)
				got := metav1.Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
				g.Expect(got).To(Equal(want), "%s: %s", typ, cmp.Diff(want, got))
			}
			for typ, want := range tt.wantV1Beta1 {
				c := conditions.Get(s.md, typ)
				g.Expect(c).NotTo(BeNil(), string(typ))
				got := clusterv1.Condition{Status: c.Status, Severity: c.Severity, Reason: c.Reason, Message: c.Message}
				g.Expect(got).To(Equal(want), "%s: %s", typ, cmp.Diff(want, got))
			}
		})
	}
}

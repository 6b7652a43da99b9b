package conditions

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func machineWith(name string, conds ...metav1.Condition) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if len(conds) > 0 {
		m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: conds}
	}
	return m
}

func ready(status metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: "Ready", Status: status, Reason: "R", Message: msg}
}

var readyInput = MachinesConditionInput{ConditionType: "Ready", TargetType: "MachinesReady",
	TrueReason: "Ready", FalseReason: "NotReady", UnknownReason: "ReadyUnknown", NoReplicasReason: "NoReplicas"}

func TestMachinesCondition(t *testing.T) {
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		skip     func(*clusterv1.Machine) bool
		want     metav1.Condition
	}{
		{name: "no Machines", want: metav1.Condition{Type: "MachinesReady", Status: metav1.ConditionTrue, Reason: "NoReplicas"}},
		{name: "all True", machines: []*clusterv1.Machine{machineWith("a", ready(metav1.ConditionTrue, "")), machineWith("b", ready(metav1.ConditionTrue, ""))},
			want: metav1.Condition{Type: "MachinesReady", Status: metav1.ConditionTrue, Reason: "Ready"}},
		{name: "one False wins over Unknown, and both are listed",
			machines: []*clusterv1.Machine{machineWith("a", ready(metav1.ConditionTrue, "")), machineWith("b", ready(metav1.ConditionFalse, "Boot failed")), machineWith("c")},
			want: metav1.Condition{Type: "MachinesReady", Status: metav1.ConditionFalse, Reason: "NotReady",
				Message: "* Machine b: Boot failed\n* Machine c: Condition Ready not yet reported"}},
		{name: "not reported is Unknown",
			machines: []*clusterv1.Machine{machineWith("a", ready(metav1.ConditionTrue, "")), machineWith("c")},
			want:     metav1.Condition{Type: "MachinesReady", Status: metav1.ConditionUnknown, Reason: "ReadyUnknown", Message: "* Machine c: Condition Ready not yet reported"}},
		{name: "skipped Machines do not count",
			machines: []*clusterv1.Machine{machineWith("new")},
			skip:     func(m *clusterv1.Machine) bool { return m.Name == "new" },
			want:     metav1.Condition{Type: "MachinesReady", Status: metav1.ConditionTrue, Reason: "NoReplicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := readyInput
			in.Skip = tt.skip
			g.Expect(MachinesCondition(tt.machines, in)).To(Equal(tt.want))
		})
	}
}

func TestMachinesConditionGroupsMessages(t *testing.T) {
	g := NewWithT(t)
	notReady := func(name, msg string) *clusterv1.Machine { return machineWith(name, ready(metav1.ConditionFalse, msg)) }
	var machines []*clusterv1.Machine
	for _, name := range []string{"e", "d", "c", "b", "a"} {
		machines = append(machines, notReady(name, "Waiting for a Node"))
	}
	machines = append(machines, notReady("x", "Drain failed"), notReady("y", "Boot failed\nsee console"), notReady("z", "Disk full"))
	c := MachinesCondition(machines, readyInput)
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Message).To(Equal("* Machines a, b, c, ... (2 more): Waiting for a Node\n" +
		"* Machine x: Drain failed\n" +
		"* Machine y: Boot failed\n  see console\n" +
		"And 1 more Machine with other issues"))
}

func TestMachineNamesAndBullets(t *testing.T) {
	g := NewWithT(t)
	g.Expect(MachineNames([]string{"a"}, "is", "are")).To(Equal("Machine a is"))
	g.Expect(MachineNames([]string{"a", "b", "c", "d"}, "is", "are")).To(Equal("Machines a, b, c, ... (1 more) are"))
	g.Expect(Bullets([]string{"one", "two\nlines"})).To(Equal("* one\n* two\n  lines"))
}

func TestSetMachinesConditions(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now().Time
	ms := &clusterv1.MachineSet{}
	set := func(machines []*clusterv1.Machine, listed bool) {
		SetMachinesConditions(ms, machines, listed, clusterv1.MachineSetMachinesReadyV1Beta2Condition, clusterv1.MachineSetMachinesUpToDateV1Beta2Condition, now)
	}

	set(nil, false)
	for _, typ := range []string{clusterv1.MachineSetMachinesReadyV1Beta2Condition, clusterv1.MachineSetMachinesUpToDateV1Beta2Condition} {
		c := GetV1Beta2(ms, typ)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineSetMachinesReadyInternalErrorV1Beta2Reason))
		g.Expect(c.Message).To(Equal(InternalErrorMessage))
	}

	// A new Machine without an UpToDate condition is left out of MachinesUpToDate until its grace period
	// is over, not out of MachinesReady.
	young := machineWith("young")
	young.CreationTimestamp = metav1.NewTime(now.Add(-UpToDateGracePeriod / 2))
	old := machineWith("old")
	old.CreationTimestamp = metav1.NewTime(now.Add(-2 * UpToDateGracePeriod))
	set([]*clusterv1.Machine{young}, true)
	c := GetV1Beta2(ms, clusterv1.MachineSetMachinesUpToDateV1Beta2Condition)
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.Reason).To(Equal(clusterv1.MachineSetMachinesUpToDateNoReplicasV1Beta2Reason))
	c = GetV1Beta2(ms, clusterv1.MachineSetMachinesReadyV1Beta2Condition)
	g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(c.Reason).To(Equal(clusterv1.MachineSetMachinesReadyUnknownV1Beta2Reason))

	set([]*clusterv1.Machine{young, old}, true)
	c = GetV1Beta2(ms, clusterv1.MachineSetMachinesUpToDateV1Beta2Condition)
	g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(c.Reason).To(Equal(clusterv1.MachineSetMachinesUpToDateUnknownV1Beta2Reason))
	g.Expect(c.Message).To(Equal("* Machine old: Condition UpToDate not yet reported"))
}

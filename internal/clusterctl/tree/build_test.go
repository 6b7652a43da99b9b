package tree

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// outline returns the row names of a tree, indented by depth.
func outline(t *Tree) []string {
	var out []string
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		out = append(out, strings.Repeat("  ", depth)+n.RowName())
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(t.Root, 0)
	return out
}

// machinesUnder returns the rows under the first MachineDeployment of a tree.
func machinesUnder(t *Tree) []string {
	for _, n := range t.Root.Children {
		if n.MetaName != "Workers" {
			continue
		}
		var out []string
		for _, m := range n.Children[0].Children {
			out = append(out, m.RowName())
		}
		return out
	}
	return nil
}

func TestGrouping(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Objects)
		opts   Options
		want   []string
	}{
		{
			name: "machines in the same state share a row",
			opts: Options{Grouping: true},
			want: []string{"3 Machines..."},
		},
		{
			name: "without grouping, a row each",
			opts: Options{Grouping: false},
			want: []string{"Machine/demo-md-0-7f9c4-m0", "Machine/demo-md-0-7f9c4-m1", "Machine/demo-md-0-7f9c4-m2"},
		},
		{
			name:   "a machine in another state has its own row",
			change: func(o *Objects) { notReady(&o.Machines[1], "NotReady", "Waiting for the Node", time.Minute) },
			opts:   Options{Grouping: true},
			want:   []string{"2 Machines...", "Machine/demo-md-0-7f9c4-m1"},
		},
		{
			name: "a different reason is a different state",
			change: func(o *Objects) {
				notReady(&o.Machines[0], "NotReady", "Waiting for the Node", time.Minute)
				notReady(&o.Machines[1], "NotReady", "Waiting for the Node", time.Minute)
				notReady(&o.Machines[2], "Draining", "Draining the Node", time.Minute)
			},
			opts: Options{Grouping: true},
			want: []string{"2 Machines...", "Machine/demo-md-0-7f9c4-m2"},
		},
		{
			name: "UpToDate counts in the state",
			change: func(o *Objects) {
				for i := range o.Machines[2].Status.V1Beta2.Conditions {
					if c := &o.Machines[2].Status.V1Beta2.Conditions[i]; c.Type == "UpToDate" {
						c.Status, c.Reason = metav1.ConditionFalse, "NotUpToDate"
					}
				}
			},
			opts: Options{Grouping: true},
			want: []string{"2 Machines...", "Machine/demo-md-0-7f9c4-m2"},
		},
		{
			name: "with v1beta1 conditions, machines with the same Ready status, severity and reason share a row",
			change: func(o *Objects) {
				// The v1beta2 state differs, the v1beta1 one does not.
				o.Machines[2].Status.V1Beta2.Conditions[0].Reason = "Other"
			},
			opts: Options{Grouping: true, V1Beta1: true},
			want: []string{"3 Machines..."},
		},
		{
			name: "with v1beta1 conditions, severity counts",
			change: func(o *Objects) {
				notReady(&o.Machines[0], "NotReady", "", time.Minute)
				notReady(&o.Machines[1], "NotReady", "", time.Minute)
				o.Machines[1].Status.Conditions[0].Severity = clusterv1.ConditionSeverityError
			},
			opts: Options{Grouping: true, V1Beta1: true},
			want: []string{"Machine/demo-md-0-7f9c4-m0", "Machine/demo-md-0-7f9c4-m1", "Machine/demo-md-0-7f9c4-m2"},
		},
		{
			name: "a machine whose conditions are asked for keeps its row",
			opts: Options{Grouping: true, ShowConditions: mustFilter(t, "Machine/demo-md-0-7f9c4-m1")},
			want: []string{"2 Machines...", "Machine/demo-md-0-7f9c4-m1"},
		},
		{
			name: "with MachineSets shown, machines are grouped under their MachineSet",
			opts: Options{Grouping: true, ShowMachineSets: true},
			want: []string{"MachineSet/demo-md-0-7f9c4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := provisioned(3)
			if tt.change != nil {
				tt.change(objs)
			}
			g.Expect(machinesUnder(Build(objs, tt.opts))).To(Equal(tt.want))
		})
	}
}

func TestGroupRow(t *testing.T) {
	g := NewWithT(t)
	objs := provisioned(3)
	objs.Machines[2] = *notReady(&objs.Machines[2], "NotReady", "Waiting", time.Minute)
	tr := Build(objs, Options{Grouping: true})
	group := tr.Root.Children[1].Children[0].Children[0]
	g.Expect(group.IsGroup()).To(BeTrue())
	g.Expect(group.Items).To(Equal([]string{"demo-md-0-7f9c4-m0", "demo-md-0-7f9c4-m1"}))
	g.Expect([]string{group.available, group.ready, group.upToDate}).To(Equal([]string{"2", "2", "2"}))
	// The group's Ready condition is its members' with the oldest transition, without message.
	g.Expect(group.v2Ready.LastTransitionTime).To(Equal(t0.Add(5 * time.Minute)))
	g.Expect(seeItems(group.Items)).To(Equal("See demo-md-0-7f9c4-m0, demo-md-0-7f9c4-m1"))
	g.Expect(seeItems([]string{"a", "b", "c"})).To(Equal("See a, b, ..."))
}

func TestEcho(t *testing.T) {
	tests := []struct {
		name  string
		infra func(name string) *unstructured.Unstructured
		echo  bool
		want  bool
	}{
		{name: "a ready InfraMachine is an echo", infra: func(n string) *unstructured.Unstructured { return provider("LocalMachine", n, true) }},
		{name: "a ready InfraMachine is shown with --echo", infra: func(n string) *unstructured.Unstructured { return provider("LocalMachine", n, true) }, echo: true, want: true},
		{name: "a not ready InfraMachine explains its Machine", infra: func(n string) *unstructured.Unstructured { return provider("LocalMachine", n, false) }, want: true},
		{name: "an InfraMachine in its Machine's state is an echo", infra: func(n string) *unstructured.Unstructured {
			u := provider("LocalMachine", n, false)
			conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "v1beta2", "conditions")
			conditions[0].(map[string]any)["reason"] = "NotReady"
			_ = unstructured.SetNestedSlice(u.Object, conditions, "status", "v1beta2", "conditions")
			return u
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := provisioned(1)
			m := &objs.Machines[0]
			notReady(m, "NotReady", "Waiting for the Node", time.Minute)
			objs.MachineInfrastructure[m.Name] = tt.infra(m.Name)
			tr := Build(objs, Options{Grouping: true, Echo: tt.echo})
			machine := tr.Root.Children[1].Children[0].Children[0]
			g.Expect(machine.RowName()).To(Equal("Machine/demo-md-0-7f9c4-m0"))
			if tt.want {
				g.Expect(machine.Children).To(HaveLen(1))
				g.Expect(machine.Children[0].RowName()).To(Equal("MachineInfrastructure - LocalMachine/demo-md-0-7f9c4-m0"))
			} else {
				g.Expect(machine.Children).To(BeEmpty())
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	g := NewWithT(t)
	objs := provisioned(1)
	// A control plane with two machines, a machine of no MachineDeployment, and one being deleted.
	cp := provider("KubeadmControlPlane", "demo-cp", true)
	cp.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta1")
	_ = unstructured.SetNestedField(cp.Object, int64(2), "spec", "replicas")
	_ = unstructured.SetNestedField(cp.Object, int64(2), "status", "replicas")
	_ = unstructured.SetNestedMap(cp.Object, map[string]any{"availableReplicas": int64(2), "readyReplicas": int64(1), "upToDateReplicas": int64(2)}, "status", "v1beta2")
	_ = unstructured.SetNestedMap(cp.Object, map[string]any{"infrastructureRef": map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "LocalMachineTemplate", "name": "demo-cp"}}, "spec", "machineTemplate")
	objs.ControlPlane = cp
	objs.ControlPlaneContract = contract.V1Beta1
	for _, name := range []string{"demo-cp-a", "demo-cp-b"} {
		m := running(name, time.Minute)
		m.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: ""}
		objs.Machines = append(objs.Machines, *m)
	}
	orphan := running("standalone", time.Minute)
	orphan.DeletionTimestamp = ptr.To(at(time.Minute))
	objs.Machines = append(objs.Machines, *orphan)
	objs.ClusterResourceSets = []string{"crs-b", "crs-a"}

	tr := Build(objs, Options{Grouping: true, ShowTemplates: true, ShowResourceSets: true})
	want := []string{
		"Cluster/demo",
		"  ClusterInfrastructure - LocalCluster/demo",
		"  ClusterResourceSets",
		"    ClusterResourceSet/crs-a",
		"    ClusterResourceSet/crs-b",
		"  ControlPlane - KubeadmControlPlane/demo-cp",
		"    Templates",
		"      MachineInfrastructureTemplate - LocalMachineTemplate/demo-cp",
		"    2 Machines...",
		"  Workers",
		"    MachineDeployment/demo-md-0",
		"      Templates",
		"        MachineInfrastructureTemplate - LocalMachineTemplate/demo",
		"      Machine/demo-md-0-7f9c4-m0",
		"    Other",
		"      !! DELETED !! Machine/standalone",
	}
	g.Expect(outline(tr)).To(Equal(want), cmp.Diff(want, outline(tr)))

	cpNode := tr.Root.Children[2]
	g.Expect([]string{cpNode.replicas, cpNode.available, cpNode.ready, cpNode.upToDate}).To(Equal([]string{"2/2", "2", "1", "2"}))
}

func TestControlPlaneCounters(t *testing.T) {
	tests := []struct {
		name     string
		contract contract.Version
		status   map[string]any
		want     []string
	}{
		{
			name: "v1beta2 contract: counters at the top of status", contract: contract.V1Beta2,
			status: map[string]any{"replicas": int64(3), "availableReplicas": int64(3), "readyReplicas": int64(2), "upToDateReplicas": int64(1)},
			want:   []string{"3/3", "3", "2", "1"},
		},
		{
			name: "v1beta1 contract: counters under status.v1beta2", contract: contract.V1Beta1,
			status: map[string]any{"replicas": int64(3), "readyReplicas": int64(9), "v1beta2": map[string]any{"availableReplicas": int64(1), "readyReplicas": int64(2)}},
			want:   []string{"3/3", "1", "2", ""},
		},
		{
			name: "no status", contract: contract.V1Beta2,
			want: []string{"", "", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(3)}}}
			u.SetKind("KubeadmControlPlane")
			u.SetName("cp")
			if tt.status != nil {
				u.Object["status"] = tt.status
			}
			n := controlPlaneNode(u, tt.contract)
			g.Expect([]string{n.replicas, n.available, n.ready, n.upToDate}).To(Equal(tt.want))
		})
	}
}

func TestClusterCounters(t *testing.T) {
	g := NewWithT(t)
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	n := clusterNode(c)
	g.Expect([]string{n.replicas, n.available, n.ready, n.upToDate}).To(Equal([]string{"", "", "", ""}))

	// Control plane and workers are summed.
	c.Status.V1Beta2 = &clusterv1.ClusterV1Beta2Status{
		ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](3), Replicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](3)},
		Workers:      &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](5), Replicas: ptr.To[int32](4), AvailableReplicas: ptr.To[int32](4)},
	}
	n = clusterNode(c)
	g.Expect([]string{n.replicas, n.available, n.ready, n.upToDate}).To(Equal([]string{"7/8", "4", "3", ""}))
}

func TestUnstructuredConditions(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "severity": "Error", "reason": "Broken", "lastTransitionTime": "2026-01-01T00:01:00Z"},
			"not a condition",
			map[string]any{"type": "NoStatus"},
		},
	}}}
	// Without status.v1beta2, the v1beta2 conditions are status.conditions (v1beta2-contract providers).
	g.Expect(v1beta2Conditions(u)).To(Equal([]Condition{{Type: "Ready", Status: "False", Reason: "Broken", LastTransitionTime: t0.Add(time.Minute)}}))
	g.Expect(v1beta1Conditions(u)).To(Equal([]Condition{{Type: "Ready", Status: "False", Severity: "Error", Reason: "Broken", LastTransitionTime: t0.Add(time.Minute)}}))

	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready"}}, "status", "v1beta2", "conditions")
	g.Expect(v1beta2Conditions(u)).To(Equal([]Condition{{Type: "Ready", Status: "True", Reason: "Ready"}}))

	m := running("m", 0)
	g.Expect(find(v1beta1Conditions(m), "Ready").Status).To(Equal(string(corev1.ConditionTrue)))
}

func mustFilter(t *testing.T, s string) ConditionFilter {
	t.Helper()
	f, err := ParseConditionFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMachinePools: a MachinePool is a worker row with its counters, its InfraMachinePool when it is not
// ready (a ready bootstrap config only echoes the pool), and the Machines it controls.
func TestMachinePools(t *testing.T) {
	g := NewWithT(t)
	objs := provisioned(0)
	mp := clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo-mp", UID: "mp-uid"},
		Spec:       clusterv1.MachinePoolSpec{ClusterName: "demo", Replicas: ptr.To[int32](3)},
		Status: clusterv1.MachinePoolStatus{Replicas: 2, V1Beta2: &clusterv1.MachinePoolV1Beta2Status{
			ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](2)}},
	}
	objs.MachinePools = []clusterv1.MachinePool{mp}
	objs.MachinePoolBootstrap = map[string]*unstructured.Unstructured{"demo-mp": provider("KubeadmConfig", "demo-mp", true)}
	objs.MachinePoolInfrastructure = map[string]*unstructured.Unstructured{"demo-mp": provider("LocalMachinePool", "demo-mp", false)}
	for _, name := range []string{"demo-mp-0", "demo-mp-1"} {
		m := running(name, time.Minute)
		m.OwnerReferences = []metav1.OwnerReference{{Kind: "MachinePool", Name: "demo-mp", UID: "mp-uid", Controller: ptr.To(true)}}
		objs.Machines = append(objs.Machines, *m)
	}

	tr := Build(objs, Options{})
	want := []string{
		"Cluster/demo",
		"  ClusterInfrastructure - LocalCluster/demo",
		"  Workers",
		"    MachineDeployment/demo-md-0",
		"    MachinePool/demo-mp",
		"      Machine/demo-mp-0",
		"      Machine/demo-mp-1",
		"      MachinePoolInfrastructure - LocalMachinePool/demo-mp",
	}
	g.Expect(outline(tr)).To(Equal(want), cmp.Diff(want, outline(tr)))
	pool := tr.Root.Children[1].Children[1]
	g.Expect([]string{pool.replicas, pool.available, pool.ready, pool.upToDate}).To(Equal([]string{"2/3", "1", "2", "2"}))
}

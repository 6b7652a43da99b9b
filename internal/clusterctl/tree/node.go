package tree

import (
	"fmt"
	"slices"
	"time"

	"github.com/gobuffalo/flect"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// Node is a row of the tree and the rows under it.
type Node struct {
	// APIVersion, Kind and Name identify the object; a group node has the APIVersion and Kind of the
	// objects it stands for. APIVersion is empty for virtual nodes.
	APIVersion string
	Kind       string
	Name       string
	// MetaName is the role of the object in the Cluster, printed before it: ClusterInfrastructure,
	// ControlPlane, MachineInfrastructure, BootstrapConfig, ...; for a virtual node, its name.
	MetaName string
	// Virtual nodes (Workers, Templates, ClusterResourceSets, Other) stand for no object: their row shows
	// only their name.
	Virtual bool
	// Deleting is set when the object has a deletion timestamp.
	Deleting bool
	// Items are the names of the objects a group node stands for, sorted; nil for other nodes.
	Items []string
	// Children are the rows under this one, in print order once the tree is built.
	Children []*Node

	// zOrder sorts siblings: higher first, then by row name.
	zOrder int
	// show is how many conditions to list under the row (--show-conditions).
	show ShowConditions
	// groupChildren says that children of the same kind in the same state are grouped on one row.
	groupChildren bool

	// Counters of the v1beta2 layout; empty when the object does not report them.
	replicas, available, ready, upToDate string
	// summary is the type of the condition the v1beta2 row shows (Available or Ready); empty for none.
	summary string

	// v2 and v1 are the object's v1beta2 and v1beta1 conditions.
	v2, v1 []Condition
	// The state that decides grouping and echoes: the Available, Ready and UpToDate v1beta2 conditions
	// and the Ready v1beta1 condition.
	v2Available, v2Ready, v2UpToDate, v1Ready *Condition
	// Counters of a group: how many of its items are available, ready and up to date.
	groupAvailable, groupReady, groupUpToDate int
}

// IsGroup reports whether the node stands for several objects in the same state.
func (n *Node) IsGroup() bool { return n.Items != nil }

// RowName is the name column of the node's row without tree lines and colors: "Kind/name",
// "MetaName - Kind/name", "3 Machines..." for a group, the name of a virtual node, prefixed with
// "!! DELETED !! " for objects being deleted.
func (n *Node) RowName() string { return n.rowName(plain) }

func (n *Node) rowName(p painter) string {
	switch {
	case n.IsGroup():
		return p.paint(whiteBold, fmt.Sprintf("%d %s...", len(n.Items), flect.Pluralize(n.Kind)))
	case n.Virtual:
		return n.MetaName
	}
	name := n.Kind + "/" + p.paint(bold, n.Name)
	if n.MetaName != "" {
		name = n.MetaName + " - " + p.paint(gray, name)
	}
	if n.Deleting {
		name = p.paint(red, "!! DELETED !!") + " " + name
	}
	return name
}

// objectNode returns the node of an object with its conditions.
func objectNode(kind, name string, deletion *metav1.Time, obj any) *Node {
	n := &Node{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, Deleting: deletion != nil && !deletion.IsZero()}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		n.APIVersion = u.GetAPIVersion()
	}
	n.v2 = v1beta2Conditions(obj)
	n.v1 = v1beta1Conditions(obj)
	n.v2Available = find(n.v2, availableCondition)
	n.v2Ready = find(n.v2, readyCondition)
	n.v1Ready = find(n.v1, string(clusterv1.ReadyCondition))
	return n
}

func virtualNode(name string) *Node { return &Node{Virtual: true, MetaName: name} }

// referenceNode is the row of an object known only by a reference (a template, a ClusterResourceSet).
func referenceNode(ref *corev1.ObjectReference, metaName string) *Node {
	return &Node{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, MetaName: metaName}
}

func clusterNode(c *clusterv1.Cluster) *Node {
	n := objectNode("Cluster", c.Name, c.DeletionTimestamp, c)
	n.summary = availableCondition
	s := c.Status.V1Beta2
	if s == nil {
		return n
	}
	cp := ptr.Deref(s.ControlPlane, clusterv1.ClusterControlPlaneStatus{})
	w := ptr.Deref(s.Workers, clusterv1.WorkersStatus{})
	// Control plane and worker counters are summed, as upstream does.
	sum := func(a, b *int32) string {
		if a == nil && b == nil {
			return ""
		}
		return fmt.Sprint(ptr.Deref(a, 0) + ptr.Deref(b, 0))
	}
	if cp.Replicas != nil || w.Replicas != nil || cp.DesiredReplicas != nil || w.DesiredReplicas != nil {
		n.replicas = fmt.Sprintf("%d/%d", ptr.Deref(cp.Replicas, 0)+ptr.Deref(w.Replicas, 0),
			ptr.Deref(cp.DesiredReplicas, 0)+ptr.Deref(w.DesiredReplicas, 0))
	}
	n.available = sum(cp.AvailableReplicas, w.AvailableReplicas)
	n.ready = sum(cp.ReadyReplicas, w.ReadyReplicas)
	n.upToDate = sum(cp.UpToDateReplicas, w.UpToDateReplicas)
	return n
}

// replicasNode is the row of an object that owns Machines (MachineDeployment, MachineSet, MachinePool):
// its replicas and the v1beta2 counters it reports under status.v1beta2. summary is the condition the row
// shows: Available for MachineDeployments and MachinePools, none for MachineSets (unless all are listed).
func replicasNode(kind string, obj client.Object, summary string) *Node {
	n := objectNode(kind, obj.GetName(), obj.GetDeletionTimestamp(), obj)
	n.summary = summary
	if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err == nil {
		n.setReplicaCounters(u, "status", "v1beta2")
	}
	return n
}

// machineNode is the row of a Machine: its counters are 1 or 0 by its Available, Ready and UpToDate
// conditions, and it shows its Ready condition.
func machineNode(m *clusterv1.Machine) *Node {
	n := objectNode("Machine", m.Name, m.DeletionTimestamp, m)
	n.summary = readyCondition
	n.v2UpToDate = find(n.v2, upToDateCondition)
	n.replicas = "1"
	n.available, n.ready, n.upToDate = oneIfTrue(n.v2Available), oneIfTrue(n.v2Ready), oneIfTrue(n.v2UpToDate)
	return n
}

// providerNode is the row of a provider object (InfraCluster, InfraMachine, BootstrapConfig): it shows the
// object's Ready condition.
func providerNode(u *unstructured.Unstructured, metaName string) *Node {
	n := objectNode(u.GetKind(), u.GetName(), u.GetDeletionTimestamp(), u)
	n.MetaName = metaName
	n.summary = readyCondition
	return n
}

// controlPlaneNode is the row of a control plane object: the counters of the control plane contract and
// its Available condition (Ready when it has none).
func controlPlaneNode(u *unstructured.Unstructured, c contract.Version) *Node {
	n := providerNode(u, "ControlPlane")
	if n.v2Available != nil {
		n.summary = availableCondition
	}
	counters := []string{"status"}
	if c != contract.V1Beta2 {
		// v1beta1 control planes report the v1beta2 counters under status.v1beta2.
		counters = []string{"status", "v1beta2"}
	}
	n.setReplicaCounters(u.Object, counters...)
	return n
}

// setReplicaCounters sets the counters of an object with replicas from its fields: "current/desired"
// from status.replicas and spec.replicas when it has both, and the available, ready and up-to-date
// replicas under the path counters.
func (n *Node) setReplicaCounters(obj map[string]any, counters ...string) {
	field := func(path ...string) *int32 {
		v, found, err := unstructured.NestedInt64(obj, path...)
		if err != nil || !found {
			return nil
		}
		return ptr.To(int32(v))
	}
	current, desired := field("status", "replicas"), field("spec", "replicas")
	if current != nil && desired != nil {
		n.replicas = fmt.Sprintf("%d/%d", *current, *desired)
	}
	n.available = counter(field(append(slices.Clone(counters), "availableReplicas")...))
	n.ready = counter(field(append(slices.Clone(counters), "readyReplicas")...))
	n.upToDate = counter(field(append(slices.Clone(counters), "upToDateReplicas")...))
}

// groupNode returns the node that stands for two sibling objects in the same state. Like upstream, its
// Ready condition is the members' with the oldest transition and no message; the message column lists
// the members instead.
func groupNode(a, b *Node) *Node {
	g := &Node{APIVersion: a.APIVersion, Kind: a.Kind, Name: a.Name, Items: []string{}, zOrder: a.zOrder, summary: readyCondition}
	g.v2Available = stateOnly(a.v2Available)
	g.v2Ready = stateOnly(a.v2Ready)
	g.v2UpToDate = stateOnly(a.v2UpToDate)
	g.v1Ready = stateOnly(a.v1Ready)
	g.join(a)
	g.join(b)
	return g
}

// join adds an object in the group's state to a group.
func (n *Node) join(member *Node) {
	n.Items = append(n.Items, member.Name)
	slices.Sort(n.Items)
	if member.v2Available.isTrue() {
		n.groupAvailable++
	}
	if member.v2Ready.isTrue() {
		n.groupReady++
	}
	if member.v2UpToDate.isTrue() {
		n.groupUpToDate++
	}
	n.available, n.ready, n.upToDate = fmt.Sprint(n.groupAvailable), fmt.Sprint(n.groupReady), fmt.Sprint(n.groupUpToDate)
	n.v2Ready = oldest(n.v2Ready, member.v2Ready)
	n.v1Ready = oldest(n.v1Ready, member.v1Ready)
	n.v2 = nonNil(n.v2Available, n.v2Ready, n.v2UpToDate)
	n.v1 = nonNil(n.v1Ready)
}

// stateOnly copies a condition without its message and transition time.
func stateOnly(c *Condition) *Condition {
	if c == nil {
		return nil
	}
	return &Condition{Type: c.Type, Status: c.Status, Severity: c.Severity, Reason: c.Reason}
}

// oldest returns group's condition with the older of the two transition times.
func oldest(group, member *Condition) *Condition {
	if group == nil || member == nil {
		return group
	}
	out := *group
	if out.LastTransitionTime.IsZero() || (!member.LastTransitionTime.IsZero() && member.LastTransitionTime.Before(out.LastTransitionTime)) {
		out.LastTransitionTime = member.LastTransitionTime
	}
	return &out
}

func nonNil(cs ...*Condition) []Condition {
	var out []Condition
	for _, c := range cs {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

func counter(v *int32) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

func oneIfTrue(c *Condition) string {
	if c.isTrue() {
		return "1"
	}
	return "0"
}

// since is how long ago a condition changed, as kubectl prints ages ("10s", "3m", "2d3h"); empty when the
// time is unknown.
func since(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(max(now.Sub(t), 0))
}

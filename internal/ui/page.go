package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/tree"
	"github.com/capstan-dev/capstan/internal/topology"
)

// viewOptions are the options of a Cluster's tree a viewer chose, as `clusterctl describe cluster`'s
// flags: --grouping (on by default), --show-machinesets, --show-templates, --echo,
// --show-resourcesets and --v1beta2=false.
type viewOptions struct {
	Grouping     bool
	MachineSets  bool
	Templates    bool
	Echo         bool
	ResourceSets bool
	V1Beta1      bool
}

// viewOptionsFrom reads the options from a query: grouping=0 turns grouping off, machinesets=1,
// templates=1, echo=1, resourcesets=1 and v1beta1=1 turn the others on.
func viewOptionsFrom(q url.Values) viewOptions {
	on := func(name string) bool { v := q.Get(name); return v == "1" || v == "true" }
	return viewOptions{
		Grouping:    q.Get("grouping") != "0" && q.Get("grouping") != "false",
		MachineSets: on("machinesets"), Templates: on("templates"), Echo: on("echo"),
		ResourceSets: on("resourcesets"), V1Beta1: on("v1beta1"),
	}
}

func (o viewOptions) tree() tree.Options {
	return tree.Options{Grouping: o.Grouping, ShowMachineSets: o.MachineSets, ShowTemplates: o.Templates,
		Echo: o.Echo, ShowResourceSets: o.ResourceSets, V1Beta1: o.V1Beta1}
}

// Page is what a Cluster's page shows.
type Page struct {
	Cluster *ClusterRow `json:"cluster"`
	// Tree is the tree of `clusterctl describe cluster` with the viewer's options.
	Tree    *TreeNode `json:"tree"`
	V1Beta1 bool      `json:"v1beta1"`
	// Topology is the ClusterClass section; nil for a Cluster without spec.topology.
	Topology *TopologyView `json:"topology,omitempty"`
	Upgrade  *UpgradeView  `json:"upgrade"`
	Nodes    NodesView     `json:"nodes"`
	// Warnings say what the page leaves out and why.
	Warnings []string `json:"warnings,omitempty"`
}

// TreeNode is a row of the tree.
type TreeNode struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	MetaName   string `json:"metaName,omitempty"`
	Virtual    bool   `json:"virtual,omitempty"`
	Deleting   bool   `json:"deleting,omitempty"`
	// Items are the names of the objects a group row stands for.
	Items []string `json:"items,omitempty"`
	// Row is the NAME column of describe.
	Row       string `json:"row"`
	Replicas  string `json:"replicas,omitempty"`
	Available string `json:"available,omitempty"`
	Ready     string `json:"ready,omitempty"`
	UpToDate  string `json:"upToDate,omitempty"`
	// Summary is the condition the row shows (STATUS, REASON, SINCE, MESSAGE), Tone its colour.
	Summary *Condition `json:"summary,omitempty"`
	Tone    tree.Tone  `json:"tone"`
	// Conditions are all the object's conditions (v1beta2, or v1beta1 with that option); Attention
	// counts those not in their normal state.
	Conditions []Condition `json:"conditions,omitempty"`
	Attention  int         `json:"attention,omitempty"`
	Children   []*TreeNode `json:"children,omitempty"`
}

// Condition is a condition as the page shows it.
type Condition struct {
	Type               string     `json:"type"`
	Status             string     `json:"status"`
	Severity           string     `json:"severity,omitempty"`
	Reason             string     `json:"reason,omitempty"`
	Message            string     `json:"message,omitempty"`
	LastTransitionTime *time.Time `json:"lastTransitionTime,omitempty"`
	Tone               tree.Tone  `json:"tone"`
}

func conditionOf(c *tree.Condition, v1beta1 bool) *Condition {
	if c == nil {
		return nil
	}
	out := &Condition{Type: c.Type, Status: c.Status, Severity: c.Severity, Reason: c.Reason, Message: c.Message,
		Tone: tree.ToneOf(c, v1beta1)}
	if !c.LastTransitionTime.IsZero() {
		t := c.LastTransitionTime
		out.LastTransitionTime = &t
	}
	return out
}

func conditionsOf(list []tree.Condition, v1beta1 bool) []Condition {
	out := make([]Condition, 0, len(list))
	for i := range list {
		out = append(out, *conditionOf(&list[i], v1beta1))
	}
	return out
}

func treeNodeOf(n *tree.Node, v1beta1 bool) *TreeNode {
	out := &TreeNode{APIVersion: n.APIVersion, Kind: n.Kind, Name: n.Name, MetaName: n.MetaName, Virtual: n.Virtual,
		Deleting: n.Deleting, Items: n.Items, Row: n.RowName()}
	if n.Virtual {
		out.Kind, out.Name, out.APIVersion = "", "", ""
	}
	out.Replicas, out.Available, out.Ready, out.UpToDate = n.Counters()
	out.Summary = conditionOf(n.Summary(v1beta1), v1beta1)
	out.Tone = tree.ToneNone
	if out.Summary != nil {
		out.Tone = out.Summary.Tone
	}
	v2, v1 := n.Conditions()
	list := v2
	if v1beta1 {
		list = v1
	}
	out.Conditions = conditionsOf(list, v1beta1)
	for _, c := range out.Conditions {
		if c.Tone != tree.ToneGood {
			out.Attention++
		}
	}
	for _, c := range n.Children {
		out.Children = append(out.Children, treeNodeOf(c, v1beta1))
	}
	return out
}

// pageData is what a page is computed from, read once for all the viewers of a Cluster.
type pageData struct {
	key      key
	objs     *tree.Objects
	row      *ClusterRow
	class    *clusterv1.ClusterClass
	classErr string
	warnings []string
}

// discover reads a Cluster's objects (and its ClusterClass) from the cache; errGone when the Cluster does
// not exist.
func (h *hub) discover(ctx context.Context, k key) (*pageData, error) {
	r := &clusterReader{h: h, cluster: k.Name}
	objs, err := tree.Discover(ctx, r, k.Namespace, k.Name, tree.DiscoverOptions{ClusterResourceSets: true})
	if isMissing(err) {
		return nil, errGone
	}
	if err != nil {
		return nil, err
	}
	d := &pageData{key: k, objs: objs, row: clusterRow(objs.Cluster)}
	if d.row.Version == "" && objs.ControlPlane != nil {
		d.row.Version, _, _ = unstructured.NestedString(objs.ControlPlane.Object, "spec", "version")
	}
	if t := objs.Cluster.Spec.Topology; t != nil {
		ns := cmp.Or(t.ClassNamespace, k.Namespace)
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClass"))
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: t.Class}, u)
		if err == nil {
			d.class = &clusterv1.ClusterClass{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d.class)
		}
		if err != nil {
			d.class, d.classErr = nil, fmt.Sprintf("Reading ClusterClass %s/%s: %v", ns, t.Class, err)
		}
	}
	d.warnings = r.warnings
	return d, nil
}

// owned are the objects of the page whose changes and Events the page shows.
func (d *pageData) owned() []objKey {
	ns := d.key.Namespace
	out := []objKey{{Kind: "Cluster", Namespace: ns, Name: d.key.Name}}
	add := func(kind, name string) { out = append(out, objKey{Kind: kind, Namespace: ns, Name: name}) }
	addU := func(u *unstructured.Unstructured) {
		if u != nil {
			add(u.GetKind(), u.GetName())
		}
	}
	o := d.objs
	addU(o.Infrastructure)
	addU(o.ControlPlane)
	for _, md := range o.MachineDeployments {
		add("MachineDeployment", md.Name)
	}
	for _, ms := range o.MachineSets {
		add("MachineSet", ms.Name)
	}
	for _, m := range o.Machines {
		add("Machine", m.Name)
	}
	for _, mp := range o.MachinePools {
		add("MachinePool", mp.Name)
	}
	for _, m := range []map[string]*unstructured.Unstructured{o.MachineInfrastructure, o.BootstrapConfigs, o.MachinePoolInfrastructure, o.MachinePoolBootstrap} {
		for _, u := range m {
			addU(u)
		}
	}
	if d.class != nil {
		out = append(out, objKey{Kind: "ClusterClass", Namespace: d.class.Namespace, Name: d.class.Name})
	}
	return out
}

// page computes the page for a viewer's options; nodes may be nil (nobody watches them).
func (d *pageData) page(ctx context.Context, o viewOptions, nodes *nodesWatcher) *Page {
	t := tree.Build(d.objs, o.tree())
	p := &Page{Cluster: d.row, Tree: treeNodeOf(t.Root, o.V1Beta1), V1Beta1: o.V1Beta1, Warnings: d.warnings}
	if nodes != nil {
		p.Nodes = nodes.snapshot()
	} else {
		p.Nodes = NodesView{State: NodesNotWatched, Message: "The Nodes are watched while the page is open"}
	}
	p.Upgrade = upgradeView(d.objs, p.Nodes.Items)
	if d.objs.Cluster.Spec.Topology != nil {
		p.Topology = topologyView(ctx, d.objs.Cluster, d.class, d.classErr)
	}
	return p
}

func encodePage(p *Page) []byte {
	data, err := json.Marshal(p)
	if err != nil {
		// Every field of a Page encodes.
		panic(err)
	}
	return data
}

// TopologyView is the ClusterClass section of a Cluster with a managed topology.
type TopologyView struct {
	Class          string `json:"class"`
	ClassNamespace string `json:"classNamespace"`
	Version        string `json:"version"`
	// Error says why the class could not be read.
	Error string `json:"error,omitempty"`
	// Reconciled is the Cluster's TopologyReconciled condition.
	Reconciled *Condition `json:"reconciled,omitempty"`
	// ClassConditions are the ClusterClass's v1beta2 conditions (VariablesReady, RefVersionsUpToDate...).
	ClassConditions []Condition    `json:"classConditions,omitempty"`
	Variables       []VariableView `json:"variables"`
	Patches         []PatchView    `json:"patches"`
	// ControlPlaneReplicas and MachineDeployments are the topology's.
	ControlPlaneReplicas *int32                 `json:"controlPlaneReplicas,omitempty"`
	MachineDeployments   []TopologyMachineGroup `json:"machineDeployments,omitempty"`
}

// TopologyMachineGroup is a MachineDeployment of the topology.
type TopologyMachineGroup struct {
	Name     string `json:"name"`
	Class    string `json:"class"`
	Replicas *int32 `json:"replicas,omitempty"`
}

// VariableView is a variable of the class and the Cluster's value of it.
type VariableView struct {
	Name        string `json:"name"`
	Required    bool   `json:"required"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	// Default is the schema's default, as JSON.
	Default string `json:"default,omitempty"`
	// Value is the Cluster's value, as JSON; "" when the Cluster sets none.
	Value string `json:"value,omitempty"`
	// From is the definition's source: "inline" or the name of the Runtime Extension patch.
	From string `json:"from,omitempty"`
}

// PatchView is a patch of the class.
type PatchView struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	EnabledIf   string `json:"enabledIf,omitempty"`
	External    bool   `json:"external,omitempty"`
	// Enabled is whether enabledIf holds for the Cluster; nil when it cannot be told at its level (Note).
	Enabled *bool  `json:"enabled,omitempty"`
	Note    string `json:"note,omitempty"`
}

func topologyView(ctx context.Context, c *clusterv1.Cluster, class *clusterv1.ClusterClass, classErr string) *TopologyView {
	t := c.Spec.Topology
	v := &TopologyView{Class: t.Class, ClassNamespace: cmp.Or(t.ClassNamespace, c.Namespace), Version: t.Version, Error: classErr,
		ControlPlaneReplicas: t.ControlPlane.Replicas}
	if t.Workers != nil {
		for _, md := range t.Workers.MachineDeployments {
			v.MachineDeployments = append(v.MachineDeployments, TopologyMachineGroup{Name: md.Name, Class: md.Class, Replicas: md.Replicas})
		}
	}
	if s := c.Status.V1Beta2; s != nil {
		for i := range s.Conditions {
			if s.Conditions[i].Type == clusterv1.ClusterTopologyReconciledV1Beta2Condition {
				cond := s.Conditions[i]
				v.Reconciled = conditionOf(&tree.Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason,
					Message: cond.Message, LastTransitionTime: cond.LastTransitionTime.Time}, false)
			}
		}
	}
	values := map[string]string{}
	for _, cv := range t.Variables {
		values[cv.Name] = string(cv.Value.Raw)
	}
	if class == nil {
		return v
	}
	if s := class.Status.V1Beta2; s != nil {
		for _, cond := range s.Conditions {
			v.ClassConditions = append(v.ClassConditions, *conditionOf(&tree.Condition{Type: cond.Type, Status: string(cond.Status),
				Reason: cond.Reason, Message: cond.Message, LastTransitionTime: cond.LastTransitionTime.Time}, false))
		}
	}
	// The class's status lists every variable, those of Runtime Extensions too; its spec the inline ones.
	if len(class.Status.Variables) > 0 {
		for _, sv := range class.Status.Variables {
			if len(sv.Definitions) == 0 {
				continue
			}
			def := sv.Definitions[0]
			v.Variables = append(v.Variables, variableView(sv.Name, def.Required, def.Schema, def.From, values))
		}
	} else {
		for _, cv := range class.Spec.Variables {
			v.Variables = append(v.Variables, variableView(cv.Name, cv.Required, cv.Schema, "inline", values))
		}
	}
	slices.SortFunc(v.Variables, func(a, b VariableView) int { return cmp.Compare(a.Name, b.Name) })

	states, err := topology.PatchesEnabled(ctx, class, c)
	for i, p := range class.Spec.Patches {
		pv := PatchView{Name: p.Name, Description: p.Description, EnabledIf: ptr.Deref(p.EnabledIf, ""), External: p.External != nil}
		switch {
		case err != nil:
			pv.Note = fmt.Sprintf("Cannot tell: %v", err)
		case states[i].Err != nil:
			pv.Note = fmt.Sprintf("Evaluated for each template: %v", states[i].Err)
		default:
			pv.Enabled = ptr.To(states[i].Enabled)
		}
		v.Patches = append(v.Patches, pv)
	}
	return v
}

func variableView(name string, required bool, s clusterv1.VariableSchema, from string, values map[string]string) VariableView {
	v := VariableView{Name: name, Required: required, Type: s.OpenAPIV3Schema.Type, Description: s.OpenAPIV3Schema.Description,
		Value: values[name], From: from}
	if d := s.OpenAPIV3Schema.Default; d != nil {
		v.Default = string(d.Raw)
	}
	return v
}

// UpgradeView is the version of each Machine, by control plane and MachineDeployment, to follow a rollout.
type UpgradeView struct {
	// Target is the version the Cluster is going to: spec.topology.version, or the control plane's.
	Target string         `json:"target"`
	Groups []VersionGroup `json:"groups"`
}

// VersionGroup is the control plane, a MachineDeployment, a MachinePool or the other Machines.
type VersionGroup struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Version is the group's desired version (spec.version, or the template's).
	Version string `json:"version,omitempty"`
	// AtTarget counts the Machines whose version is the target.
	AtTarget int              `json:"atTarget"`
	Machines []MachineVersion `json:"machines"`
}

// MachineVersion is a Machine's version and state.
type MachineVersion struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Phase    string `json:"phase,omitempty"`
	UpToDate string `json:"upToDate,omitempty"`
	Node     string `json:"node,omitempty"`
	// NodeVersion is the kubelet version the workload cluster's Node reports, when its Nodes are watched.
	NodeVersion string `json:"nodeVersion,omitempty"`
	Deleting    bool   `json:"deleting,omitempty"`
}

func upgradeView(o *tree.Objects, nodes []NodeView) *UpgradeView {
	v := &UpgradeView{}
	kubelet := map[string]string{}
	for _, n := range nodes {
		kubelet[n.Name] = n.Version
	}
	var cpVersion string
	if o.ControlPlane != nil {
		cpVersion, _, _ = unstructured.NestedString(o.ControlPlane.Object, "spec", "version")
	}
	v.Target = cpVersion
	if t := o.Cluster.Spec.Topology; t != nil {
		v.Target = t.Version
	}
	groups := map[string]*VersionGroup{}
	var order []string
	group := func(kind, name, version string) *VersionGroup {
		id := kind + "/" + name
		if g, ok := groups[id]; ok {
			return g
		}
		g := &VersionGroup{Kind: kind, Name: name, Version: version, Machines: []MachineVersion{}}
		groups[id] = g
		order = append(order, id)
		return g
	}
	if o.ControlPlane != nil {
		group(o.ControlPlane.GetKind(), o.ControlPlane.GetName(), cpVersion)
	}
	for _, md := range o.MachineDeployments {
		group("MachineDeployment", md.Name, ptr.Deref(md.Spec.Template.Spec.Version, ""))
	}
	for _, mp := range o.MachinePools {
		group("MachinePool", mp.Name, ptr.Deref(mp.Spec.Template.Spec.Version, ""))
	}
	machines := slices.Clone(o.Machines)
	slices.SortFunc(machines, func(a, b clusterv1.Machine) int { return cmp.Compare(a.Name, b.Name) })
	for _, m := range machines {
		var g *VersionGroup
		_, isCP := m.Labels[clusterv1.MachineControlPlaneLabel]
		switch {
		case isCP && o.ControlPlane != nil:
			g = group(o.ControlPlane.GetKind(), o.ControlPlane.GetName(), cpVersion)
		case m.Labels[clusterv1.MachineDeploymentNameLabel] != "":
			g = group("MachineDeployment", m.Labels[clusterv1.MachineDeploymentNameLabel], "")
		case m.Labels[clusterv1.MachinePoolNameLabel] != "":
			g = group("MachinePool", m.Labels[clusterv1.MachinePoolNameLabel], "")
		default:
			g = group("Other", "Machines", "")
		}
		mv := MachineVersion{Name: m.Name, Version: ptr.Deref(m.Spec.Version, ""), Phase: m.Status.Phase, Deleting: !m.DeletionTimestamp.IsZero()}
		if s := m.Status.V1Beta2; s != nil {
			for _, c := range s.Conditions {
				if c.Type == "UpToDate" {
					mv.UpToDate = string(c.Status)
				}
			}
		}
		if m.Status.NodeRef != nil {
			mv.Node = m.Status.NodeRef.Name
			mv.NodeVersion = kubelet[mv.Node]
		}
		if v.Target != "" && mv.Version == v.Target {
			g.AtTarget++
		}
		g.Machines = append(g.Machines, mv)
	}
	for _, id := range order {
		v.Groups = append(v.Groups, *groups[id])
	}
	return v
}

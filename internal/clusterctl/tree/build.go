package tree

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// Objects are the objects that describe a Cluster.
type Objects struct {
	// Cluster is the root of the tree; required.
	Cluster *clusterv1.Cluster
	// Infrastructure is the InfraCluster; nil when the Cluster has none (yet).
	Infrastructure *unstructured.Unstructured
	// ControlPlane is the control plane object; nil when the Cluster has none.
	ControlPlane *unstructured.Unstructured
	// ControlPlaneContract is the contract the control plane's CRD declares; it says where its counters are.
	ControlPlaneContract contract.Version
	// MachineDeployments, MachineSets and Machines are the Cluster's.
	MachineDeployments []clusterv1.MachineDeployment
	MachineSets        []clusterv1.MachineSet
	Machines           []clusterv1.Machine
	// MachineInfrastructure and BootstrapConfigs are the InfraMachines and BootstrapConfigs of the
	// Machines, by Machine name.
	MachineInfrastructure map[string]*unstructured.Unstructured
	BootstrapConfigs      map[string]*unstructured.Unstructured
	// MachinePools are the Cluster's MachinePools; MachinePoolInfrastructure and MachinePoolBootstrap their
	// InfraMachinePools and bootstrap configs, by MachinePool name.
	MachinePools              []clusterv1.MachinePool
	MachinePoolInfrastructure map[string]*unstructured.Unstructured
	MachinePoolBootstrap      map[string]*unstructured.Unstructured
	// ClusterResourceSets are the names of the ClusterResourceSets bound to the Cluster; nil when the
	// Cluster has no ClusterResourceSetBinding.
	ClusterResourceSets []string
}

// Options say what the tree shows.
type Options struct {
	// ShowConditions selects the objects whose conditions are all listed.
	ShowConditions ConditionFilter
	// ShowMachineSets shows MachineSets between MachineDeployments and their Machines.
	ShowMachineSets bool
	// ShowResourceSets shows the ClusterResourceSets bound to the Cluster.
	ShowResourceSets bool
	// ShowTemplates shows the infrastructure and bootstrap templates of MachineDeployments and of the
	// control plane.
	ShowTemplates bool
	// Echo shows the InfraMachine and BootstrapConfig of every Machine, not only of those whose state they
	// explain (not ready, in a state different from the Machine's).
	Echo bool
	// Grouping shows sibling Machines in the same state on one row.
	Grouping bool
	// V1Beta1 uses the v1beta1 conditions (Ready with severity) instead of the v1beta2 ones.
	V1Beta1 bool
}

// Tree is the tree of a Cluster.
type Tree struct {
	// Root is the Cluster's node.
	Root *Node
	// V1Beta1 says that the tree shows the v1beta1 conditions.
	V1Beta1 bool
}

// Build returns the tree of objs.
func Build(objs *Objects, opts Options) *Tree {
	b := &builder{opts: opts, objs: objs}
	root := clusterNode(objs.Cluster)
	root.show = opts.ShowConditions.Match(root.Kind, root.Name)

	if objs.Infrastructure != nil {
		b.add(root, providerNode(objs.Infrastructure, "ClusterInfrastructure"), false)
	}
	if opts.ShowResourceSets && objs.ClusterResourceSets != nil {
		sets := virtualNode("ClusterResourceSets")
		for _, name := range objs.ClusterResourceSets {
			sets.Children = append(sets.Children, referenceNode(&corev1.ObjectReference{APIVersion: "addons.cluster.x-k8s.io/v1beta1", Kind: "ClusterResourceSet", Name: name}, ""))
		}
		b.add(root, sets, false)
	}

	placed := map[string]bool{}
	machines := slices.Clone(objs.Machines)
	slices.SortFunc(machines, func(a, b clusterv1.Machine) int { return cmp.Compare(a.Name, b.Name) })

	if objs.ControlPlane != nil {
		cp := controlPlaneNode(objs.ControlPlane, objs.ControlPlaneContract)
		cp.groupChildren = opts.Grouping
		b.add(root, cp, false)
		if opts.ShowTemplates {
			if ref, err := contract.MachineTemplateInfrastructureRef(objs.ControlPlane, objs.ControlPlaneContract); err == nil && ref != nil {
				b.addTemplates(cp, referenceNode(ref, "MachineInfrastructureTemplate"))
			}
		}
		for i := range machines {
			if _, ok := machines[i].Labels[clusterv1.MachineControlPlaneLabel]; ok {
				b.addMachine(cp, &machines[i])
				placed[machines[i].Name] = true
			}
		}
	}

	workers := virtualNode("Workers")
	mds := slices.Clone(objs.MachineDeployments)
	slices.SortFunc(mds, func(a, b clusterv1.MachineDeployment) int { return cmp.Compare(a.Name, b.Name) })
	sets := slices.Clone(objs.MachineSets)
	slices.SortFunc(sets, func(a, b clusterv1.MachineSet) int { return cmp.Compare(a.Name, b.Name) })
	for i := range mds {
		md := &mds[i]
		mdNode := replicasNode("MachineDeployment", md, availableCondition)
		mdNode.groupChildren = opts.Grouping && !opts.ShowMachineSets
		b.add(workers, mdNode, false)
		if opts.ShowTemplates {
			var templates []*Node
			if ref := md.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil {
				templates = append(templates, referenceNode(ref, "BootstrapConfigTemplate"))
			}
			if ref := md.Spec.Template.Spec.InfrastructureRef; ref.Name != "" {
				templates = append(templates, referenceNode(&ref, "MachineInfrastructureTemplate"))
			}
			b.addTemplates(mdNode, templates...)
		}
		for j := range sets {
			ms := &sets[j]
			if !controlledBy(ms.OwnerReferences, md.UID) {
				continue
			}
			parent := mdNode
			if opts.ShowMachineSets {
				parent = replicasNode("MachineSet", ms, "")
				parent.groupChildren = opts.Grouping
				b.add(mdNode, parent, false)
			}
			for k := range machines {
				m := &machines[k]
				if !placed[m.Name] && controlledBy(m.OwnerReferences, ms.UID) {
					b.addMachine(parent, m)
					placed[m.Name] = true
				}
			}
		}
	}

	// MachinePools, with their bootstrap config and InfraMachinePool (unless they only echo the pool's
	// state) and the Machines the pool controls, as upstream.
	pools := slices.Clone(objs.MachinePools)
	slices.SortFunc(pools, func(a, b clusterv1.MachinePool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range pools {
		mp := &pools[i]
		mpNode := replicasNode("MachinePool", mp, availableCondition)
		mpNode.groupChildren = opts.Grouping
		if b.add(workers, mpNode, false) {
			if config := objs.MachinePoolBootstrap[mp.Name]; config != nil {
				b.add(mpNode, providerNode(config, "BootstrapConfig"), true)
			}
			if infra := objs.MachinePoolInfrastructure[mp.Name]; infra != nil {
				b.add(mpNode, providerNode(infra, "MachinePoolInfrastructure"), true)
			}
		}
		for k := range machines {
			m := &machines[k]
			if !placed[m.Name] && controlledBy(m.OwnerReferences, mp.UID) {
				b.addMachine(mpNode, m)
				placed[m.Name] = true
			}
		}
	}

	// Machines that belong to no MachineDeployment (nor to the control plane) are shown under Other.
	other := virtualNode("Other")
	for i := range machines {
		if !placed[machines[i].Name] {
			b.addMachine(other, &machines[i])
		}
	}
	if len(other.Children) > 0 {
		b.add(workers, other, false)
	}
	if len(workers.Children) > 0 {
		b.add(root, workers, false)
	}

	sortChildren(root)
	return &Tree{Root: root, V1Beta1: opts.V1Beta1}
}

type builder struct {
	opts Options
	objs *Objects
}

// addMachine adds a Machine and, when it has a row of its own, its InfraMachine and BootstrapConfig
// unless they only echo the Machine's state.
func (b *builder) addMachine(parent *Node, m *clusterv1.Machine) {
	n := machineNode(m)
	if !b.add(parent, n, false) {
		return
	}
	if infra := b.objs.MachineInfrastructure[m.Name]; infra != nil {
		b.add(n, providerNode(infra, "MachineInfrastructure"), true)
	}
	if config := b.objs.BootstrapConfigs[m.Name]; config != nil {
		b.add(n, providerNode(config, "BootstrapConfig"), true)
	}
}

// addTemplates adds a Templates row, shown first, with the template rows under it.
func (b *builder) addTemplates(parent *Node, templates ...*Node) {
	if len(templates) == 0 {
		return
	}
	t := virtualNode("Templates")
	t.zOrder = 1
	t.Children = templates
	b.add(parent, t, false)
}

// add adds n under parent and reports whether n has a row of its own: false when it is an echo
// (noEcho objects whose state adds nothing to their parent's, unless Echo is set) or when it joined a
// group of siblings in the same state.
func (b *builder) add(parent, n *Node, noEcho bool) bool {
	if !n.Virtual {
		n.show = b.opts.ShowConditions.Match(n.Kind, n.Name)
	}
	if noEcho && !b.opts.Echo && b.isEcho(parent, n) {
		return false
	}
	// An object whose conditions were asked for keeps a row of its own.
	if parent.groupChildren && n.show == ShowNoConditions {
		for i, s := range parent.Children {
			if s.Kind != n.Kind || s.show != ShowNoConditions || !b.sameState(s, n) {
				continue
			}
			if s.IsGroup() {
				s.join(n)
			} else {
				parent.Children[i] = groupNode(s, n)
			}
			return false
		}
	}
	parent.Children = append(parent.Children, n)
	return true
}

// isEcho reports whether a Machine's provider object only repeats the Machine's state: it is ready, or in
// the same state as the Machine.
func (b *builder) isEcho(parent, n *Node) bool {
	if b.opts.V1Beta1 {
		return n.v1Ready.isTrue() || sameStatusSeverityAndReason(parent.v1Ready, n.v1Ready)
	}
	return n.v2Ready.isTrue() || sameStatusAndReason(parent.v2Ready, n.v2Ready)
}

// sameState reports whether two objects can share a row: same Available, Ready and UpToDate conditions
// (status and reason), or with v1beta1 conditions the same Ready status, severity and reason.
func (b *builder) sameState(x, y *Node) bool {
	if b.opts.V1Beta1 {
		return sameStatusSeverityAndReason(x.v1Ready, y.v1Ready)
	}
	return sameStatusAndReason(x.v2Available, y.v2Available) && sameStatusAndReason(x.v2Ready, y.v2Ready) &&
		sameStatusAndReason(x.v2UpToDate, y.v2UpToDate)
}

// sortChildren orders the rows under each node: higher zOrder first, then by row name.
func sortChildren(n *Node) {
	slices.SortStableFunc(n.Children, func(a, b *Node) int {
		if a.zOrder != b.zOrder {
			return cmp.Compare(b.zOrder, a.zOrder)
		}
		return cmp.Compare(a.RowName(), b.RowName())
	})
	for _, c := range n.Children {
		sortChildren(c)
	}
}

func controlledBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller && r.UID == uid {
			return true
		}
	}
	return false
}

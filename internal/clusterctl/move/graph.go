package move

import (
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// objectType is a kind that discovery lists: the storage version of a CRD installed by clusterctl, or
// Secret and ConfigMap.
type objectType struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	// forceMove: the CRD is labelled clusterctl.cluster.x-k8s.io/move.
	forceMove bool
	// forceMoveHierarchy: the CRD is labelled clusterctl.cluster.x-k8s.io/move-hierarchy.
	forceMoveHierarchy bool
}

// node is an object of the graph. A virtual node stands for an owner that discovery has not seen (yet).
type node struct {
	id      string
	uid     types.UID
	ref     Ref
	obj     *unstructured.Unstructured
	virtual bool
	// global: the object is cluster-scoped.
	global             bool
	forceMove          bool
	forceMoveHierarchy bool

	// owners are the nodes named by the object's ownerReferences, with the reference.
	owners map[*node]metav1.OwnerReference
	// softOwners are owners by convention: a Cluster for its certificate Secrets and its
	// ClusterResourceSetBinding, a ClusterClass for its Clusters.
	softOwners map[*node]bool
	// dependents are the nodes this node owns or soft-owns.
	dependents []*node
	// tenants are the roots (Cluster, ClusterClass, ClusterResourceSet, move-hierarchy objects) whose
	// hierarchy the node belongs to.
	tenants map[*node]bool
}

// graph is the objects discovery found and how they are linked.
type graph struct {
	nodes map[string]*node
}

func newGraph() *graph { return &graph{nodes: map[string]*node{}} }

// nodeID identifies an object in the graph: its UID, or its reference when it has none (an object read
// from a file written by hand).
func nodeID(uid types.UID, ref Ref) string {
	if uid != "" {
		return string(uid)
	}
	return "ref:" + ref.key()
}

// add adds an object of a type to the graph, with edges to its owners (virtual nodes for owners not seen).
func (g *graph) add(obj *unstructured.Unstructured, t objectType) *node {
	ref := RefOf(obj)
	id := nodeID(obj.GetUID(), ref)
	n := g.nodes[id]
	if n == nil {
		n = &node{id: id, owners: map[*node]metav1.OwnerReference{}, softOwners: map[*node]bool{}}
		g.nodes[id] = n
	}
	n.uid, n.ref, n.obj, n.virtual = obj.GetUID(), ref, obj, false
	n.global = !t.namespaced
	labels := obj.GetLabels()
	_, moveLabel := labels[clusterctlv1.ClusterctlMoveLabel]
	_, hierarchyLabel := labels[clusterctlv1.ClusterctlMoveHierarchyLabel]
	n.forceMove = t.forceMove || moveLabel
	n.forceMoveHierarchy = t.forceMoveHierarchy || hierarchyLabel
	for _, or := range obj.GetOwnerReferences() {
		ownerRef := Ref{APIVersion: or.APIVersion, Kind: or.Kind, Namespace: ref.Namespace, Name: or.Name}
		ownerID := nodeID(or.UID, ownerRef)
		owner := g.nodes[ownerID]
		if owner == nil {
			owner = &node{id: ownerID, uid: or.UID, ref: ownerRef, virtual: true,
				owners: map[*node]metav1.OwnerReference{}, softOwners: map[*node]bool{}}
			g.nodes[ownerID] = owner
		}
		n.owners[owner] = or
	}
	return n
}

// sorted returns the nodes that match keep, sorted by reference.
func (g *graph) sorted(keep func(*node) bool) []*node {
	var out []*node
	for _, n := range g.nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ref.less(out[j].ref) })
	return out
}

func (g *graph) ofKind(group, kind string) []*node {
	return g.sorted(func(n *node) bool { return !n.virtual && n.ref.is(group, kind) })
}

// secretPurposes are the suffixes of the Secrets Cluster API reads by name: `<cluster>-<purpose>`.
var secretPurposes = []string{"apiserver-etcd-client", "kubeconfig", "proxy", "etcd", "ca", "sa"}

// clusterOfSecret returns the Cluster name of a Secret named `<cluster>-<purpose>`.
func clusterOfSecret(name string) (string, bool) {
	for _, p := range secretPurposes {
		if c, ok := strings.CutSuffix(name, "-"+p); ok && c != "" {
			return c, true
		}
	}
	return "", false
}

// setSoftOwnership links objects that belong together by convention rather than by ownerReference.
func (g *graph) setSoftOwnership() {
	clusters := map[string]*node{}
	for _, c := range g.ofKind(clusterGroup, clusterKind) {
		clusters[c.ref.Namespace+"/"+c.ref.Name] = c
	}
	classes := map[string]*node{}
	for _, c := range g.ofKind(clusterGroup, clusterClassKind) {
		classes[c.ref.Namespace+"/"+c.ref.Name] = c
	}
	// User-provided certificate Secrets (and a kubeconfig Secret without owner) belong to their Cluster.
	for _, s := range g.ofKind("", secretKind) {
		if len(s.owners) > 0 {
			continue
		}
		if name, ok := clusterOfSecret(s.ref.Name); ok {
			if c := clusters[s.ref.Namespace+"/"+name]; c != nil {
				s.softOwners[c] = true
			}
		}
	}
	// A topology Cluster needs its ClusterClass: the class is moved with it, and created first.
	for _, c := range clusters {
		class, ns := topologyClass(c.obj)
		if class == "" {
			continue
		}
		if ns == "" {
			ns = c.ref.Namespace
		}
		if cc := classes[ns+"/"+class]; cc != nil {
			c.softOwners[cc] = true
		}
	}
	// The templates a ClusterClass references belong to it (its controller also sets itself as their owner,
	// as upstream's does): they move with the class even before that controller saw it.
	templates := map[string]*node{}
	for _, n := range g.sorted(func(n *node) bool { return !n.virtual && n.ref.Namespace != "" }) {
		templates[n.ref.GroupKind().String()+"/"+n.ref.Namespace+"/"+n.ref.Name] = n
	}
	for _, cc := range classes {
		for _, ref := range classTemplateRefs(cc.obj) {
			ns := ref.Namespace
			if ns == "" {
				ns = cc.ref.Namespace
			}
			if t := templates[ref.GroupKind().String()+"/"+ns+"/"+ref.Name]; t != nil && t != cc {
				t.softOwners[cc] = true
			}
		}
	}
	// A ClusterResourceSetBinding belongs to the Cluster it binds (spec.clusterName, else its own name).
	for _, b := range g.ofKind(addonsGroup, crsBindingKind) {
		name, _, _ := unstructured.NestedString(b.obj.Object, "spec", "clusterName")
		if name == "" {
			name = b.ref.Name
		}
		if c := clusters[b.ref.Namespace+"/"+name]; c != nil {
			b.softOwners[c] = true
		}
	}
}

// isRoot reports whether a node starts a hierarchy that moves as a whole.
func (n *node) isRoot() bool {
	if n.virtual {
		return false
	}
	return n.forceMoveHierarchy || n.ref.is(clusterGroup, clusterKind) || n.ref.is(clusterGroup, clusterClassKind) ||
		n.ref.is(addonsGroup, crsKind)
}

// setTenants assigns every node to the hierarchies it belongs to, following ownerReferences and soft
// ownership from each root down. Cycles are walked once.
func (g *graph) setTenants() {
	for _, n := range g.nodes {
		n.dependents = nil
		n.tenants = map[*node]bool{}
	}
	for _, n := range g.sorted(func(*node) bool { return true }) {
		for o := range n.owners {
			o.dependents = append(o.dependents, n)
		}
		for o := range n.softOwners {
			if _, dup := n.owners[o]; !dup {
				o.dependents = append(o.dependents, n)
			}
		}
	}
	for _, root := range g.sorted(func(n *node) bool { return n.isRoot() }) {
		stack := []*node{root}
		root.tenants[root] = true
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, d := range n.dependents {
				if d.tenants[root] {
					continue
				}
				d.tenants[root] = true
				stack = append(stack, d)
			}
		}
	}
}

// moves reports whether a node is moved.
func (n *node) moves() bool {
	return !n.virtual && (len(n.tenants) > 0 || n.forceMove)
}

// globalHierarchy reports whether the node is global or belongs to a hierarchy that starts at a global
// object: such objects are created in the target when missing, never updated, never deleted from the
// source.
func (n *node) globalHierarchy() bool {
	if n.global {
		return true
	}
	for t := range n.tenants {
		if t.global {
			return true
		}
	}
	return false
}

// moveGroups returns the nodes to move in creation order: each group holds the nodes whose moved owners
// (and soft owners) are all in earlier groups. Nodes in an ownership cycle go together in a last group.
func (g *graph) moveGroups() [][]*node {
	remaining := g.sorted(func(n *node) bool { return n.moves() })
	placed := map[*node]bool{}
	var groups [][]*node
	for len(remaining) > 0 {
		var group, next []*node
		for _, n := range remaining {
			if ownersPlaced(n, placed) {
				group = append(group, n)
			} else {
				next = append(next, n)
			}
		}
		if len(group) == 0 { // A cycle: nothing can go first.
			group, next = next, nil
		}
		for _, n := range group {
			placed[n] = true
		}
		groups = append(groups, group)
		remaining = next
	}
	return groups
}

func ownersPlaced(n *node, placed map[*node]bool) bool {
	for o := range n.owners {
		if o.moves() && !placed[o] && o != n {
			return false
		}
	}
	for o := range n.softOwners {
		if o.moves() && !placed[o] && o != n {
			return false
		}
	}
	return true
}

// notMovedReason says why a node of the namespace is not moved.
func (n *node) notMovedReason(namespaceHasCluster func(name string) bool) string {
	if len(n.owners) > 0 {
		var why []string
		for _, o := range sortedOwners(n) {
			if o.virtual {
				why = append(why, "owned by "+o.ref.Kind+" "+o.ref.Name+", a kind clusterctl move does not move")
			} else {
				why = append(why, "owned by "+o.ref.String()+", which is not moved")
			}
		}
		return strings.Join(why, "; ")
	}
	if n.ref.is("", secretKind) {
		if c, ok := clusterOfSecret(n.ref.Name); ok && !namespaceHasCluster(c) {
			return "named like a Secret of Cluster " + c + ", which is not in namespace " + n.ref.Namespace
		}
	}
	return "not linked to a Cluster, ClusterClass or ClusterResourceSet and not labelled " + clusterctlv1.ClusterctlMoveLabel
}

func sortedOwners(n *node) []*node {
	out := make([]*node, 0, len(n.owners))
	for o := range n.owners {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ref.less(out[j].ref) })
	return out
}

// topologyClass returns the name and namespace (empty: the Cluster's) of the ClusterClass of a topology
// Cluster, in the v1beta1 (spec.topology.class, classNamespace) or the v1beta2 layout
// (spec.topology.classRef): a management cluster of upstream v1.11 or later stores v1beta2.
func topologyClass(c *unstructured.Unstructured) (name, namespace string) {
	if name, _, _ = unstructured.NestedString(c.Object, "spec", "topology", "class"); name != "" {
		namespace, _, _ = unstructured.NestedString(c.Object, "spec", "topology", "classNamespace")
		return name, namespace
	}
	name, _, _ = unstructured.NestedString(c.Object, "spec", "topology", "classRef", "name")
	namespace, _, _ = unstructured.NestedString(c.Object, "spec", "topology", "classRef", "namespace")
	return name, namespace
}

// classTemplateRefs are the template references of a ClusterClass: spec.infrastructure,
// spec.controlPlane (and its machineInfrastructure), and the bootstrap and infrastructure templates of
// its MachineDeployment and MachinePool classes; each a ref in v1beta1, a templateRef in v1beta2 (where
// the workers' templates are not under template).
func classTemplateRefs(cc *unstructured.Unstructured) []Ref {
	var out []Ref
	add := func(m map[string]any, path ...string) {
		ref, ok, _ := unstructured.NestedMap(m, path...)
		if !ok {
			return
		}
		r := Ref{}
		r.APIVersion, _ = ref["apiVersion"].(string)
		r.Kind, _ = ref["kind"].(string)
		r.Namespace, _ = ref["namespace"].(string)
		r.Name, _ = ref["name"].(string)
		if r.Kind != "" && r.Name != "" {
			out = append(out, r)
		}
	}
	for _, path := range [][]string{{"infrastructure"}, {"controlPlane"}, {"controlPlane", "machineInfrastructure"}} {
		add(cc.Object, append(append([]string{"spec"}, path...), "ref")...)
		add(cc.Object, append(append([]string{"spec"}, path...), "templateRef")...)
	}
	for _, workers := range []string{"machineDeployments", "machinePools"} {
		classes, _, _ := unstructured.NestedSlice(cc.Object, "spec", "workers", workers)
		for _, c := range classes {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			add(m, "template", "bootstrap", "ref")
			add(m, "template", "infrastructure", "ref")
			add(m, "bootstrap", "templateRef")
			add(m, "infrastructure", "templateRef")
		}
	}
	return out
}

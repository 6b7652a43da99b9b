package move

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// obj builds a test object; its UID is "uid-<name>".
type obj struct {
	kind, namespace, name string
	owners                []string // names of owners, as "Kind/name"
	labels                map[string]string
	spec                  map[string]any
}

var kinds = map[string]string{
	"Cluster": "cluster.x-k8s.io/v1beta1", "ClusterClass": "cluster.x-k8s.io/v1beta1",
	"MachineDeployment": "cluster.x-k8s.io/v1beta1", "MachineSet": "cluster.x-k8s.io/v1beta1",
	"Machine": "cluster.x-k8s.io/v1beta1", "GenericInfrastructureMachine": "infrastructure.cluster.x-k8s.io/v1beta1",
	"GenericInfrastructureCluster": "infrastructure.cluster.x-k8s.io/v1beta1", "GenericIdentity": "infrastructure.cluster.x-k8s.io/v1beta1",
	"Secret": "v1", "ConfigMap": "v1", "Deployment": "apps/v1",
	"ClusterResourceSet": "addons.cluster.x-k8s.io/v1beta1", "ClusterResourceSetBinding": "addons.cluster.x-k8s.io/v1beta1",
	"Widget": "example.com/v1",
}

func (o obj) build() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(kinds[o.kind])
	u.SetKind(o.kind)
	u.SetNamespace(o.namespace)
	u.SetName(o.name)
	u.SetUID(types.UID("uid-" + o.kind + "-" + o.name))
	u.SetLabels(o.labels)
	var refs []metav1.OwnerReference
	for _, owner := range o.owners {
		kind, name, _ := cut(owner)
		refs = append(refs, metav1.OwnerReference{APIVersion: kinds[kind], Kind: kind, Name: name, UID: types.UID("uid-" + kind + "-" + name)})
	}
	u.SetOwnerReferences(refs)
	if o.spec != nil {
		u.Object["spec"] = o.spec
	}
	return u
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// types of the test graph: the Generic* kinds are namespaced except GenericIdentity, a cluster-scoped
// move-hierarchy kind; Widget is labelled move at the CRD level.
func typeOf(kind string) objectType {
	gv, _ := schema.ParseGroupVersion(kinds[kind])
	t := objectType{gvk: gv.WithKind(kind), namespaced: true}
	switch kind {
	case "GenericIdentity":
		t.namespaced, t.forceMoveHierarchy = false, true
	case "Widget":
		t.forceMove = true
	}
	return t
}

func buildGraph(objs []obj) *discovered {
	d := &discovered{namespace: "ns", graph: newGraph()}
	for _, o := range objs {
		d.graph.add(o.build(), typeOf(o.kind))
	}
	d.build()
	return d
}

func groupNames(p *Plan) [][]string {
	var out [][]string
	for _, g := range p.Groups {
		var names []string
		for _, o := range g {
			names = append(names, o.Kind+"/"+o.Name)
		}
		out = append(out, names)
	}
	return out
}

func notMoved(p *Plan) map[string]string {
	out := map[string]string{}
	for _, n := range p.NotMoved {
		out[n.Kind+"/"+n.Name] = n.Reason
	}
	return out
}

func TestGraph(t *testing.T) {
	cluster := obj{kind: "Cluster", namespace: "ns", name: "c1"}
	tests := []struct {
		name     string
		objs     []obj
		groups   [][]string
		notMoved map[string]string
		global   []string
	}{
		{
			name: "ownerReference chain, owners first",
			objs: []obj{
				cluster,
				{kind: "GenericInfrastructureCluster", namespace: "ns", name: "c1", owners: []string{"Cluster/c1"}},
				{kind: "MachineDeployment", namespace: "ns", name: "md", owners: []string{"Cluster/c1"}},
				{kind: "MachineSet", namespace: "ns", name: "ms", owners: []string{"MachineDeployment/md"}},
				{kind: "Machine", namespace: "ns", name: "m", owners: []string{"MachineSet/ms"}},
				{kind: "GenericInfrastructureMachine", namespace: "ns", name: "m", owners: []string{"Machine/m"}},
			},
			groups: [][]string{
				{"Cluster/c1"},
				{"GenericInfrastructureCluster/c1", "MachineDeployment/md"},
				{"MachineSet/ms"},
				{"Machine/m"},
				{"GenericInfrastructureMachine/m"},
			},
			notMoved: map[string]string{},
		},
		{
			name: "Secrets: owned, user-provided certificates by name, others stay",
			objs: []obj{
				cluster,
				{kind: "Secret", namespace: "ns", name: "c1-kubeconfig", owners: []string{"Cluster/c1"}},
				{kind: "Secret", namespace: "ns", name: "c1-ca"},
				{kind: "Secret", namespace: "ns", name: "c1-etcd"},
				{kind: "Secret", namespace: "ns", name: "c1-apiserver-etcd-client"},
				{kind: "Secret", namespace: "ns", name: "c1-other"},
				{kind: "Secret", namespace: "ns", name: "c2-sa"},
				{kind: "Secret", namespace: "ns", name: "c1-proxy", owners: []string{"Deployment/d"}},
				{kind: "ConfigMap", namespace: "ns", name: "kube-root-ca.crt"},
			},
			groups: [][]string{
				{"Cluster/c1"},
				{"Secret/c1-apiserver-etcd-client", "Secret/c1-ca", "Secret/c1-etcd", "Secret/c1-kubeconfig"},
			},
			notMoved: map[string]string{
				"Secret/c1-other":            "not linked to a Cluster, ClusterClass or ClusterResourceSet and not labelled clusterctl.cluster.x-k8s.io/move",
				"Secret/c2-sa":               "named like a Secret of Cluster c2, which is not in namespace ns",
				"Secret/c1-proxy":            "owned by Deployment d, a kind clusterctl move does not move",
				"ConfigMap/kube-root-ca.crt": "not linked to a Cluster, ClusterClass or ClusterResourceSet and not labelled clusterctl.cluster.x-k8s.io/move",
			},
		},
		{
			name: "move labels on objects and CRDs",
			objs: []obj{
				{kind: "ConfigMap", namespace: "ns", name: "cpi", labels: map[string]string{clusterctlv1.ClusterctlMoveLabel: ""}},
				{kind: "Secret", namespace: "ns", name: "owned-by-cpi", owners: []string{"ConfigMap/cpi"}},
				{kind: "ConfigMap", namespace: "ns", name: "root", labels: map[string]string{clusterctlv1.ClusterctlMoveHierarchyLabel: ""}},
				{kind: "Secret", namespace: "ns", name: "owned-by-root", owners: []string{"ConfigMap/root"}},
				{kind: "Widget", namespace: "ns", name: "w"},
			},
			groups: [][]string{
				{"ConfigMap/cpi", "ConfigMap/root", "Widget/w"},
				{"Secret/owned-by-root"},
			},
			notMoved: map[string]string{
				"Secret/owned-by-cpi": "owned by ConfigMap ns/cpi, which is not moved",
			},
		},
		{
			name: "topology Cluster after its ClusterClass, ClusterResourceSet hierarchy, binding after its Cluster",
			objs: []obj{
				{kind: "Cluster", namespace: "ns", name: "c1", spec: map[string]any{"topology": map[string]any{"class": "cc", "version": "v1.31.0"}}},
				{kind: "ClusterClass", namespace: "ns", name: "cc"},
				{kind: "GenericInfrastructureCluster", namespace: "ns", name: "cc-template", owners: []string{"ClusterClass/cc"}},
				{kind: "ClusterResourceSet", namespace: "ns", name: "crs"},
				{kind: "ConfigMap", namespace: "ns", name: "addon", owners: []string{"ClusterResourceSet/crs"}},
				{kind: "ClusterResourceSetBinding", namespace: "ns", name: "c1"},
			},
			groups: [][]string{
				{"ClusterClass/cc", "ClusterResourceSet/crs"},
				{"Cluster/c1", "ConfigMap/addon", "GenericInfrastructureCluster/cc-template"},
				{"ClusterResourceSetBinding/c1"},
			},
			notMoved: map[string]string{},
		},
		{
			name: "the templates a ClusterClass references move with it, owner reference or not",
			objs: []obj{
				{kind: "Cluster", namespace: "ns", name: "c1", spec: map[string]any{"topology": map[string]any{"class": "cc", "version": "v1.31.0"}}},
				{kind: "ClusterClass", namespace: "ns", name: "cc", spec: map[string]any{
					"infrastructure": map[string]any{"ref": map[string]any{"apiVersion": kinds["GenericInfrastructureCluster"], "kind": "GenericInfrastructureCluster", "name": "cc-infra"}},
					"controlPlane": map[string]any{"ref": map[string]any{"apiVersion": kinds["Widget"], "kind": "Widget", "name": "cc-cp"},
						"machineInfrastructure": map[string]any{"ref": map[string]any{"apiVersion": kinds["GenericInfrastructureMachine"], "kind": "GenericInfrastructureMachine", "name": "cc-machine"}}},
					"workers": map[string]any{
						"machineDeployments": []any{map[string]any{"class": "w", "template": map[string]any{
							"bootstrap":      map[string]any{"ref": map[string]any{"apiVersion": kinds["ConfigMap"], "kind": "ConfigMap", "name": "cc-boot"}},
							"infrastructure": map[string]any{"ref": map[string]any{"apiVersion": kinds["GenericInfrastructureMachine"], "kind": "GenericInfrastructureMachine", "name": "cc-machine"}},
						}}},
						"machinePools": []any{map[string]any{"class": "p", "template": map[string]any{
							"bootstrap":      map[string]any{"ref": map[string]any{"apiVersion": kinds["ConfigMap"], "kind": "ConfigMap", "name": "cc-pool-boot"}},
							"infrastructure": map[string]any{"ref": map[string]any{"apiVersion": kinds["Secret"], "kind": "Secret", "name": "cc-pool-infra"}},
						}}},
					},
				}},
				{kind: "GenericInfrastructureCluster", namespace: "ns", name: "cc-infra", owners: []string{"ClusterClass/cc"}},
				{kind: "Widget", namespace: "ns", name: "cc-cp"},
				{kind: "GenericInfrastructureMachine", namespace: "ns", name: "cc-machine"},
				{kind: "ConfigMap", namespace: "ns", name: "cc-boot"},
				{kind: "ConfigMap", namespace: "ns", name: "cc-pool-boot"},
				{kind: "Secret", namespace: "ns", name: "cc-pool-infra"},
			},
			groups: [][]string{
				{"ClusterClass/cc"},
				{"Cluster/c1", "ConfigMap/cc-boot", "ConfigMap/cc-pool-boot", "GenericInfrastructureCluster/cc-infra",
					"GenericInfrastructureMachine/cc-machine", "Secret/cc-pool-infra", "Widget/cc-cp"},
			},
			notMoved: map[string]string{},
		},
		{
			// An upstream v1.11+ management cluster stores v1beta2: the topology names its class in classRef,
			// and the ClusterClass its templates in templateRef (no owner references here either).
			name: "v1beta2: a topology Cluster after its ClusterClass, the class's templates with it",
			objs: []obj{
				{kind: "Cluster", namespace: "ns", name: "c1", spec: map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": "cc", "namespace": "ns"}, "version": "v1.31.0"}}},
				{kind: "ClusterClass", namespace: "ns", name: "cc", spec: map[string]any{
					"infrastructure": map[string]any{"templateRef": map[string]any{"apiVersion": kinds["GenericInfrastructureCluster"], "kind": "GenericInfrastructureCluster", "name": "cc-infra"}},
					"controlPlane": map[string]any{"templateRef": map[string]any{"apiVersion": kinds["Widget"], "kind": "Widget", "name": "cc-cp"},
						"machineInfrastructure": map[string]any{"templateRef": map[string]any{"apiVersion": kinds["GenericInfrastructureMachine"], "kind": "GenericInfrastructureMachine", "name": "cc-machine"}}},
					"workers": map[string]any{
						"machineDeployments": []any{map[string]any{"class": "w",
							"bootstrap":      map[string]any{"templateRef": map[string]any{"apiVersion": kinds["ConfigMap"], "kind": "ConfigMap", "name": "cc-boot"}},
							"infrastructure": map[string]any{"templateRef": map[string]any{"apiVersion": kinds["GenericInfrastructureMachine"], "kind": "GenericInfrastructureMachine", "name": "cc-machine"}},
						}},
						"machinePools": []any{map[string]any{"class": "p",
							"bootstrap":      map[string]any{"templateRef": map[string]any{"apiVersion": kinds["ConfigMap"], "kind": "ConfigMap", "name": "cc-pool-boot"}},
							"infrastructure": map[string]any{"templateRef": map[string]any{"apiVersion": kinds["Secret"], "kind": "Secret", "name": "cc-pool-infra"}},
						}},
					},
				}},
				{kind: "GenericInfrastructureCluster", namespace: "ns", name: "cc-infra"},
				{kind: "Widget", namespace: "ns", name: "cc-cp"},
				{kind: "GenericInfrastructureMachine", namespace: "ns", name: "cc-machine"},
				{kind: "ConfigMap", namespace: "ns", name: "cc-boot"},
				{kind: "ConfigMap", namespace: "ns", name: "cc-pool-boot"},
				{kind: "Secret", namespace: "ns", name: "cc-pool-infra"},
			},
			groups: [][]string{
				{"ClusterClass/cc"},
				{"Cluster/c1", "ConfigMap/cc-boot", "ConfigMap/cc-pool-boot", "GenericInfrastructureCluster/cc-infra",
					"GenericInfrastructureMachine/cc-machine", "Secret/cc-pool-infra", "Widget/cc-cp"},
			},
			notMoved: map[string]string{},
		},
		{
			name: "global move-hierarchy root and its Secret in another namespace",
			objs: []obj{
				cluster,
				{kind: "GenericIdentity", name: "id"},
				{kind: "Secret", namespace: "provider-system", name: "id-credentials", owners: []string{"GenericIdentity/id"}},
				{kind: "Secret", namespace: "provider-system", name: "unrelated"},
			},
			groups: [][]string{
				{"Cluster/c1", "GenericIdentity/id"},
				{"Secret/id-credentials"},
			},
			notMoved: map[string]string{},
			global:   []string{"GenericIdentity/id", "Secret/id-credentials"},
		},
		{
			name: "ownership cycle",
			objs: []obj{
				cluster,
				{kind: "Widget", namespace: "ns", name: "a", owners: []string{"Cluster/c1", "Widget/b"}},
				{kind: "Widget", namespace: "ns", name: "b", owners: []string{"Widget/a"}},
			},
			groups: [][]string{
				{"Cluster/c1"},
				{"Widget/a", "Widget/b"},
			},
			notMoved: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := buildGraph(tt.objs).plan()
			g.Expect(groupNames(p)).To(Equal(tt.groups), cmp.Diff(tt.groups, groupNames(p)))
			g.Expect(notMoved(p)).To(Equal(tt.notMoved), cmp.Diff(tt.notMoved, notMoved(p)))
			var global []string
			for _, o := range p.Objects() {
				if o.Global {
					global = append(global, o.Kind+"/"+o.Name)
				}
			}
			g.Expect(global).To(Equal(tt.global))
		})
	}
}

func TestClusterOfSecret(t *testing.T) {
	tests := []struct {
		name, cluster string
		ok            bool
	}{
		{"c1-kubeconfig", "c1", true},
		{"my-cluster-ca", "my-cluster", true},
		{"c1-apiserver-etcd-client", "c1", true},
		{"c1-sa", "c1", true},
		{"c1-proxy", "c1", true},
		{"c1-etcd", "c1", true},
		{"c1-md-0-bootstrap", "", false},
		{"-ca", "", false},
		{"ca", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, ok := clusterOfSecret(tt.name)
			g.Expect(ok).To(Equal(tt.ok))
			g.Expect(c).To(Equal(tt.cluster))
		})
	}
}

func TestPlanPrint(t *testing.T) {
	g := NewWithT(t)
	p := buildGraph([]obj{
		{kind: "Cluster", namespace: "ns", name: "c1"},
		{kind: "Secret", namespace: "ns", name: "c1-ca"},
		{kind: "GenericIdentity", name: "id"},
		{kind: "ConfigMap", namespace: "ns", name: "kube-root-ca.crt"},
	}).plan()
	p.Problems = []string{"Cluster ns/c1 is paused"}
	var b strings.Builder
	p.Print(&b)
	g.Expect(b.String()).To(Equal(`Objects to move from namespace ns: 3 objects (1 Cluster)
  Group 1:
    Cluster ns/c1
    GenericIdentity id (global: created if missing, kept in the source)
  Group 2:
    Secret ns/c1-ca
Objects not moved: 1
  ConfigMap ns/kube-root-ca.crt: not linked to a Cluster, ClusterClass or ClusterResourceSet and not labelled clusterctl.cluster.x-k8s.io/move
The move would not start: 1 problem
  - Cluster ns/c1 is paused
`))
}

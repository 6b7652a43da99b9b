package move

import (
	"context"
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// listPageSize bounds the objects read per request.
const listPageSize = 500

// discoveryTypes returns the kinds discovery lists: the storage version of every CRD installed by
// clusterctl (labelled clusterctl.cluster.x-k8s.io), except clusterctl's own (inventory, cert-manager),
// plus Secrets and ConfigMaps.
func discoveryTypes(ctx context.Context, c *Cluster, b wait.Backoff) ([]objectType, error) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := retry(ctx, b, func(ctx context.Context) error {
		return c.Client.List(ctx, crds, client.HasLabels{clusterctlv1.ClusterctlLabel})
	}); err != nil {
		return nil, fmt.Errorf("listing the CRDs installed by clusterctl in %s: %w", c.Name, err)
	}
	var types []objectType
	for _, crd := range crds.Items {
		if crd.Spec.Group == clusterctlAPI {
			continue
		}
		if _, own := crd.Labels[clusterctlv1.ClusterctlCoreLabel]; own {
			continue
		}
		t := objectType{namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				t.gvk = schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			}
		}
		if t.gvk.Version == "" {
			continue
		}
		_, t.forceMove = crd.Labels[clusterctlv1.ClusterctlMoveLabel]
		_, t.forceMoveHierarchy = crd.Labels[clusterctlv1.ClusterctlMoveHierarchyLabel]
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i].gvk.String() < types[j].gvk.String() })
	return append(types,
		objectType{gvk: schema.GroupVersionKind{Version: coreGroupVersion, Kind: secretKind}, namespaced: true},
		objectType{gvk: schema.GroupVersionKind{Version: coreGroupVersion, Kind: configMapKind}, namespaced: true},
	), nil
}

// discovered is the result of discovery: the graph, the order in which objects move, and what could not
// be read.
type discovered struct {
	namespace string
	graph     *graph
	groups    [][]*node
	// problems are the kinds that could not be listed.
	problems []string
}

// discover reads the objects of namespace (and the cluster-scoped objects of the discovered kinds, and
// the Secrets of secretNamespaces, where infrastructure providers keep credentials) and builds the graph.
func discover(ctx context.Context, c *Cluster, namespace string, secretNamespaces []string, b wait.Backoff) (*discovered, error) {
	types, err := discoveryTypes(ctx, c, b)
	if err != nil {
		return nil, err
	}
	d := &discovered{namespace: namespace, graph: newGraph()}
	for _, t := range types {
		namespaces := []string{""}
		if t.namespaced {
			namespaces = []string{namespace}
			if t.gvk.Kind == secretKind && t.gvk.Group == "" {
				for _, ns := range secretNamespaces {
					if ns != namespace {
						namespaces = append(namespaces, ns)
					}
				}
			}
		}
		for _, ns := range namespaces {
			objs, err := list(ctx, c, t.gvk, ns, b)
			if err != nil {
				d.problems = append(d.problems, err.Error())
				continue
			}
			for _, obj := range objs {
				if isJournal(obj) {
					continue
				}
				d.graph.add(obj, t)
			}
		}
	}
	d.build()
	return d, nil
}

// build links the graph and orders the objects to move.
func (d *discovered) build() {
	d.graph.setSoftOwnership()
	d.graph.setTenants()
	d.groups = d.graph.moveGroups()
}

// list reads every object of a kind in a namespace (all namespaces when empty), a page at a time.
func list(ctx context.Context, c *Cluster, gvk schema.GroupVersionKind, namespace string, b wait.Backoff) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	cont := ""
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.Limit(listPageSize), client.Continue(cont)}
		if namespace != "" {
			opts = append(opts, client.InNamespace(namespace))
		}
		if err := retry(ctx, b, func(ctx context.Context) error { return c.Client.List(ctx, l, opts...) }); err != nil {
			where := "cluster-wide"
			if namespace != "" {
				where = "in namespace " + namespace
			}
			return nil, fmt.Errorf("cannot read %s %s from %s: %w", gvk.Kind, where, c.Name, err)
		}
		for i := range l.Items {
			obj := &l.Items[i]
			obj.SetGroupVersionKind(gvk)
			out = append(out, obj)
		}
		cont = l.GetContinue()
		if cont == "" {
			return out, nil
		}
	}
}

// moveNodes returns the nodes to move, in creation order.
func (d *discovered) moveNodes() []*node {
	var out []*node
	for _, g := range d.groups {
		out = append(out, g...)
	}
	return out
}

// pauseTargets returns the Clusters and ClusterClasses that the move pauses: every one it moves.
func (d *discovered) pauseTargets() []Ref {
	var out []Ref
	for _, n := range d.moveNodes() {
		if n.ref.is(clusterGroup, clusterKind) || n.ref.is(clusterGroup, clusterClassKind) {
			out = append(out, n.ref)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// plan describes the discovery for the user.
func (d *discovered) plan() *Plan {
	p := &Plan{Namespace: d.namespace}
	for _, g := range d.groups {
		var objs []Object
		for _, n := range g {
			objs = append(objs, Object{Ref: n.ref, UID: n.uid, Global: n.globalHierarchy()})
		}
		p.Groups = append(p.Groups, objs)
	}
	hasCluster := map[string]bool{}
	for _, c := range d.graph.ofKind(clusterGroup, clusterKind) {
		hasCluster[c.ref.Namespace+"/"+c.ref.Name] = true
	}
	for _, n := range d.graph.sorted(func(n *node) bool {
		return !n.virtual && !n.moves() && n.ref.Namespace == d.namespace && d.namespace != ""
	}) {
		p.NotMoved = append(p.NotMoved, NotMoved{Ref: n.ref, Reason: n.notMovedReason(func(name string) bool {
			return hasCluster[n.ref.Namespace+"/"+name]
		})})
	}
	return p
}

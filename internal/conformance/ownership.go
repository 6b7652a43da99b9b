package conformance

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The rules of the clusterctl provider contract about the objects a provider creates: the OwnerReferences
// chain and move.

const (
	moveLabel          = clusterctlv1.ClusterctlMoveLabel
	moveHierarchyLabel = clusterctlv1.ClusterctlMoveHierarchyLabel
)

// object is an object of the namespace, for following owner references.
type object struct {
	apiVersion, kind, name, uid string
	owners                      []owner
	labels                      map[string]string
	// byKit says whether the kit created the object (as Cluster API's core or other providers would).
	byKit bool
}

type owner struct{ apiVersion, kind, name, uid string }

func (o object) String() string { return o.kind + "/" + o.name }

func checkOwnerReferences(in *input) verdict {
	if in.run == nil || in.run.objects == nil {
		return in.notReached("listing the objects of the namespace")
	}
	return ownerReferencesVerdict(in.run.objects)
}

func ownerReferencesVerdict(objects []object) verdict {
	linked := linkedToCluster(objects)
	var created, unlinked []string
	for _, o := range objects {
		if o.byKit {
			continue
		}
		created = append(created, o.String())
		if !linked[o.uid] {
			unlinked = append(unlinked, o.String())
		}
	}
	switch {
	case len(unlinked) > 0:
		return fail("Objects the provider created do not link to a Cluster through owner references: %s", strings.Join(unlinked, ", "))
	case len(created) == 0:
		return pass("The provider created no other object in the namespace")
	}
	return pass("Every object the provider created links to a Cluster: %s", strings.Join(created, ", "))
}

// linkedToCluster returns the UIDs of the objects that link to a Cluster of the namespace through owner
// references.
func linkedToCluster(objects []object) map[string]bool {
	byUID := map[string]object{}
	for _, o := range objects {
		byUID[o.uid] = o
	}
	out := map[string]bool{}
	var linked func(o object, seen map[string]bool) bool
	linked = func(o object, seen map[string]bool) bool {
		if isCluster(o.apiVersion, o.kind) {
			return true
		}
		if seen[o.uid] {
			return false
		}
		seen[o.uid] = true
		for _, ow := range o.owners {
			if parent, ok := byUID[ow.uid]; ok && linked(parent, seen) {
				return true
			}
		}
		return false
	}
	for _, o := range objects {
		if linked(o, map[string]bool{}) {
			out[o.uid] = true
		}
	}
	return out
}

func isCluster(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == clusterv1.GroupVersion.Group && kind == "Cluster"
}

func checkMove(in *input) verdict {
	if in.run == nil || in.run.objects == nil {
		return in.notReached("listing the objects of the namespace")
	}
	return moveVerdict(in.run.objects, in.crds)
}

// moveVerdict judges whether clusterctl move would take along every object the provider created.
func moveVerdict(objects []object, crds map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition) verdict {
	linked := linkedToCluster(objects)
	byUID := map[string]object{}
	for _, o := range objects {
		byUID[o.uid] = o
	}
	labelled := func(o object, labels ...string) bool {
		gv, _ := schema.ParseGroupVersion(o.apiVersion)
		crd := crds[schema.GroupKind{Group: gv.Group, Kind: o.kind}]
		for _, l := range labels {
			if _, ok := o.labels[l]; ok {
				return true
			}
			if crd != nil {
				if _, ok := crd.Labels[l]; ok {
					return true
				}
			}
		}
		return false
	}
	var hierarchy func(o object, seen map[string]bool) bool
	hierarchy = func(o object, seen map[string]bool) bool {
		if seen[o.uid] {
			return false
		}
		seen[o.uid] = true
		for _, ow := range o.owners {
			if parent, ok := byUID[ow.uid]; ok && (labelled(parent, moveHierarchyLabel) || hierarchy(parent, seen)) {
				return true
			}
		}
		return false
	}
	var left, undiscovered, moved []string
	for _, o := range objects {
		if o.byKit {
			continue
		}
		gv, _ := schema.ParseGroupVersion(o.apiVersion)
		_, providerKind := crds[schema.GroupKind{Group: gv.Group, Kind: o.kind}]
		discovered := providerKind || (gv.Group == "" && (o.kind == "Secret" || o.kind == "ConfigMap"))
		switch {
		case !discovered:
			undiscovered = append(undiscovered, o.String())
		case linked[o.uid] || labelled(o, moveLabel, moveHierarchyLabel) || hierarchy(o, map[string]bool{}):
			moved = append(moved, o.String())
		default:
			left = append(left, o.String())
		}
	}
	if len(left) > 0 {
		return fail("clusterctl move would leave behind %s: link them to a Cluster or label them (or their CRD) %s or %s",
			strings.Join(left, ", "), moveLabel, moveHierarchyLabel)
	}
	msg := "clusterctl move takes along every object the provider created"
	if len(moved) > 0 {
		msg += ": " + strings.Join(moved, ", ")
	}
	if len(undiscovered) > 0 {
		msg += fmt.Sprintf(" (note: clusterctl move does not discover %s; document how to move them)", strings.Join(undiscovered, ", "))
	}
	return pass("%s", msg)
}

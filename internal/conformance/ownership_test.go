package conformance

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestOwnerReferencesAndMove(t *testing.T) {
	cluster := object{apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Cluster", name: "main", uid: "c", byKit: true}
	infra := object{apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1", kind: "FixtureCluster", name: "main", uid: "i", byKit: true,
		owners: []owner{{apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Cluster", name: "main", uid: "c"}}}
	ownedBy := func(o object, parent object) object {
		o.owners = append(o.owners, owner{apiVersion: parent.apiVersion, kind: parent.kind, name: parent.name, uid: parent.uid})
		return o
	}
	lb := object{apiVersion: "v1", kind: "ConfigMap", name: "main-lb", uid: "lb"}
	secret := object{apiVersion: "v1", kind: "Secret", name: "credentials", uid: "s"}
	identity := object{apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1", kind: "FixtureIdentity", name: "id", uid: "id"}
	service := object{apiVersion: "v1", kind: "Service", name: "main-lb", uid: "svc"}
	crds := map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition{
		{Group: infrastructureGroup, Kind: "FixtureIdentity"}: {},
	}
	labelled := func(o object, label string) object {
		o.labels = map[string]string{label: ""}
		return o
	}
	tests := []struct {
		name         string
		objects      []object
		crdLabels    map[string]string
		chain, move  outcome
		chainMessage string
		moveMessage  string
	}{
		{
			name:    "owned through the InfraCluster",
			objects: []object{cluster, infra, ownedBy(lb, infra)},
			chain:   met, move: met, chainMessage: "ConfigMap/main-lb", moveMessage: "ConfigMap/main-lb",
		},
		{
			name:    "nothing created",
			objects: []object{cluster, infra},
			chain:   met, move: met, chainMessage: "created no other object",
		},
		{
			name:    "unowned Secret",
			objects: []object{cluster, infra, secret},
			chain:   broken, move: broken, chainMessage: "Secret/credentials", moveMessage: "would leave behind Secret/credentials",
		},
		{
			name:    "owner not in the namespace",
			objects: []object{cluster, infra, ownedBy(lb, object{kind: "FixtureCluster", name: "gone", uid: "gone"})},
			chain:   broken, move: broken,
		},
		{
			name:    "unowned Secret with the move label",
			objects: []object{cluster, infra, labelled(secret, moveLabel)},
			chain:   broken, move: met,
		},
		{
			name:      "unowned identity whose CRD carries move-hierarchy, and what it owns",
			objects:   []object{cluster, infra, identity, ownedBy(secret, identity)},
			crdLabels: map[string]string{moveHierarchyLabel: ""},
			chain:     broken, move: met, moveMessage: "FixtureIdentity/id, Secret/credentials",
		},
		{
			name:    "kind clusterctl move does not discover",
			objects: []object{cluster, infra, ownedBy(service, infra)},
			chain:   met, move: met, moveMessage: "does not discover Service/main-lb",
		},
		{
			name:    "owner cycle",
			objects: []object{cluster, infra, ownedBy(ownedBy(lb, secret), infra), ownedBy(secret, lb)},
			chain:   met, move: met,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			crds[schema.GroupKind{Group: infrastructureGroup, Kind: "FixtureIdentity"}].Labels = tt.crdLabels
			chain := ownerReferencesVerdict(tt.objects)
			g.Expect(chain.outcome).To(Equal(tt.chain), chain.message)
			g.Expect(chain.message).To(ContainSubstring(tt.chainMessage))
			move := moveVerdict(tt.objects, crds)
			g.Expect(move.outcome).To(Equal(tt.move), move.message)
			g.Expect(move.message).To(ContainSubstring(tt.moveMessage))
		})
	}
}

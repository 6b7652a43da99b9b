package move

import (
	"testing"
)

// FuzzDirectory checks that no files of a `clusterctl move --from-directory` directory (which anyone may
// have written, by hand or with another tool) make reading them or ordering the objects (ownership,
// clusters and their tenants, the move groups) panic or loop, and that every object read is moved once.
func FuzzDirectory(f *testing.F) {
	cluster := "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: c1\n  namespace: ns\n  uid: u1\nspec:\n  infrastructureRef:\n    apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1\n    kind: LocalCluster\n    name: c1\n"
	infra := "apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1\nkind: LocalCluster\nmetadata:\n  name: c1\n  namespace: ns\n  uid: u2\n  ownerReferences:\n  - apiVersion: cluster.x-k8s.io/v1beta1\n    kind: Cluster\n    name: c1\n    uid: u1\n"
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1-kubeconfig\n  namespace: ns\n  uid: u3\n  labels:\n    cluster.x-k8s.io/cluster-name: c1\n"
	// Objects that own each other.
	loopA := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns", "uid": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "b"}]}}`
	loopB := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ns", "uid": "b", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "a", "controller": true}]}}`
	f.Add(cluster, infra, secret)
	f.Add(loopA, loopB, cluster)
	f.Add(cluster, cluster, "kind: Cluster\n")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		d := &discovered{graph: newGraph()}
		read := 0
		for i, data := range []string{a, b, c} {
			obj, err := decodeObjectFile(string(rune('a'+i))+".yaml", []byte(data))
			if err != nil {
				continue
			}
			read++
			d.graph.add(obj, objectType{gvk: obj.GroupVersionKind(), namespaced: obj.GetNamespace() != "", forceMove: true})
		}
		d.build()
		nodes := d.moveNodes()
		seen := map[*node]bool{}
		for _, n := range nodes {
			if seen[n] {
				t.Fatalf("%s is moved twice", n.ref)
			}
			seen[n] = true
		}
		if len(nodes) > read {
			t.Fatalf("%d objects read, %d moved", read, len(nodes))
		}
		_ = d.pauseTargets()
		_ = d.plan()
	})
}

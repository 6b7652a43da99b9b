package topology

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHolds(t *testing.T) {
	ref := func(uid string) map[string]any {
		return map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "c", "uid": uid}
	}
	desired := map[string]any{
		"metadata": map[string]any{"name": "cp", "labels": map[string]any{"topology.cluster.x-k8s.io/owned": ""},
			"ownerReferences": []any{ref("a")}, "annotations": map[string]any{}},
		"spec": map[string]any{"replicas": int64(1), "version": "v1.37.1", "files": []any{"a", "b"}, "unset": nil},
	}
	cases := []struct {
		name    string
		current map[string]any
		want    bool
	}{
		{"the same object", desired, true},
		{"other writers' labels, owner references and fields", map[string]any{
			"metadata": map[string]any{"name": "cp", "labels": map[string]any{"topology.cluster.x-k8s.io/owned": "", "other": "x"},
				"ownerReferences": []any{ref("b"), ref("a")}, "finalizers": []any{"f"}},
			"spec":   map[string]any{"replicas": float64(1), "version": "v1.37.1", "files": []any{"a", "b"}, "paused": true},
			"status": map[string]any{"ready": true},
		}, true},
		{"a value changed", map[string]any{
			"metadata": desired["metadata"],
			"spec":     map[string]any{"replicas": int64(3), "version": "v1.37.1", "files": []any{"a", "b"}},
		}, false},
		{"a list with another item", map[string]any{
			"metadata": desired["metadata"],
			"spec":     map[string]any{"replicas": int64(1), "version": "v1.37.1", "files": []any{"a", "b", "c"}},
		}, false},
		{"a value removed", map[string]any{
			"metadata": desired["metadata"],
			"spec":     map[string]any{"replicas": int64(1), "files": []any{"a", "b"}},
		}, false},
		{"the owner reference gone", map[string]any{
			"metadata": map[string]any{"name": "cp", "labels": map[string]any{"topology.cluster.x-k8s.io/owned": ""}, "ownerReferences": []any{ref("b")}},
			"spec":     desired["spec"],
		}, false},
		{"a label gone", map[string]any{
			"metadata": map[string]any{"name": "cp", "ownerReferences": []any{ref("a")}},
			"spec":     desired["spec"],
		}, false},
	}
	c := newNoDiffCache()
	u := &unstructured.Unstructured{Object: desired}
	u.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta1") // a typed current object has no type meta
	u.SetKind("KubeadmControlPlane")
	hash, err := desiredHash(u)
	if err != nil {
		t.Fatal(err)
	}
	if c.holdsApplied(u, hash, desired, "uid") {
		t.Fatal("an object never applied is held without a dry run")
	}
	c.recordApplied("uid", "another desired state")
	if c.holdsApplied(u, hash, desired, "uid") {
		t.Fatal("another desired state applied last is held without a dry run")
	}
	c.recordApplied("uid", hash)
	for _, tc := range cases {
		if got := c.holdsApplied(u, hash, tc.current, "uid"); got != tc.want {
			t.Errorf("%s: holdsApplied = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package topology

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	testingclock "k8s.io/utils/clock/testing"
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

	// The owner reference to the Cluster that the Cluster controller sets, carried over into the desired
	// object from then on, is not a new desired state: the object that holds it is not dry-run again.
	carried := u.DeepCopy()
	carried.SetOwnerReferences(append(carried.GetOwnerReferences(), metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Name: "c", UID: "b"}))
	carriedHash, err := desiredHash(carried)
	if err != nil {
		t.Fatal(err)
	}
	if carriedHash != hash {
		t.Error("an owner reference carried over from the current object changes the desired state's hash")
	}
	withRef := cases[1].current // it has the owner reference b
	if !c.holdsApplied(carried, carriedHash, withRef, "uid") {
		t.Error("an object that holds the carried owner reference is dry-run again")
	}
	if c.holdsApplied(carried, carriedHash, desired, "uid") {
		t.Error("an object without an owner reference of the desired state is held without a dry run")
	}
	// The dry-run cache's key still tells the two desired objects apart.
	cur := &unstructured.Unstructured{Object: desired}
	k1, err := c.key(u, hash, cur, desired)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := c.key(carried, carriedHash, cur, desired)
	if err != nil {
		t.Fatal(err)
	}
	if k1 == k2 {
		t.Error("the dry-run cache's key is the same for desired objects with different owner references")
	}
}

// TestAppliedOutlivesTheDryRunCache: a dry run that found nothing to change is trusted for noDiffTTL, as
// upstream's SSA cache, but what this controller applied last is remembered for as long as the cache has
// room: a Cluster whose objects do not change for longer than noDiffTTL (a thousand Clusters created at
// once wait their turn in the queues) is not dry-run again when it moves on, as long as its objects still
// hold the applied values.
func TestAppliedOutlivesTheDryRunCache(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	c := newNoDiffCacheWithClock(clk)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
		"metadata": map[string]any{"name": "cp", "namespace": "ns"},
		"spec":     map[string]any{"replicas": int64(1), "version": "v1.37.1"},
	}}
	hash, err := desiredHash(u)
	if err != nil {
		t.Fatal(err)
	}
	current := u.DeepCopy()
	current.SetUID("uid")
	key, err := c.key(u, hash, current, current.Object)
	if err != nil {
		t.Fatal(err)
	}
	c.add(key)
	c.recordApplied("uid", hash)

	clk.Step(noDiffTTL + time.Minute)
	if c.has(key) {
		t.Error("a dry run's result is trusted after noDiffTTL")
	}
	if !c.holdsApplied(u, hash, current.Object, "uid") {
		t.Error("an object that holds what was applied to it is dry-run again after noDiffTTL")
	}
	changed := current.DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if c.holdsApplied(u, hash, changed.Object, "uid") {
		t.Error("an object changed by someone else is held without a dry run")
	}
}

package topologyplan

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/internal/manifest"
)

// readObjects parses files of testdata.
func readObjects(t *testing.T, names ...string) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	for _, name := range names {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := manifest.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objs...)
	}
	return out
}

// find returns the object of kind among objs.
func find(objs []unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for i := range objs {
		if objs[i].GetKind() == kind {
			return &objs[i]
		}
	}
	return nil
}

// stored is obj as the API server returns it: read back from YAML, with the metadata the server sets.
func stored(t *testing.T, obj *unstructured.Unstructured) unstructured.Unstructured {
	t.Helper()
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	u := objs[0]
	if u.GetUID() == "" {
		u.SetUID(types.UID("uid-" + strings.ToLower(u.GetKind()) + "-" + u.GetName()))
	}
	u.SetResourceVersion("4711")
	u.SetGeneration(1)
	_ = unstructured.SetNestedField(u.Object, "2026-01-02T03:04:05Z", "metadata", "creationTimestamp")
	return u
}

// applied is the input with the plan of its Cluster carried out, as the API server stores it.
func applied(t *testing.T, objs []unstructured.Unstructured, plan ClusterPlan) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	cluster := find(objs, "Cluster").DeepCopy()
	for i := range objs {
		if objs[i].GetKind() != "Cluster" {
			out = append(out, objs[i])
		}
	}
	for _, c := range plan.Changes {
		switch {
		case c.Object.GetKind() == "Cluster" && c.Action == Modified:
			cluster = c.Object.DeepCopy()
		case c.Action == Created:
			out = append(out, stored(t, c.Object))
			// The topology controller sets the Cluster's references right after creating them.
			ref := map[string]any{"apiVersion": c.Object.GetAPIVersion(), "kind": c.Object.GetKind(), "name": c.Object.GetName(), "namespace": c.Object.GetNamespace()}
			switch c.Object.GetKind() {
			case "DockerCluster":
				_ = unstructured.SetNestedMap(cluster.Object, ref, "spec", "infrastructureRef")
			case "KubeadmControlPlane":
				_ = unstructured.SetNestedMap(cluster.Object, ref, "spec", "controlPlaneRef")
			}
		}
	}
	return append(out, stored(t, cluster))
}

// set sets value at path in the object of kind among objs.
func set(t *testing.T, objs []unstructured.Unstructured, kind string, value any, path ...string) {
	t.Helper()
	obj := find(objs, kind)
	if obj == nil {
		t.Fatalf("no %s", kind)
	}
	if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
	}
}

func rows(p ClusterPlan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, c.Object.GetKind()+" "+string(c.Action))
	}
	return out
}

// TestPlanOverItsOwnOutputIsEmpty: an empty variable renders no null (the etcd patch's template gives
// `local: {}`, as the API server stores it), and a plan over the objects the plan created has no change.
func TestPlanOverItsOwnOutputIsEmpty(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	objs := readObjects(t, "quick-start-class.yaml", "quick-start-cluster.yaml")
	plans, err := Plan(ctx, objs, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).To(HaveLen(1))
	var kcp *unstructured.Unstructured
	for _, c := range plans[0].Changes {
		if c.Object.GetKind() == "KubeadmControlPlane" {
			kcp = c.Object
		}
	}
	g.Expect(kcp).NotTo(BeNil())
	data, err := yaml.Marshal(kcp.Object)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).NotTo(ContainSubstring("null"))
	etcd, _, _ := unstructured.NestedMap(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd")
	g.Expect(etcd).To(Equal(map[string]any{"local": map[string]any{}}))

	again, err := Plan(ctx, applied(t, objs, plans[0]), "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows(again[0])).To(BeEmpty(), "a plan over its own output")
}

// TestPlanOfARunningClusterKeepsFieldsOthersSet: the objects of a running Cluster carry fields that other
// controllers and API server defaults set (testdata/quick-start-running.yaml); the topology owns only the
// fields it sets, so without a change of the topology nothing is modified, and a change modifies exactly
// its fields.
func TestPlanOfARunningClusterKeepsFieldsOthersSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	running := readObjects(t, "quick-start-class.yaml", "quick-start-running.yaml")
	kcp := find(running, "KubeadmControlPlane")
	rollout, _, _ := unstructured.NestedMap(kcp.Object, "spec", "rolloutStrategy")
	g.Expect(rollout).NotTo(BeEmpty(), "the fixture has fields others set")

	steady, err := Plan(ctx, running, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows(steady[0])).To(BeEmpty(), "no change of the topology")

	set(t, running, "Cluster", int64(3), "spec", "topology", "controlPlane", "replicas")
	scaled, err := Plan(ctx, running, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows(scaled[0])).To(Equal([]string{"KubeadmControlPlane modified"}))
	c := scaled[0].Changes[0]
	g.Expect(c.Original).NotTo(BeNil())
	before, after := c.Original.DeepCopy(), c.Object.DeepCopy()
	replicas, _, _ := unstructured.NestedInt64(after.Object, "spec", "replicas")
	g.Expect(replicas).To(Equal(int64(3)))
	unstructured.RemoveNestedField(before.Object, "spec", "replicas")
	unstructured.RemoveNestedField(after.Object, "spec", "replicas")
	g.Expect(after.Object).To(Equal(before.Object), "only spec.replicas changes; what others set stays")
}

package topologyplan

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan/internal/manifest"
)

func input(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("../../cli/clusterctl/alpha/testdata/topology-plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestPlanOfARunningClusterShowsOnlyWhatChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	objs := input(t)
	plans, err := Plan(ctx, objs, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).To(HaveLen(1))

	// The Cluster as the controller leaves it: every created object exists, the Cluster references them.
	running := input(t)
	var cluster *unstructured.Unstructured
	for i := range running {
		if running[i].GetKind() == "Cluster" {
			cluster = &running[i]
		}
	}
	for _, c := range plans[0].Changes {
		if c.Object.GetKind() == "Cluster" {
			g.Expect(c.Action).To(Equal(Modified), "the Cluster gets its references and labels")
			for k := range cluster.Object {
				delete(cluster.Object, k)
			}
			for k, v := range c.Object.DeepCopy().Object {
				cluster.Object[k] = v
			}
			continue
		}
		g.Expect(c.Action).To(Equal(Created))
		running = append(running, *c.Object.DeepCopy())
		ref := map[string]any{"apiVersion": c.Object.GetAPIVersion(), "kind": c.Object.GetKind(), "name": c.Object.GetName(), "namespace": "default"}
		switch c.Object.GetKind() {
		case "DockerCluster":
			_ = unstructured.SetNestedMap(cluster.Object, ref, "spec", "infrastructureRef")
		case "KubeadmControlPlane":
			_ = unstructured.SetNestedMap(cluster.Object, ref, "spec", "controlPlaneRef")
		}
	}
	steady, err := Plan(ctx, running, "my-docker-cluster")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(steady[0].Changes).To(BeEmpty(), "a cluster that matches its topology has no changes")

	// Changing a variable modifies exactly the control plane.
	vars, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "topology", "variables")
	vars[0].(map[string]any)["value"] = "other.registry"
	_ = unstructured.SetNestedSlice(cluster.Object, vars, "spec", "topology", "variables")
	changed, err := Plan(ctx, running, "default/my-docker-cluster")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed[0].Changes).To(HaveLen(1))
	g.Expect(changed[0].Changes[0].Action).To(Equal(Modified))
	g.Expect(changed[0].Changes[0].Object.GetKind()).To(Equal("KubeadmControlPlane"))
	g.Expect(changed[0].Changes[0].Diff).To(And(ContainSubstring("my.custom.registry"), ContainSubstring("other.registry")))

	// Removing the MachineDeployment from the topology deletes it.
	_ = unstructured.SetNestedSlice(cluster.Object, []any{}, "spec", "topology", "workers", "machineDeployments")
	removed, err := Plan(ctx, running, "")
	g.Expect(err).NotTo(HaveOccurred())
	var deleted []string
	for _, c := range removed[0].Changes {
		if c.Action == Deleted {
			deleted = append(deleted, c.Object.GetKind())
		}
	}
	g.Expect(deleted).To(Equal([]string{"MachineDeployment"}))
}

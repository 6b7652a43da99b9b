package reconciler_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// countingIndexer refuses an index registered twice for a kind, as a manager's cache does.
type countingIndexer struct{ registered map[string]int }

func (c *countingIndexer) IndexField(_ context.Context, obj client.Object, field string, _ client.IndexerFunc) error {
	key := fmt.Sprintf("%T %s", obj, field)
	c.registered[key]++
	if c.registered[key] > 1 {
		return fmt.Errorf("indexer conflict: %s", key)
	}
	return nil
}

// TestIndexByClusterName: controllers of one manager that share the cluster-name index can each ask for
// it; it is registered once per kind and manager.
func TestIndexByClusterName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	first := &countingIndexer{registered: map[string]int{}}
	g.Expect(reconciler.IndexByClusterName(ctx, first, &clusterv1.Machine{}, &clusterv1.MachineDeployment{})).To(Succeed())
	g.Expect(reconciler.IndexByClusterName(ctx, first, &clusterv1.Machine{})).To(Succeed(), "a second controller asking for the index")
	g.Expect(first.registered).To(HaveLen(2))
	for k, n := range first.registered {
		g.Expect(n).To(Equal(1), "%s registered %d times", k, n)
	}
	other := &countingIndexer{registered: map[string]int{}}
	g.Expect(reconciler.IndexByClusterName(ctx, other, &clusterv1.Machine{})).To(Succeed())
	g.Expect(other.registered).To(HaveLen(1), "another manager gets its own index")

	m := &clusterv1.Machine{}
	m.Labels = map[string]string{clusterv1.ClusterNameLabel: "c"}
	g.Expect(reconciler.ClusterNameOf(m)).To(Equal([]string{"c"}))
	g.Expect(reconciler.ClusterNameOf(&clusterv1.Machine{})).To(BeEmpty())
}

// TestObjectsOfCluster: a Cluster maps to the objects of its namespace whose spec.clusterName names it,
// labelled or not, and to nothing when the list fails.
func TestObjectsOfCluster(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	md := func(ns, name, cluster string) *clusterv1.MachineDeployment {
		return &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: clusterv1.MachineDeploymentSpec{ClusterName: cluster}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		md("ns", "a-workers", "a"), md("ns", "a-more", "a"), md("ns", "b-workers", "b"), md("other", "a-elsewhere", "a")).Build()
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	clusterName := func(o client.Object) string { return o.(*clusterv1.MachineDeployment).Spec.ClusterName }

	reqs := reconciler.ObjectsOfCluster(context.Background(), c, &clusterv1.MachineDeploymentList{}, cluster, clusterName)
	g.Expect(reqs).To(ConsistOf(
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a-workers"}},
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a-more"}}))

	// A list of a kind the client does not know fails: nothing is mapped.
	unknown := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	g.Expect(reconciler.ObjectsOfCluster(context.Background(), unknown, &clusterv1.MachineDeploymentList{}, cluster, clusterName)).To(BeEmpty())
}

package reconciler_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

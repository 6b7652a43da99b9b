package lifecycle

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/topology"
)

// A hook the topology controller does not call is refused before any Extension is called (Runtime is nil
// here).
func TestCallRefusesOtherHooks(t *testing.T) {
	g := NewWithT(t)
	_, err := (&Hooks{}).Call(context.Background(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, topology.HookCall{Hook: "BeforeClusterDelete"})
	g.Expect(err).To(MatchError("BeforeClusterDelete is not a lifecycle hook of managed topologies"))
}

package backend

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// TestListeners: every function registered with OnChange hears of each change, and one may register
// another while it is called.
func TestListeners(t *testing.T) {
	g := NewWithT(t)
	var l Listeners
	var first, second []types.NamespacedName
	l.OnChange(func(k types.NamespacedName) {
		first = append(first, k)
		if len(first) == 1 {
			l.OnChange(func(k types.NamespacedName) { second = append(second, k) })
		}
	})
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	l.Notify(a)
	l.Notify(b)
	g.Expect(first).To(Equal([]types.NamespacedName{a, b}))
	g.Expect(second).To(Equal([]types.NamespacedName{b}))
}

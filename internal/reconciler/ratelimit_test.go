package reconciler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestErrorBackoffIsCapped(t *testing.T) {
	l := ErrorBackoff(20 * time.Second)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "cp"}}
	var last time.Duration
	for i := range 30 {
		last = l.When(req)
		if i == 0 && last != FirstErrorBackoff {
			t.Fatalf("first retry after %s, want %s", last, FirstErrorBackoff)
		}
		if last > 20*time.Second {
			t.Fatalf("retry %d after %s: more than the cap of 20s", i+1, last)
		}
	}
	if last != 20*time.Second {
		t.Fatalf("after 30 failures in a row the retry comes after %s, want the cap of 20s", last)
	}
	l.Forget(req)
	if d := l.When(req); d != FirstErrorBackoff {
		t.Fatalf("after a success the first retry comes after %s, want %s", d, FirstErrorBackoff)
	}
}

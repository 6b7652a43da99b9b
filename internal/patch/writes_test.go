package patch

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func clusterAt(uid, resourceVersion string) *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: resourceVersion}}
}

func TestWritesStale(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	w := &Writes{now: func() time.Time { return now }}

	// The controller read version 5 and wrote version 6.
	w.Record("5", clusterAt("a", "6"))
	if !w.Stale(clusterAt("a", "5")) {
		t.Fatal("the version a write replaced is not stale")
	}
	if w.Stale(clusterAt("b", "5")) {
		t.Fatal("another object is stale")
	}
	// A second write, conflicting on version 6: the server has a newer one than 6 as well.
	w.Replaced(clusterAt("a", ""), "6")
	for _, rv := range []string{"5", "6"} {
		if !w.Stale(clusterAt("a", rv)) {
			t.Fatalf("version %s is not stale", rv)
		}
	}
	// The cache shows version 7: the object is forgotten, older versions are trusted again (never read).
	if w.Stale(clusterAt("a", "7")) {
		t.Fatal("the version the cache caught up with is stale")
	}
	if w.Stale(clusterAt("a", "5")) {
		t.Fatal("the object was not forgotten once the cache caught up")
	}
}

func TestWritesIgnoreWhatBringsNoEvent(t *testing.T) {
	w := &Writes{}
	// A write that changed nothing keeps its resourceVersion: no event follows, nothing to wait for.
	w.Record("5", clusterAt("a", "5"))
	if w.Stale(clusterAt("a", "5")) {
		t.Fatal("a write that changed nothing made its version stale")
	}
	// No version or no UID: nothing to remember.
	w.Replaced(clusterAt("a", ""), "")
	w.Replaced(clusterAt("", ""), "5")
	if w.Stale(clusterAt("a", "")) || w.Stale(clusterAt("", "5")) {
		t.Fatal("an empty version or UID was remembered")
	}
	// A nil *Writes records nothing and reports nothing stale.
	var none *Writes
	none.Record("5", clusterAt("a", "6"))
	if none.Stale(clusterAt("a", "5")) {
		t.Fatal("a nil Writes reported a stale object")
	}
}

func TestWritesExpire(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	w := &Writes{now: func() time.Time { return now }}
	w.Record("5", clusterAt("a", "6"))
	w.Record("1", clusterAt("gone", "2"))

	// A cache that lags longer than writesExpireAfter is trusted again, so that a lost event never
	// stops reconciles for good.
	now = now.Add(writesExpireAfter + time.Second)
	if w.Stale(clusterAt("a", "5")) {
		t.Fatal("an expired write still makes its version stale")
	}
	// Objects never read again (deleted) are dropped at the next write once expired.
	w.Record("9", clusterAt("b", "10"))
	if _, ok := w.objects["gone"]; ok {
		t.Fatal("an expired entry of an object never read again was kept")
	}
	if !w.Stale(clusterAt("b", "9")) {
		t.Fatal("a fresh write is not remembered")
	}
}

package patch

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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

	waited, expired := testutil.ToFloat64(staleReads.WithLabelValues(staleReadWaited)), testutil.ToFloat64(staleReads.WithLabelValues(staleReadExpired))
	if !w.Stale(clusterAt("a", "5")) {
		t.Fatal("a fresh write is not remembered")
	}
	// A cache that lags longer than writesExpireAfter is trusted again, so that a lost event never
	// stops reconciles for good.
	now = now.Add(writesExpireAfter + time.Second)
	if w.Stale(clusterAt("a", "5")) {
		t.Fatal("an expired write still makes its version stale")
	}
	if got := testutil.ToFloat64(staleReads.WithLabelValues(staleReadWaited)) - waited; got != 1 {
		t.Errorf("%s counted %v reads that waited, want 1", StaleReadsMetric, got)
	}
	if got := testutil.ToFloat64(staleReads.WithLabelValues(staleReadExpired)) - expired; got != 1 {
		t.Errorf("%s counted %v stale reads let through after the expiry, want 1", StaleReadsMetric, got)
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

// statusOnly is an update event of a's status alone from version from to version to.
func statusOnly(from, to string) event.UpdateEvent {
	return event.UpdateEvent{ObjectOld: clusterAt("a", from), ObjectNew: clusterAt("a", to)}
}

// A controller that filters out the events of its own status writes gets the one a stopped reconcile
// waits for, and only that one.
func TestWritesLetThroughTheAwaitedEvent(t *testing.T) {
	w := &Writes{}
	filter := w.LetThroughAwaited(dropUpdates)

	// The controller read version 5 and wrote the status: version 6. No reconcile waits: filtered out.
	w.Record("5", clusterAt("a", "6"))
	if filter.Update(statusOnly("5", "6")) {
		t.Fatal("the event of the controller's own status write went through with no reconcile waiting")
	}
	// The cache had version 6 when a reconcile that read 5 stopped: it runs again at once.
	if res, behind := w.Behind(clusterAt("a", "5")); !behind || res.RequeueAfter != caughtUpRequeueAfter {
		t.Fatalf("Behind after the event went by = %+v, %v; want a retry at once", res, behind)
	}
	if _, behind := w.Behind(clusterAt("a", "6")); behind {
		t.Fatal("the version the cache caught up with is behind")
	}

	// Version 6 replaced by a write of 7; a reconcile reads 6 before the cache has 7: it waits, with no retry.
	w.Record("6", clusterAt("a", "7"))
	if res, behind := w.Behind(clusterAt("a", "6")); !behind || !res.IsZero() {
		t.Fatalf("Behind = %+v, %v; want to wait for the event", res, behind)
	}
	// A late event of a replaced version does not wake it; the event of 7 does, once.
	if filter.Update(statusOnly("5", "6")) {
		t.Fatal("the event of a replaced version went through")
	}
	if !filter.Update(statusOnly("6", "7")) {
		t.Fatal("the awaited event was filtered out: the reconcile would wait for good")
	}
	if filter.Update(statusOnly("7", "8")) {
		t.Fatal("an event went through with no reconcile waiting any more")
	}
	// Events of other objects and the filter's own decisions are untouched.
	if filter.Update(event.UpdateEvent{ObjectOld: clusterAt("b", "1"), ObjectNew: clusterAt("b", "2")}) {
		t.Fatal("the event of an object never written went through")
	}
	if !w.LetThroughAwaited(predicate.Funcs{}).Update(statusOnly("8", "9")) {
		t.Fatal("an event the filter lets through was filtered out")
	}
	if !filter.Create(event.CreateEvent{Object: clusterAt("c", "1")}) {
		t.Fatal("a create event was filtered out")
	}
}

// A read from the API server that finds a newer version makes the reconcile wait for its event.
func TestWritesAwait(t *testing.T) {
	w := &Writes{}
	filter := w.LetThroughAwaited(dropUpdates)
	if res := w.Await(clusterAt("a", "5")); !res.IsZero() {
		t.Fatalf("Await = %+v; want to wait for the event", res)
	}
	// The stopped reconcile still writes the status of what it saw (merged into the newer object): the
	// event of that write, filtered out as the controller's own, must bring the config back all the same.
	w.Record("5", clusterAt("a", "6"))
	if !filter.Update(statusOnly("5", "6")) {
		t.Fatal("the awaited event was filtered out")
	}
	if _, behind := w.Behind(clusterAt("a", "6")); behind {
		t.Fatal("the newer version is behind")
	}
}

// The event of a newer version went by, filtered out, before a read from the API server told the reconcile
// that its copy is old: it runs again at once instead of waiting for an event that already came.
func TestWritesAwaitAfterTheEvent(t *testing.T) {
	w := &Writes{}
	filter := w.LetThroughAwaited(dropUpdates)
	w.Record("4", clusterAt("a", "5"))
	if filter.Update(statusOnly("5", "6")) {
		t.Fatal("an event went through with no reconcile waiting")
	}
	if res := w.Await(clusterAt("a", "5")); res.RequeueAfter != caughtUpRequeueAfter {
		t.Fatalf("Await after the event of the newer version = %+v; want a retry at once", res)
	}
}

// dropUpdates is a watch filter that drops every update, as the providers' filters drop the events of
// their own status writes.
var dropUpdates = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}

package patch

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// caughtUpRequeueAfter is how soon a reconcile that stopped on a copy older than the server's runs again
// when the cache already had the newer version by then (Behind): at once, but after the worker is free.
const caughtUpRequeueAfter = 10 * time.Millisecond

// writesExpireAfter bounds how long a write is remembered: a cache that lags more than this is trusted
// again, so that nothing waits forever on an event that will not come. It is minutes, not seconds: when a
// thousand Clusters are deleted at once on two cores, the managers' caches fall behind the API server by
// more than 30 s, and a reconcile let through on a copy that old did its last step again (the Cluster's
// ok-to-delete annotation, its status over a version others had replaced) and failed with a conflict.
const writesExpireAfter = 2 * time.Minute

// Writes remembers, for each object a controller wrote, the resourceVersions its writes replaced (or that
// a write conflicted with), until its cache shows another one. A reconcile that reads one of them from the
// cache works on a copy older than the server's: it would compute and send the same changes again, with
// new transition times when conditions change, or fail with a conflict again, so it stops instead, and
// the watch event of the newer version brings the object back once the cache has it. The zero value is
// ready to use; a nil *Writes records nothing.
type Writes struct {
	mu      sync.Mutex
	objects map[types.UID]*replaced
	// pruned is when expired entries were last dropped.
	pruned time.Time
	// now is the clock; time.Now when nil. Tests replace it.
	now func() time.Time
}

type replaced struct {
	versions []string
	at       time.Time
	// awaited: a reconcile stopped on one of versions (Behind) and waits for the event of a newer one.
	awaited bool
	// seen is the version of the last update event of the object (the cache has it).
	seen string
}

// newer reports whether the cache has a version newer than the ones replaced: the last event's, when it
// is not one of them (events come in order, and a write replaces a version the cache showed).
func (r *replaced) newer() bool {
	return r.seen != "" && !slices.Contains(r.versions, r.seen)
}

func (w *Writes) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// Record notes that a write replaced version previous of obj; obj is the object the server returned. A
// write that changed nothing (the same resourceVersion) is not recorded: no event follows it.
func (w *Writes) Record(previous string, obj client.Object) {
	if obj.GetResourceVersion() == previous {
		return
	}
	w.Replaced(obj, previous)
}

// Replaced notes that the server has a newer version of obj than version: a write replaced it, or a write
// sent with it as precondition failed with a conflict. The event of the newer version is on its way.
func (w *Writes) Replaced(obj client.Object, version string) {
	if w == nil || version == "" || obj.GetUID() == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock()
	if w.objects == nil {
		w.objects = map[types.UID]*replaced{}
	}
	// Objects deleted before the cache caught up are never looked at again: drop them once expired.
	if now.Sub(w.pruned) > writesExpireAfter {
		for uid, r := range w.objects {
			if now.Sub(r.at) > writesExpireAfter {
				delete(w.objects, uid)
			}
		}
		w.pruned = now
	}
	r := w.objects[obj.GetUID()]
	if r == nil {
		r = &replaced{}
		w.objects[obj.GetUID()] = r
	}
	if !slices.Contains(r.versions, version) {
		r.versions = append(r.versions, version)
	}
	r.at = now
}

// Stale reports whether obj, as read from the cache, is a version that the controller knows the server has
// replaced (Record, Replaced). Once the cache shows another version, the object is forgotten. A controller
// that filters out some events of obj's kind uses Behind instead.
func (w *Writes) Stale(obj client.Object) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stale(obj) != nil
}

// stale is Stale with w.mu held; it returns the entry of obj when obj is stale.
func (w *Writes) stale(obj client.Object) *replaced {
	r := w.objects[obj.GetUID()]
	if r == nil {
		return nil
	}
	if slices.Contains(r.versions, obj.GetResourceVersion()) {
		if w.clock().Sub(r.at) <= writesExpireAfter {
			staleReads.WithLabelValues(staleReadWaited).Inc()
			return r
		}
		staleReads.WithLabelValues(staleReadExpired).Inc()
	}
	delete(w.objects, obj.GetUID())
	return nil
}

// Behind is Stale for a controller whose watch filters out some update events of obj's kind, such as the
// events of its own status writes (reconciler.NotOwnStatus), through LetThroughAwaited: the filter then
// lets through the event of the newer version, which brings obj back. When the cache had the newer
// version already, the result given runs the reconcile again at once. A reconcile that gets true stops and
// returns the result.
func (w *Writes) Behind(obj client.Object) (reconcile.Result, bool) {
	if w == nil {
		return reconcile.Result{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.stale(obj)
	switch {
	case r == nil:
		return reconcile.Result{}, false
	case r.newer():
		// The event went by between the read of obj and now.
		return reconcile.Result{RequeueAfter: caughtUpRequeueAfter}, true
	default:
		r.awaited = true
		return reconcile.Result{}, true
	}
}

// Await notes that obj, as read from the cache, is older than the server's (found out by a read from the
// API server) and reports what Behind reports: the reconcile stops and returns the result. An event that
// went by before this controller wrote the object is not remembered, so the filter must drop only events
// of the controller's own writes (as NotOwnStatus does for a kind whose status no one else writes): the
// newer version is then either one of those, remembered, or an event the filter lets through anyway.
func (w *Writes) Await(obj client.Object) reconcile.Result {
	w.Replaced(obj, obj.GetResourceVersion())
	res, _ := w.Behind(obj)
	return res
}

// LetThroughAwaited returns p letting through, besides what p lets through, the update event that a
// reconcile stopped by Behind waits for: the event of a version newer than the ones this controller's
// writes replaced, which p may filter out. Every update event is seen, so that a reconcile that stops
// after the event went by knows it (Behind).
func (w *Writes) LetThroughAwaited(p predicate.Predicate) predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  p.Create,
		DeleteFunc:  p.Delete,
		GenericFunc: p.Generic,
		UpdateFunc: func(e event.UpdateEvent) bool {
			awaited := e.ObjectNew != nil && w.seen(e.ObjectNew)
			return p.Update(e) || awaited
		},
	}
}

// seen notes that the cache has obj's version and reports whether a reconcile waits for it.
func (w *Writes) seen(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.objects[obj.GetUID()]
	if r == nil {
		return false
	}
	r.seen = obj.GetResourceVersion()
	if !r.newer() {
		return false
	}
	awaited := r.awaited
	r.awaited = false
	return awaited
}

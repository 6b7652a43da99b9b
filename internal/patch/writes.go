package patch

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writesExpireAfter bounds how long a write is remembered: a cache that lags more than this is trusted
// again, so that nothing waits forever on an event that will not come.
const writesExpireAfter = 30 * time.Second

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
// replaced (Record, Replaced). Once the cache shows another version, the object is forgotten.
func (w *Writes) Stale(obj client.Object) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.objects[obj.GetUID()]
	if r == nil {
		return false
	}
	if w.clock().Sub(r.at) <= writesExpireAfter && slices.Contains(r.versions, obj.GetResourceVersion()) {
		return true
	}
	delete(w.objects, obj.GetUID())
	return false
}

package memory

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
)

// historySize is how many events a store keeps for watches that resume from a resourceVersion; a watch
// from an older one gets 410 Gone and relists, as with a compacted etcd.
const historySize = 1000

// watchBuffer is how many events a watcher may be behind before its watch ends.
const watchBuffer = 256

// store is one workload cluster's objects: every resource of the API the memory backend serves, kept as
// unstructured content, with one resourceVersion counter for the cluster (as etcd's revision) and the
// recent events for watches.
type store struct {
	mu       sync.Mutex
	rv       uint64
	objects  map[schema.GroupResource]map[string]*unstructured.Unstructured // key: namespace/name
	history  []event
	watchers map[*watcher]struct{}
}

type event struct {
	rv  uint64
	gr  schema.GroupResource
	typ watch.EventType
	obj *unstructured.Unstructured
}

// watcher receives the events of one resource that match its filter.
type watcher struct {
	gr        schema.GroupResource
	namespace string
	labels    labels.Selector
	fields    fields.Selector
	ch        chan event
	// overflow is closed when the watcher could not keep up; its watch ends and the client relists.
	overflow chan struct{}
	once     sync.Once
}

func newStore() *store {
	return &store{objects: map[schema.GroupResource]map[string]*unstructured.Unstructured{}, watchers: map[*watcher]struct{}{}}
}

func objectKey(namespace, name string) string { return namespace + "/" + name }

// matches says whether obj passes the filters of a list or watch.
func matches(obj *unstructured.Unstructured, namespace string, ls labels.Selector, fs fields.Selector) bool {
	if namespace != "" && obj.GetNamespace() != namespace {
		return false
	}
	if ls != nil && !ls.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if fs != nil && !fs.Empty() {
		return fs.Matches(fieldSet{obj})
	}
	return true
}

// fieldSet reads field selectors' paths (metadata.name, spec.nodeName, status.phase...) from an object.
type fieldSet struct{ obj *unstructured.Unstructured }

func (f fieldSet) Has(field string) bool { _, ok := f.get(field); return ok }
func (f fieldSet) Get(field string) string {
	v, _ := f.get(field)
	return v
}

func (f fieldSet) get(field string) (string, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(f.obj.Object, strings.Split(field, ".")...)
	if err != nil || !ok {
		// Kubernetes answers an unset field as the empty string.
		return "", true
	}
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	default:
		return fmt.Sprint(t), true
	}
}

// get returns a copy of an object.
func (s *store) get(gr schema.GroupResource, namespace, name string) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[gr][objectKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return obj.DeepCopy(), nil
}

// list returns copies of the objects that match, sorted by namespace and name, and the store's
// resourceVersion.
func (s *store) list(gr schema.GroupResource, namespace string, ls labels.Selector, fs fields.Selector) ([]*unstructured.Unstructured, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*unstructured.Unstructured
	for _, obj := range s.objects[gr] {
		if matches(obj, namespace, ls, fs) {
			out = append(out, obj.DeepCopy())
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(objectKey(a.GetNamespace(), a.GetName()), objectKey(b.GetNamespace(), b.GetName()))
	})
	return out, strconv.FormatUint(s.rv, 10)
}

// create stores a new object, filling in its server-set metadata.
func (s *store) create(gr schema.GroupResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		for {
			name := obj.GetGenerateName() + strings.ToLower(string(uuid.NewUUID())[:5])
			if _, taken := s.objects[gr][objectKey(obj.GetNamespace(), name)]; !taken {
				obj.SetName(name)
				break
			}
		}
	}
	if obj.GetName() == "" {
		return nil, apierrors.NewBadRequest("metadata.name or metadata.generateName is required")
	}
	key := objectKey(obj.GetNamespace(), obj.GetName())
	if _, exists := s.objects[gr][key]; exists {
		return nil, apierrors.NewAlreadyExists(gr, obj.GetName())
	}
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(metav1.NewTime(time.Now()))
	obj.SetGeneration(1)
	obj.SetDeletionTimestamp(nil)
	if s.objects[gr] == nil {
		s.objects[gr] = map[string]*unstructured.Unstructured{}
	}
	s.commit(gr, key, watch.Added, obj)
	return obj.DeepCopy(), nil
}

// update replaces an object. A resourceVersion in obj must be the stored one. An object being deleted
// whose last finalizer is removed goes away.
func (s *store) update(gr schema.GroupResource, obj *unstructured.Unstructured, subresource string) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objects[gr][objectKey(obj.GetNamespace(), obj.GetName())]
	if !ok {
		return nil, apierrors.NewNotFound(gr, obj.GetName())
	}
	return s.updateLocked(gr, old, obj, subresource)
}

// patch changes an object with fn, which gets a copy of the stored one, atomically.
func (s *store) patch(gr schema.GroupResource, namespace, name, subresource string, fn func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objects[gr][objectKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	obj, err := fn(old.DeepCopy())
	if err != nil {
		return nil, err
	}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return s.updateLocked(gr, old, obj, subresource)
}

func (s *store) updateLocked(gr schema.GroupResource, old, obj *unstructured.Unstructured, subresource string) (*unstructured.Unstructured, error) {
	key := objectKey(obj.GetNamespace(), obj.GetName())
	if rv := obj.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() {
		return nil, apierrors.NewConflict(gr, obj.GetName(), fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	obj.SetGeneration(old.GetGeneration())
	if status, has := old.Object["status"]; has || subresource == "status" {
		switch subresource {
		case "status":
			// Only the status changes through the status subresource.
			next := old.DeepCopy()
			if st, ok := obj.Object["status"]; ok {
				next.Object["status"] = st
			} else {
				delete(next.Object, "status")
			}
			obj = next
		default:
			if hasStatusSubresource(gr) {
				obj.Object["status"] = status
			}
		}
	}
	if subresource == "" {
		oldSpec, _, _ := unstructured.NestedFieldNoCopy(old.Object, "spec")
		newSpec, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec")
		if fmt.Sprint(oldSpec) != fmt.Sprint(newSpec) {
			obj.SetGeneration(old.GetGeneration() + 1)
		}
	}
	if obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 {
		s.commit(gr, key, watch.Deleted, obj)
		return obj.DeepCopy(), nil
	}
	s.commit(gr, key, watch.Modified, obj)
	return obj.DeepCopy(), nil
}

// remove deletes an object, or marks it deleted while it has finalizers.
func (s *store) remove(gr schema.GroupResource, namespace, name string) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := objectKey(namespace, name)
	old, ok := s.objects[gr][key]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	obj := old.DeepCopy()
	if len(obj.GetFinalizers()) > 0 {
		if obj.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(time.Now())
			obj.SetDeletionTimestamp(&now)
			s.commit(gr, key, watch.Modified, obj)
		}
		return obj.DeepCopy(), nil
	}
	s.commit(gr, key, watch.Deleted, obj)
	return obj.DeepCopy(), nil
}

// commit applies a change under s.mu: a new resourceVersion, the stored object, the event to watchers.
func (s *store) commit(gr schema.GroupResource, key string, typ watch.EventType, obj *unstructured.Unstructured) {
	s.rv++
	obj.SetResourceVersion(strconv.FormatUint(s.rv, 10))
	if typ == watch.Deleted {
		delete(s.objects[gr], key)
	} else {
		if s.objects[gr] == nil {
			s.objects[gr] = map[string]*unstructured.Unstructured{}
		}
		s.objects[gr][key] = obj
	}
	ev := event{rv: s.rv, gr: gr, typ: typ, obj: obj.DeepCopy()}
	s.history = append(s.history, ev)
	if len(s.history) > historySize {
		s.history = slices.Delete(s.history, 0, len(s.history)-historySize)
	}
	for w := range s.watchers {
		w.send(ev)
	}
}

func (w *watcher) send(ev event) {
	if ev.gr != w.gr || !matches(ev.obj, w.namespace, w.labels, w.fields) {
		return
	}
	select {
	case w.ch <- ev:
	default:
		w.once.Do(func() { close(w.overflow) })
	}
}

// watch starts a watch of gr. With since 0 the watch starts with an ADDED event for every object that
// matches (a watch without a resourceVersion, or "0"); otherwise with the events after since, or
// errGone when they are no longer kept.
func (s *store) watch(gr schema.GroupResource, namespace string, ls labels.Selector, fs fields.Selector, since uint64, initial bool) (*watcher, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Room for the initial events and a burst after them: a watcher that falls further behind ends and its
	// client lists again. (A buffer of 4,096 events cost 270 KB per open watch.)
	size := watchBuffer
	if initial {
		size += len(s.objects[gr])
	} else if since < s.rv {
		size += len(s.history)
	}
	w := &watcher{gr: gr, namespace: namespace, labels: ls, fields: fs, ch: make(chan event, size), overflow: make(chan struct{})}
	if initial {
		for _, obj := range s.objects[gr] {
			w.send(event{rv: s.rv, gr: gr, typ: watch.Added, obj: obj.DeepCopy()})
		}
	} else if since < s.rv {
		if len(s.history) == 0 || s.history[0].rv > since+1 {
			return nil, 0, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", since, s.rv))
		}
		for _, ev := range s.history {
			if ev.rv > since {
				w.send(ev)
			}
		}
	}
	s.watchers[w] = struct{}{}
	return w, s.rv, nil
}

func (s *store) stopWatch(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers, w)
}

package external

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Tracker starts, once per kind, a watch of provider objects for a controller: provider kinds are only
// known when a Cluster or Machine references them, so their watches are added while the controller runs.
type Tracker struct {
	Controller controller.Controller
	Cache      cache.Cache
	// Predicates filter the events of every watch (for example --watch-filter).
	Predicates []predicate.Predicate

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

// Watch makes sure events of obj's kind reach the controller through h.
func (t *Tracker) Watch(obj *unstructured.Unstructured, h handler.EventHandler) error {
	gvk := obj.GroupVersionKind()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watched[gvk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := t.Controller.Watch(source.Kind[client.Object](t.Cache, u, h, t.Predicates...)); err != nil {
		return fmt.Errorf("watching %s: %w", gvk, err)
	}
	if t.watched == nil {
		t.watched = map[schema.GroupVersionKind]bool{}
	}
	t.watched[gvk] = true
	return nil
}

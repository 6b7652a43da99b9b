package reconciler

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// NotOwnStatus lets through every event of a controller's primary object but an update of its status
// alone, which the controller writes itself at the end of a reconcile: reconciling it again would only read
// again what was just written (and, on 2 cores, the management API server is the bottleneck). Resyncs pass.
// Use it only for kinds whose status no one else writes.
func NotOwnStatus() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil || o.GetResourceVersion() == n.GetResourceVersion() {
			return true
		}
		return o.GetGeneration() != n.GetGeneration() ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
			!reflect.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!reflect.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!reflect.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
			!reflect.DeepEqual(o.GetFinalizers(), n.GetFinalizers())
	}}
}

// UpdateChanged lets through the updates of objects of type T that changed says matter, the updates of any
// other type, and every create, delete and generic event.
func UpdateChanged[T client.Object](changed func(before, after T) bool) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(T)
		after, ok2 := e.ObjectNew.(T)
		if !ok1 || !ok2 {
			return true
		}
		return changed(before, after)
	}}
}

// SpecOrMetadataChanged lets through the updates of an object that change its spec (its generation), its
// labels or annotations, or its deletion timestamp, those that one of also lets through, and every create,
// delete and generic event. The status changes of an object that other controllers write many times while
// it is created are not a reason to reconcile the objects that watch it.
func SpecOrMetadataChanged(also ...predicate.Predicate) predicate.Predicate {
	return predicate.Or(append([]predicate.Predicate{predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
		}}}, also...)...)
}

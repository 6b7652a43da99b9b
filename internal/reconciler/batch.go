package reconciler

import (
	"context"
	"maps"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// EnqueueAfter maps the events of an object with toRequests (both the old and the new object of an update),
// and the requests are reconciled once delay has passed: the events of that time join the one waiting, so
// that an object whose dependents change together writes its status once for all of them rather than once
// for each.
func EnqueueAfter(delay time.Duration, toRequests handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, obj := range objs {
			for _, req := range toRequests(ctx, obj) {
				q.AddAfter(req, delay)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
	}
}

// EnqueueControllerAfter maps the events of an object to its controller owner of kind ownerKind in the
// cluster.x-k8s.io group (whatever its version), as Owns does, but the owner is reconciled once delay has
// passed (see EnqueueAfter): a MachineSet whose Machines change together writes its status once.
func EnqueueControllerAfter(ownerKind string, delay time.Duration) handler.EventHandler {
	return EnqueueAfter(delay, func(_ context.Context, obj client.Object) []reconcile.Request {
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.Kind != ownerKind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != clusterv1.GroupVersion.Group {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
	})
}

// DelayConditionChanges passes the events of h on, but an update that changes nothing of the object other
// than its conditions (status.conditions, status.v1beta2.conditions and status.deprecated's, its
// resourceVersion and managed fields) reaches the queue once delay has passed, joining any other waiting
// then: a provider object's conditions change in bursts (a control plane's Ready condition follows its
// Machine through its phases, a reason at a time), and an owner that mirrors them writes once for the
// burst. So does any update of an object being deleted: the owner that deleted it waits for it to be gone,
// which its delete event says at once, and mirrors the steps of its deletion (conditions going to
// Deleting, counters going down, a few updates within a second or two) in fewer writes. Every other
// change (readiness, initialization, the endpoint, counters, the spec) is passed on at once, and so is
// any other update of an object that is not unstructured (its conditions are not compared).
func DelayConditionChanges(h handler.EventHandler, delay time.Duration) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  h.Create,
		DeleteFunc:  h.Delete,
		GenericFunc: h.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.ObjectNew.GetDeletionTimestamp().IsZero() || onlyConditionsChanged(e.ObjectOld, e.ObjectNew) {
				q = delayedQueue{TypedRateLimitingInterface: q, delay: delay}
			}
			h.Update(ctx, e, q)
		},
	}
}

// delayedQueue adds what a handler adds once delay has passed.
type delayedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	delay time.Duration
}

func (q delayedQueue) Add(req reconcile.Request) { q.AddAfter(req, q.delay) }

// onlyConditionsChanged reports whether two versions of an unstructured object differ in their conditions
// alone.
func onlyConditionsChanged(before, after client.Object) bool {
	b, ok1 := before.(*unstructured.Unstructured)
	a, ok2 := after.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return false
	}
	return reflect.DeepEqual(withoutConditions(b.Object), withoutConditions(a.Object))
}

// withoutConditions is a shallow copy of obj without its conditions, resourceVersion and managed fields;
// obj is not changed.
func withoutConditions(obj map[string]any) map[string]any {
	obj = maps.Clone(obj)
	without := func(m map[string]any, path []string, keys ...string) {
		parent := m
		for _, p := range path {
			next, ok := parent[p].(map[string]any)
			if !ok {
				return
			}
			next = maps.Clone(next)
			parent[p] = next
			parent = next
		}
		for _, k := range keys {
			delete(parent, k)
		}
	}
	without(obj, []string{"metadata"}, "resourceVersion", "managedFields")
	without(obj, []string{"status"}, "conditions")
	without(obj, []string{"status", "v1beta2"}, "conditions")
	without(obj, []string{"status", "deprecated", "v1beta1"}, "conditions")
	return obj
}

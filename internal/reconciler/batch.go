package reconciler

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

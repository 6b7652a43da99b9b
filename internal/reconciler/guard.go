package reconciler

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/internal/patch"
)

// ObjectReconciler reconciles one object of its kind, as Guarded read it for it.
type ObjectReconciler[T client.Object] interface {
	Reconcile(ctx context.Context, obj T) (reconcile.Result, error)
}

// Releaser is implemented by an ObjectReconciler that acts when the object of a request no longer
// exists: it forgets what it remembered of it, or releases what the object stood for.
type Releaser interface {
	Release(ctx context.Context, key types.NamespacedName) error
}

// Guarded returns the reconciler that a controller of one kind runs. It reads the object of each request
// from c (the manager's cache). An object that no longer exists ends the reconcile (after r's Release, when
// r has one). A copy older than the controller's last write of the object (writes, see patch.Writes.Behind)
// ends it too: reconciling that copy would send the same changes again, with new transition times when
// conditions change, or fail with a conflict; the event of the newer version brings the object back.
// Otherwise r reconciles the copy. As RequeueOnConflict, conflicts are requeued quietly and every
// outcome counts under the name of r's package.
func Guarded[T client.Object](c client.Reader, writes *patch.Writes, r ObjectReconciler[T]) reconcile.Reconciler {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		panic(fmt.Sprintf("reconciler.Guarded needs a pointer type, got %s", typ))
	}
	typ = typ.Elem()
	kind := typ.Name()
	return requeueOnConflict(controllerName(r), reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		obj := reflect.New(typ).Interface().(T) //nolint:forcetypeassert // typ is T's element type.
		if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
			if !apierrors.IsNotFound(err) {
				return reconcile.Result{}, fmt.Errorf("getting %s %s: %w", kind, req.NamespacedName, err)
			}
			if rel, ok := r.(Releaser); ok {
				return reconcile.Result{}, rel.Release(ctx, req.NamespacedName)
			}
			return reconcile.Result{}, nil
		}
		if res, behind := writes.Behind(obj); behind {
			ctrl.LoggerFrom(ctx).V(5).Info("Waiting for the cache to show the last write of the " + kind)
			return res, nil
		}
		return r.Reconcile(ctx, obj)
	}))
}

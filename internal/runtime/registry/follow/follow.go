// Package follow fills a Runtime SDK registry from the ExtensionConfigs the core's controller discovered:
// the handlers their status lists, followed as they change (upstream's ExtensionConfig controller in
// ReadOnly mode, which the managers of providers that call hooks run, such as the KubeadmControlPlane's for
// CanUpdateMachine). It discovers nothing and writes nothing.
package follow

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
)

// Setup adds to mgr a controller that keeps reg in line with the ExtensionConfigs' status.handlers, and the
// warm-up of reg; watchFilter is the value of --watch-filter.
func Setup(mgr ctrl.Manager, reg *registry.Registry, watchFilter string, options controller.Options) error {
	c := mgr.GetClient()
	err := ctrl.NewControllerManagedBy(mgr).
		For(&runtimev1.ExtensionConfig{}).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(watchFilter)).
		Named("extensionconfig").
		Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
			ec := &runtimev1.ExtensionConfig{}
			if err := c.Get(ctx, req.NamespacedName, ec); err != nil {
				if apierrors.IsNotFound(err) {
					reg.Remove(req.Name)
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, fmt.Errorf("getting ExtensionConfig %s: %w", req.Name, err)
			}
			if !ec.DeletionTimestamp.IsZero() {
				reg.Remove(ec.Name)
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, reg.Add(ec)
		}))
	if err != nil {
		return fmt.Errorf("building the ExtensionConfig controller: %w", err)
	}
	reader := mgr.GetAPIReader()
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return WarmUp(ctx, reader, reg) }))
}

// WarmUp fills reg from the handlers the ExtensionConfigs' status lists. It retries reading them until it
// succeeds; a single ExtensionConfig that cannot be registered is left to its reconcile.
func WarmUp(ctx context.Context, reader client.Reader, reg *registry.Registry) error {
	log := ctrl.LoggerFrom(ctx).WithName("extensionconfig-warmup")
	list := &runtimev1.ExtensionConfigList{}
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second},
		func(ctx context.Context) (bool, error) {
			if err := reader.List(ctx, list); err != nil {
				log.Error(err, "Listing ExtensionConfigs to warm up the Runtime SDK registry")
				return false, nil
			}
			return true, nil
		})
	if err != nil {
		return nil //nolint:nilerr // The manager is stopping.
	}
	if err := reg.WarmUp(list.Items); err != nil {
		log.Error(err, "Some ExtensionConfigs were not registered; their reconcile reports why")
	}
	log.Info("Runtime SDK registry warmed up", "extensionConfigs", len(list.Items))
	return nil
}

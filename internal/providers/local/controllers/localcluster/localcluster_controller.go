package localcluster

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/controllers/managedby"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Reconciler reconciles LocalClusters.
type Reconciler struct {
	Client      client.Client      // the manager's (cached) client
	APIReader   client.Reader      // uncached reader, for the rare read that must not be stale
	Contracts   *contract.Resolver // shared
	WatchFilter string             // value of --watch-filter; "" = everything

	// Backend runs the workload control planes.
	Backend backend.Backend
	// RetryInterval is how soon a LocalCluster whose control plane is not ready is looked at again, in
	// case a backend notification is missed; backend.RetryInterval when zero.
	RetryInterval time.Duration

	// writes are the versions of LocalClusters this controller's writes replaced.
	writes patch.Writes
}

// SetupWithManager builds the controller.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.RetryInterval == 0 {
		r.RetryInterval = backend.RetryInterval
	}
	// The watch filter applies to the objects of each watch rather than as a controller-wide event filter,
	// because the backend's notifications carry only a key (and only name clusters that passed the filter).
	watchFilter := reconciler.HasWatchLabel(r.WatchFilter)
	return ctrl.NewControllerManagedBy(mgr).
		Named("localcluster").
		WithOptions(options).
		For(&infrav1.LocalCluster{}, builder.WithPredicates(watchFilter, managedby.NotExternal(), r.writes.LetThroughAwaited(reconciler.NotOwnStatus()))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToLocalCluster), builder.WithPredicates(watchFilter, clusterSpecChanged())).
		// A Machine deleted by force may leave its machine running: see reconcileOrphanedMachines.
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToLocalCluster), builder.WithPredicates(watchFilter, machineDeleted())).
		WatchesRawSource(backend.Changes(r.Backend, &handler.EnqueueRequestForObject{})).
		Complete(reconciler.Guarded(r.Client, &r.writes, r))
}

// clusterSpecChanged lets through the Cluster changes a LocalCluster depends on: its spec (paused, the
// infrastructure reference), its labels and annotations (the watch filter, the paused annotation), its
// deletion. The Cluster's status changes many times while it is created; none of them is a reason to
// look at the LocalCluster again.
func clusterSpecChanged() predicate.Predicate {
	return reconciler.SpecOrMetadataChanged()
}

// clusterToLocalCluster maps a Cluster to the LocalCluster its spec.infrastructureRef names.
func clusterToLocalCluster(_ context.Context, o client.Object) []reconcile.Request {
	cluster, ok := o.(*clusterv1.Cluster)
	if !ok || cluster.Spec.InfrastructureRef == nil {
		return nil
	}
	ref := cluster.Spec.InfrastructureRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != infrav1.GroupVersion.Group || ref.Kind != "LocalCluster" {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = cluster.Namespace
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
}

// Release stops the processes of a LocalCluster gone without this provider's finalizer: clusterctl move
// removes the finalizers of what it moved away before deleting it (and a user may force a deletion).
// Nothing is torn down: the cluster's data stays for the provider that runs the LocalCluster now.
func (r *Reconciler) Release(ctx context.Context, key types.NamespacedName) error {
	return r.Backend.ReleaseCluster(ctx, key)
}

// Reconcile reconciles one LocalCluster.
func (r *Reconciler) Reconcile(ctx context.Context, lc *infrav1.LocalCluster) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	if managedby.IsExternal(lc) {
		log.V(1).Info("The LocalCluster is externally managed, skipping it")
		return ctrl.Result{}, nil
	}
	cluster, err := r.ownerCluster(ctx, lc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil && lc.DeletionTimestamp.IsZero() {
		log.Info("Waiting for the Cluster controller to set an owner reference on the LocalCluster")
		return ctrl.Result{}, nil
	}
	if cluster != nil {
		log = log.WithValues("Cluster", klog.KObj(cluster))
		ctx = ctrl.LoggerInto(ctx, log)
	}

	s := &scope{localCluster: lc, cluster: cluster}
	helper := patch.NewHelper(lc, r.Client, patch.WithWrites(&r.writes))
	defer func() {
		setStatus(lc, s.facts)
		if err := helper.Patch(ctx, lc); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()

	// A deletion for a move is honoured even while paused (a move pauses the Cluster first): releasing the
	// cluster tears nothing down.
	if reconciler.IsDeletedForMove(lc) {
		s.facts.paused = reconciler.IsPaused(cluster, lc)
		return r.reconcileDeleteForMove(ctx, s)
	}
	if reconciler.IsPaused(cluster, lc) {
		s.facts.paused = true
		log.V(1).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	if !lc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// ownerCluster returns the Cluster that owns lc, or nil when it has none (or it is gone).
func (r *Reconciler) ownerCluster(ctx context.Context, lc client.Object) (*clusterv1.Cluster, error) {
	owner := &clusterv1.Cluster{}
	if found, err := reconciler.GetOwner(ctx, r.Client, lc, "Cluster", owner); !found || err != nil {
		return nil, err
	}
	return owner, nil
}

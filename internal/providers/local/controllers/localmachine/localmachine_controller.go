package localmachine

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Reconciler reconciles LocalMachines.
type Reconciler struct {
	Client      client.Client      // the manager's (cached) client
	Contracts   *contract.Resolver // shared
	WatchFilter string             // value of --watch-filter; "" = everything

	// Backend registers the Nodes.
	Backend backend.Backend
	// RetryInterval is how soon a LocalMachine waiting for its control plane is looked at again;
	// backend.RetryInterval when zero.
	RetryInterval time.Duration
	// Now is the clock of the start-up delay; time.Now when nil.
	Now func() time.Time

	// writes are the versions of LocalMachines this controller's writes replaced.
	writes patch.Writes
}

// SetupWithManager builds the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &infrav1.LocalMachine{}); err != nil {
		return err
	}
	if r.RetryInterval == 0 {
		r.RetryInterval = backend.RetryInterval
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	// The watch filter applies to the objects of each watch rather than as a controller-wide event filter,
	// because the backend's notifications carry only a key (and only name clusters that passed the filter).
	watchFilter := reconciler.HasWatchLabel(r.WatchFilter)
	return ctrl.NewControllerManagedBy(mgr).
		Named("localmachine").
		WithOptions(options).
		For(&infrav1.LocalMachine{}, builder.WithPredicates(watchFilter, managedby.NotExternal(), r.writes.LetThroughAwaited(reconciler.NotOwnStatus()))).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToLocalMachine), builder.WithPredicates(watchFilter, ownerChanged())).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToLocalMachines), builder.WithPredicates(watchFilter, clusterChanged())).
		Watches(&infrav1.LocalCluster{}, handler.EnqueueRequestsFromMapFunc(r.localClusterToLocalMachines), builder.WithPredicates(watchFilter)).
		WatchesRawSource(backend.Changes(r.Backend, handler.EnqueueRequestsFromMapFunc(r.changedLocalClusterToLocalMachines))).
		Complete(reconciler.Guarded(r.Client, &r.writes, r))
}

// ownerChanged lets through the Machine changes a LocalMachine depends on: its spec (the bootstrap data
// Secret, the version, the failure domain), labels and annotations, deletion. The Machine's status, which
// the core and the control plane provider write many times while it is created, is not read.
func ownerChanged() predicate.Predicate {
	return reconciler.SpecOrMetadataChanged()
}

// clusterChanged lets through the Cluster changes a LocalMachine depends on: those of ownerChanged and
// status.infrastructureReady.
func clusterChanged() predicate.Predicate {
	return predicate.Or(ownerChanged(), reconciler.ClusterUpdates(func(old, updated *clusterv1.Cluster) bool {
		return old.Status.InfrastructureReady != updated.Status.InfrastructureReady
	}))
}

// machineToLocalMachine maps a Machine to the LocalMachine its spec.infrastructureRef names.
func machineToLocalMachine(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.InfrastructureRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != infrav1.GroupVersion.Group || ref.Kind != "LocalMachine" || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}}}
}

// clusterToLocalMachines maps a Cluster to the LocalMachines labelled with its name.
func (r *Reconciler) clusterToLocalMachines(ctx context.Context, o client.Object) []reconcile.Request {
	return r.localMachinesOf(ctx, o.GetNamespace(), o.GetName())
}

// localClusterToLocalMachines maps a LocalCluster to the LocalMachines of the Cluster that owns it.
func (r *Reconciler) localClusterToLocalMachines(ctx context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, "Cluster") {
			return r.localMachinesOf(ctx, o.GetNamespace(), ref.Name)
		}
	}
	return nil
}

// changedLocalClusterToLocalMachines maps a backend notification, which names a LocalCluster, to the
// LocalMachines of its Cluster.
func (r *Reconciler) changedLocalClusterToLocalMachines(ctx context.Context, o client.Object) []reconcile.Request {
	lc := &infrav1.LocalCluster{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(o), lc); err != nil {
		return nil
	}
	return r.localClusterToLocalMachines(ctx, lc)
}

func (r *Reconciler) localMachinesOf(ctx context.Context, namespace, clusterName string) []reconcile.Request {
	list := &infrav1.LocalMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the LocalMachines of a Cluster", "Cluster", klog.KRef(namespace, clusterName))
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// Reconcile reconciles one LocalMachine.
func (r *Reconciler) Reconcile(ctx context.Context, lm *infrav1.LocalMachine) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	if managedby.IsExternal(lm) {
		log.V(1).Info("The LocalMachine is externally managed, skipping it")
		return ctrl.Result{}, nil
	}
	machine, err := r.ownerMachine(ctx, lm)
	if err != nil {
		return ctrl.Result{}, err
	}
	if machine == nil && lm.DeletionTimestamp.IsZero() {
		log.Info("Waiting for the Machine controller to set an owner reference on the LocalMachine")
		return ctrl.Result{}, nil
	}
	var cluster *clusterv1.Cluster
	if machine != nil {
		log = log.WithValues("Machine", klog.KObj(machine))
		if cluster, err = r.getCluster(ctx, lm.Namespace, machine.Spec.ClusterName); err != nil {
			return ctrl.Result{}, err
		}
		if cluster == nil && lm.DeletionTimestamp.IsZero() {
			log.Info("Waiting for the Machine's Cluster to exist", "Cluster", klog.KRef(lm.Namespace, machine.Spec.ClusterName))
			return ctrl.Result{}, nil
		}
	}
	if cluster != nil {
		log = log.WithValues("Cluster", klog.KObj(cluster))
	}
	ctx = ctrl.LoggerInto(ctx, log)

	s := &scope{localMachine: lm, machine: machine, cluster: cluster}
	helper := patch.NewHelper(lm, r.Client, patch.WithWrites(&r.writes))
	defer func() {
		setStatus(lm, s.facts)
		if err := helper.Patch(ctx, lm); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()

	// A deletion for a move is honoured even while paused (a move pauses the Cluster first): the Node
	// stays, nothing is torn down.
	if reconciler.IsDeletedForMove(lm) {
		s.facts.paused = reconciler.IsPaused(cluster, lm)
		return r.reconcileDeleteForMove(ctx, s)
	}
	if reconciler.IsPaused(cluster, lm) {
		s.facts.paused = true
		log.V(1).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	hookResult, err := r.reconcileLeaveEndpoint(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	var res ctrl.Result
	if !lm.DeletionTimestamp.IsZero() {
		res, err = r.reconcileDelete(ctx, s)
	} else {
		res, err = r.reconcileNormal(ctx, s)
	}
	return reconciler.LowestNonZero(res, hookResult), err
}

// ownerMachine returns the Machine that owns lm, or nil when it has none (or it is gone).
func (r *Reconciler) ownerMachine(ctx context.Context, lm client.Object) (*clusterv1.Machine, error) {
	owner := &clusterv1.Machine{}
	if found, err := reconciler.GetOwner(ctx, r.Client, lm, "Machine", owner); !found || err != nil {
		return nil, err
	}
	return owner, nil
}

func (r *Reconciler) getCluster(ctx context.Context, namespace, name string) (*clusterv1.Cluster, error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Cluster %s: %w", name, err)
	}
	return cluster, nil
}

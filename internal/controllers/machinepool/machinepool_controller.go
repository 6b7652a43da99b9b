package machinepool

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

const (
	// ProviderIDIndex indexes MachinePools by the provider IDs of spec.providerIDList, so that a Node finds
	// its MachinePool without listing the namespace.
	ProviderIDIndex = "machinepool.cluster.x-k8s.io/provider-id"

	// nodeWatchName names the controller's watch on the Nodes of each workload cluster.
	nodeWatchName = "machinepool-nodes"

	// fieldOwner is the field manager of the MachinePool Machines the controller creates.
	fieldOwner = "capi-machinepool"

	defaultExternalObjectRetryInterval   = 30 * time.Second
	defaultRemoteConnectionRetryInterval = time.Minute
	// defaultReplicasReadyRetryInterval is when a MachinePool whose replicas are not all Ready is looked at
	// again, as upstream does (Node events usually come first).
	defaultReplicasReadyRetryInterval = 30 * time.Second
	// defaultNodeDeletionTimeout applies when spec.template.spec.nodeDeletionTimeout is not set (upstream's
	// webhook default).
	defaultNodeDeletionTimeout = 10 * time.Second
)

// Events the controller records, with upstream's reasons.
const (
	EventSuccessfulSetNodeRefs = "SuccessfulSetNodeRefs"
	EventFailedSetNodeRef      = "FailedSetNodeRef"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinepools;machinepools/status;machinepools/finalizers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io,resources=*,verbs=get;list;watch;update;patch;delete

// Reconciler reconciles MachinePools.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// APIReader reads provider objects from the API server when the cache cannot (an informer that RBAC
	// keeps from syncing), so that the MachinePool says why; optional.
	APIReader client.Reader
	// Contracts resolves the contract of provider kinds.
	Contracts *contract.Resolver
	// ClusterCache reaches the workload clusters.
	ClusterCache *clustercache.ClusterCache
	// WatchFilter is the value of --watch-filter; "" reconciles every MachinePool.
	WatchFilter string
	// Recorder records events; the manager's recorder for "machinepool-controller" when nil.
	Recorder record.EventRecorder

	// ExternalObjectRetryInterval is when a MachinePool is looked at again after its bootstrap config or
	// InfraMachinePool was not found (30s); their creation also requeues it once watched.
	ExternalObjectRetryInterval time.Duration
	// RemoteConnectionRetryInterval is when a MachinePool is looked at again after its workload cluster
	// could not be reached (1m); the clustercache also requeues it as soon as the connection comes up.
	RemoteConnectionRetryInterval time.Duration

	// now returns the current time; time.Now when nil. Tests replace it.
	now func() time.Time

	controller controller.Controller
	tracker    *external.Tracker
	// providerReader reads provider objects: the manager's cache; Client when nil.
	providerReader client.Reader
	// ownerHandler maps events of bootstrap configs and InfraMachinePools to their controlling MachinePool;
	// infraMachineHandler maps InfraMachines to the MachinePool of their pool-name label.
	ownerHandler, infraMachineHandler handler.EventHandler
	// writes are the controller's writes of MachinePools the cache may not show yet.
	writes patch.Writes
}

func (r *Reconciler) providers() client.Reader {
	if r.providerReader != nil {
		return r.providerReader
	}
	return r.Client
}

func (r *Reconciler) clock() time.Time { return reconciler.Clock(r.now) }

// SetupWithManager adds the MachinePool controller and the MachinePool index it needs to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil || r.ClusterCache == nil {
		return errors.New("the MachinePool controller needs a Client, Contracts and a ClusterCache")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.MachinePool{}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.MachinePool{}, ProviderIDIndex, indexProviderIDs); err != nil {
		return fmt.Errorf("indexing MachinePools by provider ID: %w", err)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("machinepool").
		For(&clusterv1.MachinePool{}).
		Owns(&clusterv1.Machine{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachinePools),
			builder.WithPredicates(clusterChangesForMachinePools())).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.clusterToMachinePools)).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the MachinePool controller: %w", err)
	}
	r.controller = c
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "machinepool-controller")
	}
	r.providerReader = mgr.GetCache()
	r.tracker = &external.Tracker{
		Controller: c,
		Cache:      mgr.GetCache(),
		Predicates: []predicate.Predicate{predicate.ResourceVersionChangedPredicate{}},
	}
	r.ownerHandler = handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.MachinePool{}, handler.OnlyControllerOwner())
	r.infraMachineHandler = handler.EnqueueRequestsFromMapFunc(r.infraMachineToMachinePool)
	return nil
}

// indexProviderIDs returns the provider IDs of a MachinePool's spec.providerIDList.
func indexProviderIDs(obj client.Object) []string {
	mp, ok := obj.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	return mp.Spec.ProviderIDList
}

// clusterChangesForMachinePools lets through the Cluster events a MachinePool reacts to: creation, pause
// and resume, infrastructure and control plane readiness, and the start of deletion.
func clusterChangesForMachinePools() predicate.Predicate {
	return reconciler.ClusterUpdates(func(old, updated *clusterv1.Cluster) bool {
		return old.Spec.Paused != updated.Spec.Paused ||
			old.Status.InfrastructureReady != updated.Status.InfrastructureReady ||
			old.Status.ControlPlaneReady != updated.Status.ControlPlaneReady ||
			conditions.IsTrue(old, clusterv1.ControlPlaneInitializedCondition) != conditions.IsTrue(updated, clusterv1.ControlPlaneInitializedCondition) ||
			old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero()
	})
}

// clusterToMachinePools maps a Cluster to its MachinePools. It matches spec.clusterName rather than the
// cluster-name label, which a MachinePool created before its Cluster does not have yet.
func (r *Reconciler) clusterToMachinePools(ctx context.Context, obj client.Object) []reconcile.Request {
	return reconciler.ObjectsOfCluster(ctx, r.Client, &clusterv1.MachinePoolList{}, obj, func(o client.Object) string { return o.(*clusterv1.MachinePool).Spec.ClusterName })
}

// nodeToMachinePool maps a Node of a Cluster's workload cluster to the MachinePool whose
// spec.providerIDList has its provider ID.
func (r *Reconciler) nodeToMachinePool(cluster client.ObjectKey) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		node, ok := obj.(*corev1.Node)
		if !ok || node.Spec.ProviderID == "" {
			return nil
		}
		list := &clusterv1.MachinePoolList{}
		if err := r.Client.List(ctx, list, client.InNamespace(cluster.Namespace),
			client.MatchingFields{ProviderIDIndex: node.Spec.ProviderID}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePool of a Node", "Node", klog.KObj(node))
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if list.Items[i].Spec.ClusterName == cluster.Name {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	}
}

// infraMachineToMachinePool maps an InfraMachine of a pool to its MachinePool, by the pool-name and
// cluster-name labels the InfraMachinePool gives it.
func (r *Reconciler) infraMachineToMachinePool(ctx context.Context, obj client.Object) []reconcile.Request {
	pool, ok := obj.GetLabels()[clusterv1.MachinePoolNameLabel]
	if !ok {
		return nil
	}
	list := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()),
		client.MatchingLabels{clusterv1.ClusterNameLabel: obj.GetLabels()[clusterv1.ClusterNameLabel]}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePool of an InfraMachine", "InfraMachine", klog.KObj(obj))
		return nil
	}
	for i := range list.Items {
		if labelformat.Value(list.Items[i].Name) == pool {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}}
		}
	}
	return nil
}

// Reconcile drives one MachinePool.
func (r *Reconciler) Reconcile(ctx context.Context, mp *clusterv1.MachinePool) (_ ctrl.Result, reterr error) {
	ctx, cluster, wait, err := reconciler.WaitForCluster(ctx, r.Client, mp, mp.Spec.ClusterName, 0)
	if wait || err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	// The finalizer goes first, so that a MachinePool deleted right after creation still cleans up.
	if added, err := reconciler.AddFinalizerFirst(ctx, r.Client, mp, clusterv1.MachinePoolFinalizer, patch.WithWrites(&r.writes)); added {
		return ctrl.Result{}, err
	}

	helper := patch.NewHelper(mp, r.Client, patch.WithWrites(&r.writes))
	s := &scope{cluster: cluster, mp: mp}
	paused := reconciler.IsPaused(cluster, mp)
	defer func() {
		if paused {
			conditions.SetV1Beta2(mp, reconciler.PausedCondition(cluster, mp, "MachinePool", true))
		} else {
			setStatus(s, r.clock())
		}
		if err := helper.Patch(ctx, mp); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if paused {
		log.V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}

	reconciler.SetClusterNameLabel(mp, mp.Spec.ClusterName)

	if !mp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.runPhases(ctx, s,
		r.reconcileOwnerAndDefaults,
		r.reconcileBootstrap,
		r.reconcileInfrastructure,
		r.reconcileMachines,
		r.reconcileNodeRefs,
	)
}

// runPhases runs every phase, even after one fails, so that the status reflects all that could be
// observed. A workload cluster that cannot be reached is not an error: the MachinePool is requeued.
func (r *Reconciler) runPhases(ctx context.Context, s *scope, phases ...reconciler.Phase[*scope]) (ctrl.Result, error) {
	return reconciler.RunPhasesWith(ctx, s, reconciler.PhaseOptions{
		All: true,
		Requeue: clustercache.RequeueWhenNotConnected(reconciler.OrDefault(r.RemoteConnectionRetryInterval, defaultRemoteConnectionRetryInterval),
			func() { s.connectionDown = true }),
	}, phases...)
}

// event records an event on the MachinePool, when the controller has a recorder.
func (r *Reconciler) event(mp *clusterv1.MachinePool, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(mp, eventType, reason, format, args...)
	}
}

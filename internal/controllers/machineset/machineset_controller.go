package machineset

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

const (
	// fieldOwner is the field manager of the controller's writes to Machines, InfraMachines and
	// BootstrapConfigs. The labels and annotations it owns are those it set; it removes them when they leave
	// the template, and leaves alone those that others set.
	fieldOwner = "capi-machineset"

	// MachineControllerIndex indexes Machines by the UID of their controller, so a MachineSet finds the
	// Machines it owns without listing the namespace.
	MachineControllerIndex = "machineset.cluster.x-k8s.io/controller-uid"

	defaultCacheSyncTimeout = 10 * time.Second
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets;machinesets/status;machinesets/finalizers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch;create;update;patch;delete

// Reconciler reconciles MachineSets.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// Contracts resolves the contract of provider kinds.
	Contracts *contract.Resolver
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string

	// FeatureGates are the manager's --feature-gates (MachineSetPreflightChecks, ClusterTopology); the
	// defaults when nil.
	FeatureGates *feature.Gates
	// PreflightChecks are the checks of --machineset-preflight-checks; every check when nil.
	PreflightChecks []clusterv1.MachineSetPreflightCheck
	// Recorder records events; the manager's recorder for "machineset-controller" when nil.
	Recorder record.EventRecorder

	// CacheSyncTimeout bounds how long a reconcile waits for the cache to show the Machines it created or
	// deleted, so that the next reconcile does not act on them twice; 10s when zero.
	CacheSyncTimeout time.Duration

	// now returns the current time; time.Now when nil. Tests replace it.
	now func() time.Time
	// writes are the controller's writes of MachineSets the cache may not show yet (reconciler.Guarded
	// checks each MachineSet read against them). machineWrites are its writes of Machines (their UpToDate
	// condition, labels and annotations, in-place spec): the same guard, applied by syncMachines to the
	// Machines it writes, which the wrapper does not read.
	writes, machineWrites patch.Writes
}

// machineEventDelay is how long the events of a MachineSet's Machines wait before it is reconciled, so that
// the changes of several Machines in that time are written to its status at once.
const machineEventDelay = time.Second

// SetupWithManager adds the controller and the Machine index it needs to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil {
		return errors.New("the MachineSet controller needs a Client and a contract Resolver")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.MachineSet{}, &clusterv1.Machine{}); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "machineset-controller")
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.Machine{}, MachineControllerIndex, reconciler.ControllerUID); err != nil {
		return fmt.Errorf("indexing Machines by controller: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("machineset").
		For(&clusterv1.MachineSet{}).
		// Its Machines' events, batched (machineEventDelay).
		Watches(&clusterv1.Machine{}, reconciler.EnqueueControllerAfter("MachineSet", machineEventDelay)).
		// Orphan Machines, for adoption.
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.orphanMachineToMachineSets)).
		// A MachineDeployment's template decides whether the Machines of its MachineSets are up to date.
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(r.machineDeploymentToMachineSets)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachineSets),
			builder.WithPredicates(reconciler.ClusterCreatedOrPauseChanged())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the MachineSet controller: %w", err)
	}
	return nil
}

// Events the controller records, with upstream's reasons.
const (
	EventSuccessfulCreate = "SuccessfulCreate"
	EventFailedCreate     = "FailedCreate"
	EventSuccessfulDelete = "SuccessfulDelete"
	EventFailedDelete     = "FailedDelete"
)

// recorder returns the event recorder; one that drops events when the controller was not set up.
func (r *Reconciler) recorder() record.EventRecorder {
	if r.Recorder == nil {
		return &record.FakeRecorder{}
	}
	return r.Recorder
}

// Reconcile brings one MachineSet closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, ms *clusterv1.MachineSet) (res ctrl.Result, retErr error) {
	ctx, cluster, wait, err := reconciler.WaitForCluster(ctx, r.Client, ms, ms.Spec.ClusterName, 2)
	if wait || err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	// The finalizer goes first, so a MachineSet deleted right after creation still waits for its Machines.
	if added, err := reconciler.AddFinalizerFirst(ctx, r.Client, ms, clusterv1.MachineSetFinalizer, patch.WithWrites(&r.writes)); added {
		return ctrl.Result{}, err
	}

	h := patch.NewHelper(ms, r.Client, patch.WithWrites(&r.writes))
	if reconciler.IsPaused(cluster, ms) {
		log.V(4).Info("Reconciliation is paused")
		conditions.SetV1Beta2(ms, reconciler.PausedCondition(cluster, ms, "MachineSet", true))
		return ctrl.Result{}, h.Patch(ctx, ms)
	}

	// The Cluster ownership is its own write, with optimistic locking: ownerReferences is a list, which a
	// merge patch replaces, and the MachineDeployment may be adopting the MachineSet at the same time.
	if ms.DeletionTimestamp.IsZero() && !hasOwner(ms.OwnerReferences, "MachineDeployment") && !hasOwner(ms.OwnerReferences, "Cluster") {
		before := ms.DeepCopy()
		ms.OwnerReferences = append(ms.OwnerReferences, metav1.OwnerReference{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
		})
		log.Info("Setting the Cluster as owner of the MachineSet")
		if err := r.Client.Patch(ctx, ms, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
		r.writes.Record(before.ResourceVersion, ms)
		return ctrl.Result{}, nil
	}

	s := &scope{ms: ms, cluster: cluster, now: r.clock()}
	defer func() {
		setStatus(s)
		if err := h.Patch(ctx, ms); err != nil {
			retErr = errors.Join(retErr, err)
		}
		if retErr == nil && ms.DeletionTimestamp.IsZero() {
			// Come back when a Ready Machine has been Ready for minReadySeconds, to count it as available.
			res = reconciler.LowestNonZero(res, ctrl.Result{RequeueAfter: requeueForAvailability(s)})
		}
	}()

	if !ms.DeletionTimestamp.IsZero() {
		return reconciler.RunPhases(ctx, s, r.getAndAdoptMachines, r.reconcileDelete)
	}
	return reconciler.RunPhases(ctx, s,
		r.reconcileLabelsAndDefaults,
		r.getOwningMachineDeployment,
		r.reconcileTemplates,
		r.getAndAdoptMachines,
		r.syncMachines,
		r.reconcileUnhealthyMachines,
		r.syncReplicas,
	)
}

// orphanMachineToMachineSets maps a Machine without a controller to the MachineSets of its Cluster whose
// selector matches it, so they can adopt it. Machines with a controller reach their owner through Owns.
func (r *Reconciler) orphanMachineToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	m, ok := obj.(*clusterv1.Machine)
	if !ok || metav1.GetControllerOf(m) != nil || !m.DeletionTimestamp.IsZero() {
		return nil
	}
	list := &clusterv1.MachineSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(m.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: m.Spec.ClusterName}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MachineSets to adopt a Machine", "Machine", klog.KObj(m))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		ms := &list.Items[i]
		selector, err := effectiveSelector(ms)
		if err != nil || !selector.Matches(labels.Set(m.Labels)) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ms)})
	}
	return reqs
}

// machineDeploymentToMachineSets maps a MachineDeployment to its MachineSets, through the deployment-name
// label it puts on them.
func (r *Reconciler) machineDeploymentToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	md, ok := obj.(*clusterv1.MachineDeployment)
	if !ok {
		return nil
	}
	// A MachineDeployment's selector holds its cluster-name label (which its MachineSets get when created
	// and keep): by it, the list is answered from the cache's index of one Cluster's objects.
	list := &clusterv1.MachineSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: obj.GetName(), clusterv1.ClusterNameLabel: md.Spec.ClusterName}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachineSets of a MachineDeployment", "MachineDeployment", klog.KObj(obj))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// clusterToMachineSets maps a Cluster to its MachineSets. It matches spec.clusterName rather than the
// cluster-name label, which a MachineSet created before its Cluster does not have yet; the events it maps
// (creation, pause) are rare.
func (r *Reconciler) clusterToMachineSets(ctx context.Context, obj client.Object) []reconcile.Request {
	return reconciler.ObjectsOfCluster(ctx, r.Client, &clusterv1.MachineSetList{}, obj, func(o client.Object) string { return o.(*clusterv1.MachineSet).Spec.ClusterName })
}

func (r *Reconciler) clock() time.Time { return reconciler.Clock(r.now) }

func (r *Reconciler) cacheSyncTimeout() time.Duration {
	return reconciler.OrDefault(r.CacheSyncTimeout, defaultCacheSyncTimeout)
}

package machinedeployment

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

const (
	// fieldOwner is the field manager of the controller's writes to MachineSets. The labels and
	// annotations it owns are those it set; it removes them when they leave the MachineDeployment, and
	// leaves alone those that others set.
	fieldOwner = "capi-machinedeployment"

	// MachineSetControllerIndex indexes MachineSets by the UID of their controller, so a MachineDeployment
	// finds its MachineSets without listing the namespace.
	MachineSetControllerIndex = "machinedeployment.cluster.x-k8s.io/controller-uid"

	defaultCacheSyncTimeout = 10 * time.Second
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedeployments;machinedeployments/status;machinedeployments/finalizers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets;machines;clusters,verbs=get;list;watch;create;update;patch;delete

// Reconciler reconciles MachineDeployments.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// Contracts resolves the contract of provider kinds.
	Contracts *contract.Resolver
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string
	// TopologyFinalizer, set when the topology controllers run (the ClusterTopology feature gate), creates
	// the MachineSets of a topology-owned MachineDeployment with the finalizer of the topology MachineSet
	// controller, machineset.topology.cluster.x-k8s.io, which that controller would add a moment later
	// (upstream's MachineDeployment controller leaves it to it). The patch that adds it conflicted with the
	// MachineSet controller's first status write almost every time, failing that reconcile.
	TopologyFinalizer bool

	// Recorder records events; the manager's recorder for "machinedeployment-controller" when nil.
	Recorder record.EventRecorder

	// CacheSyncTimeout bounds how long a reconcile waits for the cache to show a MachineSet it created, so
	// that the next reconcile does not create it again; 10s when zero.
	CacheSyncTimeout time.Duration

	// now returns the current time; time.Now when nil. Tests replace it.
	now func() time.Time
	// writes are the controller's writes of MachineDeployments the cache may not show yet.
	writes patch.Writes
}

// machineSetEventDelay is how long the events of a MachineDeployment's MachineSets wait before it is
// reconciled, so that the changes of several of them (and of their Machines, which their status counts) in
// that time are written to its status at once. It is longer than the MachineSets' own wait for their
// Machines' events (1s), so that the MachineDeployment mostly reads its MachineSets' status already
// written for the Machines' changes it sees (its MachinesReady condition reads the Machines) rather than
// writing once for the Machines and again for their MachineSet's status.
const machineSetEventDelay = 2 * time.Second

// SetupWithManager adds the controller and the MachineSet index it needs to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil {
		return errors.New("the MachineDeployment controller needs a Client and a contract Resolver")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{}); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "machinedeployment-controller")
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.MachineSet{}, MachineSetControllerIndex, reconciler.ControllerUID); err != nil {
		return fmt.Errorf("indexing MachineSets by controller: %w", err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("machinedeployment").
		For(&clusterv1.MachineDeployment{}).
		// Its MachineSets' events, batched (machineSetEventDelay).
		Watches(&clusterv1.MachineSet{}, reconciler.EnqueueControllerAfter("MachineDeployment", machineSetEventDelay)).
		// Orphan MachineSets, for adoption.
		Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(orphanMachineSetToMachineDeployment)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachineDeployments),
			builder.WithPredicates(reconciler.ClusterCreatedOrPauseChanged())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the MachineDeployment controller: %w", err)
	}
	return nil
}

// Reconcile brings one MachineDeployment closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, md *clusterv1.MachineDeployment) (res ctrl.Result, retErr error) {
	ctx, cluster, wait, err := reconciler.WaitForCluster(ctx, r.Client, md, md.Spec.ClusterName, 2)
	if wait || err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	h := patch.NewHelper(md, r.Client, patch.WithWrites(&r.writes))
	if reconciler.IsPaused(cluster, md) {
		log.V(4).Info("Reconciliation is paused")
		conditions.SetV1Beta2(md, reconciler.PausedCondition(cluster, md, "MachineDeployment", true))
		return ctrl.Result{}, h.Patch(ctx, md)
	}

	// The finalizer, so a MachineDeployment deleted right after creation still waits for its MachineSets,
	// and the Cluster ownership are written with the rest of this reconcile's changes, in one patch at the
	// end: the helper sends it with optimistic locking, as both are lists that a merge patch replaces. The
	// MachineSets created before that write are owned by the MachineDeployment, so none is left behind if
	// the write fails.
	if md.DeletionTimestamp.IsZero() {
		controllerutil.AddFinalizer(md, clusterv1.MachineDeploymentFinalizer)
		if !ownedBy(md, cluster) {
			log.Info("Setting the Cluster as owner of the MachineDeployment")
			md.OwnerReferences = append(md.OwnerReferences, metav1.OwnerReference{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
			})
		}
	}

	s := &scope{md: md, cluster: cluster, now: r.clock()}
	defer func() {
		setStatus(s)
		if err := h.Patch(ctx, md); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()

	if !md.DeletionTimestamp.IsZero() {
		return reconciler.RunPhases(ctx, s, r.getMachineSets, r.getMachines, r.reconcileDelete)
	}
	return reconciler.RunPhases(ctx, s,
		r.reconcileLabelsAndDefaults,
		r.reconcileTemplates,
		r.getMachineSets,
		r.getMachines,
		r.rollout,
		r.cleanupOldMachineSets,
	)
}

func ownedBy(obj metav1.Object, owner metav1.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// event records an event on the MachineDeployment, when the controller has a recorder.
func (r *Reconciler) event(md *clusterv1.MachineDeployment, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(md, eventType, reason, format, args...)
	}
}

// orphanMachineSetToMachineDeployment maps a MachineSet without a controller to the MachineDeployment its
// deployment-name label names, which may adopt it. MachineSets with a controller reach it through Owns.
func orphanMachineSetToMachineDeployment(_ context.Context, obj client.Object) []reconcile.Request {
	if metav1.GetControllerOf(obj) != nil || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	name, ok := obj.GetLabels()[clusterv1.MachineDeploymentNameLabel]
	if !ok || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}

// clusterToMachineDeployments maps a Cluster to its MachineDeployments. It matches spec.clusterName rather
// than the cluster-name label, which a MachineDeployment created before its Cluster does not have yet; the
// events it maps (creation, pause) are rare.
func (r *Reconciler) clusterToMachineDeployments(ctx context.Context, obj client.Object) []reconcile.Request {
	return reconciler.ObjectsOfCluster(ctx, r.Client, &clusterv1.MachineDeploymentList{}, obj, func(o client.Object) string { return o.(*clusterv1.MachineDeployment).Spec.ClusterName })
}

func (r *Reconciler) clock() time.Time { return reconciler.Clock(r.now) }

func (r *Reconciler) cacheSyncTimeout() time.Duration {
	return reconciler.OrDefault(r.CacheSyncTimeout, defaultCacheSyncTimeout)
}

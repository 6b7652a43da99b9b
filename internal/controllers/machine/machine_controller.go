package machine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	ipamv1 "github.com/capstan-dev/capstan/api/ipam/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Defaults of the Reconciler's intervals.
const (
	defaultDrainRetryInterval            = 20 * time.Second
	defaultVolumeDetachRetryInterval     = 20 * time.Second
	defaultRemoteConnectionRetryInterval = time.Minute
	defaultExternalObjectRetryInterval   = 30 * time.Second
	defaultNodeDeletionRetryInterval     = 2 * time.Second
	// workloadErrorBackoff caps the backoff of a Machine whose reconciles fail in a row (see
	// reconciler.ErrorBackoff), as the drain retry interval.
	workloadErrorBackoff               = defaultDrainRetryInterval
	defaultRemoteConditionsGracePeriod = 5 * time.Minute
	// defaultNodeDeletionTimeout applies when spec.nodeDeletionTimeout is not set (upstream's webhook
	// default).
	defaultNodeDeletionTimeout = 10 * time.Second
	// skipWaitForDeleteTimeout: Pods deleted longer ago than this no longer hold the drain (kubelet gone).
	skipWaitForDeleteTimeout = 5 * time.Minute
	// providerConditionDelay is how long an update of a Machine's bootstrap config or InfraMachine that
	// changes only their conditions waits before it reconciles the Machine, which mirrors their Ready
	// conditions: they change in bursts while the provider works (a reason at a time), and one reconcile
	// after the burst writes the Machine's status once. So do their updates while they are being deleted
	// (the Machine waits for them to be gone, which their delete events say at once). Their readiness,
	// bootstrap data, provider ID and addresses reconcile it at once.
	providerConditionDelay = time.Second
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status;machines/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io;infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io,resources=*,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// Reconciler reconciles Machines.
type Reconciler struct {
	// Client is the manager's (cached) client. Provider objects are read from the manager's cache whatever
	// the client's Cache.Unstructured says, from the informers the Tracker starts.
	Client client.Client
	// Contracts resolves the contract of provider kinds.
	Contracts *contract.Resolver
	// WatchFilter is the value of --watch-filter; "" reconciles every Machine.
	WatchFilter string
	// ClusterCache reaches the workload clusters.
	ClusterCache *clustercache.ClusterCache
	// APIReader reads provider objects from the API server when the cache cannot (an informer that RBAC
	// keeps from syncing), so that the Machine says why; optional.
	APIReader client.Reader

	// Recorder records events; the manager's recorder for "machine-controller" when nil.
	Recorder record.EventRecorder

	// AdditionalSyncMachineLabels are regular expressions of more Machine label keys to sync to the Node
	// (--additional-sync-machine-labels).
	AdditionalSyncMachineLabels []*regexp.Regexp

	// RemoteConditionsGracePeriod is how long NodeHealthy and NodeReady keep their last value while the
	// workload cluster does not answer (5m).
	RemoteConditionsGracePeriod time.Duration
	// DrainRetryInterval is the time between two drain passes (20s).
	DrainRetryInterval time.Duration
	// VolumeDetachRetryInterval is the time between two looks at the Node's attached volumes (20s).
	VolumeDetachRetryInterval time.Duration
	// RemoteConnectionRetryInterval is when a Machine is looked at again after its workload cluster could
	// not be reached (1m); the clustercache also requeues it as soon as the connection comes up.
	RemoteConnectionRetryInterval time.Duration
	// ExternalObjectRetryInterval is when a Machine is looked at again after its bootstrap config or
	// InfraMachine was not found (30s); their creation also requeues it once watched.
	ExternalObjectRetryInterval time.Duration
	// NodeDeletionRetryInterval is the time between two attempts to delete the Node (2s).
	NodeDeletionRetryInterval time.Duration

	// InPlaceUpdater carries the in-place updates of Machines (the InPlaceUpdates gate); nil without the
	// gate: a Machine marked for an in-place update then waits.
	InPlaceUpdater InPlaceUpdater

	controller controller.Controller
	tracker    *external.Tracker
	// providerReader reads provider objects (bootstrap configs, InfraMachines, control planes): the
	// manager's cache; Client when nil.
	providerReader client.Reader
	// externalHandler maps events of provider objects to their controlling Machine.
	externalHandler handler.EventHandler
	// writes are the controller's writes of Machines the cache may not show yet.
	writes patch.Writes
}

func (r *Reconciler) providers() client.Reader {
	if r.providerReader != nil {
		return r.providerReader
	}
	return r.Client
}

// SetupWithManager adds the Machine controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil || r.ClusterCache == nil {
		return errors.New("the Machine controller needs a Client, Contracts and a ClusterCache")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{}); err != nil {
		return err
	}
	if options.RateLimiter == nil {
		// Draining, the Node reference and the Node's deletion go to the workload cluster, whose failures
		// come in bursts: retry within workloadErrorBackoff, not after up to 16 minutes.
		options.RateLimiter = reconciler.ErrorBackoff(workloadErrorBackoff)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("machine").
		For(&clusterv1.Machine{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachines),
			builder.WithPredicates(clusterChangesForMachines())).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.clusterToMachines)).
		Watches(&ipamv1.IPAddressClaim{}, claimHandler(mgr)).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the Machine controller: %w", err)
	}
	r.controller = c
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "machine-controller")
	}
	r.providerReader = mgr.GetCache()
	r.tracker = &external.Tracker{
		Controller: c,
		Cache:      mgr.GetCache(),
		Predicates: []predicate.Predicate{predicate.ResourceVersionChangedPredicate{}},
	}
	// A change of their conditions alone, or of an object being deleted, reaches the Machine after
	// providerConditionDelay (see there).
	r.externalHandler = reconciler.DelayConditionChanges(
		handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.Machine{}, handler.OnlyControllerOwner()),
		providerConditionDelay)
	return nil
}

// clusterChangesForMachines lets through the Cluster events a Machine reacts to: creation, pause and
// resume, infrastructure and control plane readiness, and the start of deletion.
func clusterChangesForMachines() predicate.Predicate {
	return reconciler.ClusterUpdates(func(old, updated *clusterv1.Cluster) bool {
		return old.Spec.Paused != updated.Spec.Paused ||
			old.Status.InfrastructureReady != updated.Status.InfrastructureReady ||
			controlPlaneInitialized(old) != controlPlaneInitialized(updated) ||
			old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero()
	})
}

// clusterToMachines maps a Cluster to its Machines, by the cluster-name label, from the cache.
func (r *Reconciler) clusterToMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.machinesOf(ctx, client.ObjectKeyFromObject(obj), func(*clusterv1.Machine) bool { return true })
}

func (r *Reconciler) machinesOf(ctx context.Context, cluster client.ObjectKey, keep func(*clusterv1.Machine) bool) []reconcile.Request {
	labels := client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}
	if r.WatchFilter != "" {
		labels[clusterv1.WatchLabel] = r.WatchFilter
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(cluster.Namespace), labels); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the Machines of a Cluster", "Cluster", klog.KRef(cluster.Namespace, cluster.Name))
		return nil
	}
	var out []reconcile.Request
	for i := range machines.Items {
		if keep(&machines.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&machines.Items[i])})
		}
	}
	return out
}

// nodeToMachines maps a Node of a Cluster's workload cluster to its Machine: by the annotations the
// controller puts on Nodes, else by providerID.
func (r *Reconciler) nodeToMachines(cluster client.ObjectKey) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		node, ok := obj.(*corev1.Node)
		if !ok {
			return nil
		}
		a := node.GetAnnotations()
		if name := a[clusterv1.MachineAnnotation]; name != "" &&
			a[clusterv1.ClusterNamespaceAnnotation] == cluster.Namespace && a[clusterv1.ClusterNameAnnotation] == cluster.Name {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cluster.Namespace, Name: name}}}
		}
		if node.Spec.ProviderID == "" {
			return nil
		}
		return r.machinesOf(ctx, cluster, func(m *clusterv1.Machine) bool {
			return m.Spec.ProviderID != nil && *m.Spec.ProviderID == node.Spec.ProviderID
		})
	}
}

// scope holds a Machine, its Cluster and the facts the phases observed, from which the status is computed.
type scope struct {
	// cluster is nil only when the Machine is being deleted and its Cluster is gone.
	cluster *clusterv1.Cluster
	machine *clusterv1.Machine

	bootstrap providerFacts
	infra     providerFacts

	// node is the Machine's Node; nil when not found or not looked for.
	node *corev1.Node
	// nodeGetErr is why the Node could not be looked for (for example clustercache.ErrClusterNotConnected).
	nodeGetErr error
	// health is the state of the connection to the workload cluster.
	health clustercache.Health

	deletion deletionFacts

	// updatingReason and updatingMessage are those of the Updating condition while an in-place update is in
	// progress; empty for the defaults.
	updatingReason, updatingMessage string
}

// providerFacts is what a phase observed of a provider object (bootstrap config or InfraMachine).
type providerFacts struct {
	obj *unstructured.Unstructured
	// contract the object follows.
	contract contract.Version
	// ready is the provider's own readiness (dataSecretCreated / provisioned).
	ready bool
	// notFound is true when the reference points at nothing; getErr is set on other read errors.
	notFound bool
	getErr   bool
	// problem, with getErr, says why the object cannot be read in a way the user must fix (a reference to
	// another namespace, RBAC).
	problem string
	// unboundClaims are the IPAddressClaims the Machine owns that are not bound yet: the Machine does not
	// hand its InfraMachine over to the provider (ownerReference) until they are.
	unboundClaims []string
}

// Reconcile drives one Machine.
func (r *Reconciler) Reconcile(ctx context.Context, m *clusterv1.Machine) (retres ctrl.Result, reterr error) {
	ctx, cluster, wait, err := reconciler.WaitForCluster(ctx, r.Client, m, m.Spec.ClusterName, 0)
	if wait || err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	helper := patch.NewHelper(m, r.Client, patch.WithWrites(&r.writes))
	s := &scope{cluster: cluster, machine: m}
	paused := reconciler.IsPaused(cluster, m)
	phase := m.Status.Phase
	defer func() {
		if !paused && r.waitingForClones(s, time.Now()) {
			// The MachineSet creates the Machine's clones right after the Machine: their creation brings it
			// back, and its first status is written then rather than saying they do not exist.
			log.V(4).Info("Waiting for the MachineSet to create the Machine's bootstrap config and InfraMachine")
			if reterr == nil {
				retres = reconciler.LowestNonZero(retres, ctrl.Result{RequeueAfter: cloneGracePeriod})
			}
			return
		}
		if paused {
			conditions.SetV1Beta2(m, reconciler.PausedCondition(cluster, m, "Machine", true))
		} else {
			updateStatus(s, time.Now(), reconciler.OrDefault(r.RemoteConditionsGracePeriod, defaultRemoteConditionsGracePeriod))
			r.recordPhase(m, phase)
		}
		if err := helper.Patch(ctx, m); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if paused {
		log.V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}

	reconciler.SetClusterNameLabel(m, m.Spec.ClusterName)
	if m.DeletionTimestamp.IsZero() {
		controllerutil.AddFinalizer(m, clusterv1.MachineFinalizer)
	}

	phases := []reconciler.Phase[*scope]{
		r.reconcileOwner, r.reconcileBootstrap, r.reconcileInfrastructure, r.reconcileNode, r.reconcileCertificateExpiry,
	}
	if m.DeletionTimestamp.IsZero() {
		phases = append(phases, r.reconcileInPlaceUpdate)
	} else {
		phases = append(phases[1:], r.reconcileDelete)
	}
	return r.runPhases(ctx, phases, s)
}

// cloneGracePeriod is how long a new Machine of a MachineSet waits for its bootstrap config and InfraMachine
// to be created before its status says they do not exist.
const cloneGracePeriod = 10 * time.Second

// waitingForClones reports whether the Machine is a MachineSet's that its controller has not written yet,
// created less than cloneGracePeriod ago, whose bootstrap config or InfraMachine does not exist yet: the
// MachineSet creates them right after the Machine, and nothing is written until they exist.
func (r *Reconciler) waitingForClones(s *scope, now time.Time) bool {
	m := s.machine
	if !s.bootstrap.notFound && !s.infra.notFound {
		return false
	}
	owner := metav1.GetControllerOf(m)
	return owner != nil && reconciler.RefersTo(*owner, clusterv1.GroupVersion.Group, "MachineSet") &&
		m.DeletionTimestamp.IsZero() && m.Status.Phase == "" && m.Status.ObservedGeneration == 0 &&
		now.Sub(m.CreationTimestamp.Time) < cloneGracePeriod
}

// recordPhase records a Warning event when the Machine became Failed. Upstream records no event for the
// other phase changes, and neither does capstan: each would be one more write to the API server per phase of
// every Machine, and the phase is in the Machine's status.
func (r *Reconciler) recordPhase(m *clusterv1.Machine, before string) {
	if r.Recorder == nil || m.Status.Phase == before || m.Status.Phase != string(clusterv1.MachinePhaseFailed) {
		return
	}
	msg := "unknown"
	if m.Status.FailureMessage != nil {
		msg = *m.Status.FailureMessage
	}
	r.Recorder.Eventf(m, corev1.EventTypeWarning, m.Status.Phase, "Machine %s is %s: %s", m.Name, m.Status.Phase, msg)
}

// runPhases runs every phase, even after one fails, so that the status reflects all that could be
// observed. A workload cluster that cannot be reached is not an error: the Machine is requeued.
func (r *Reconciler) runPhases(ctx context.Context, phases []reconciler.Phase[*scope], s *scope) (ctrl.Result, error) {
	return reconciler.RunPhasesWith(ctx, s, reconciler.PhaseOptions{
		All:     true,
		Requeue: clustercache.RequeueWhenNotConnected(reconciler.OrDefault(r.RemoteConnectionRetryInterval, defaultRemoteConnectionRetryInterval), nil),
	}, phases...)
}

// controlPlaneInitialized reports whether a Cluster's control plane accepts requests (v1beta1
// status.controlPlaneReady or the ControlPlaneInitialized condition).
func controlPlaneInitialized(c *clusterv1.Cluster) bool {
	return c != nil && (c.Status.ControlPlaneReady || conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition))
}

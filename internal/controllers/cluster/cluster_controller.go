package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
)

const (
	defaultRequeueAfter       = 30 * time.Second
	defaultDeleteRequeueAfter = 5 * time.Second

	// descendantEventDelay is how long the events of a Cluster's Machines, MachineSets and
	// MachineDeployments wait before they reconcile it. They come in bursts (the Machines of a
	// MachineDeployment change at about the same time, each several times, and their MachineSet and
	// MachineDeployment follow), and one reconcile after the burst sees it all. It is longer than the
	// MachineSets' (1s) and MachineDeployments' (2s) waits, so that the Cluster's counters, which add up
	// their status, are mostly written once their status has caught up with the Machines'.
	descendantEventDelay = 3 * time.Second

	// providerConditionDelay is how long an update of the InfraCluster or the control plane that changes
	// only their conditions waits before it reconciles the Cluster, which mirrors their Ready and Available
	// conditions. A control plane's conditions change in bursts as its first Machine goes through its
	// phases (ScalingUp, WaitingForKubeadmInit, WaitingForBootstrapData, ... within a second), and one
	// reconcile after the burst writes the Cluster's status once. So do their updates while they are being
	// deleted: a deleting Cluster waits for them to be gone, which their delete events say at once, and the
	// steps of a control plane's deletion (its conditions, then its counters) are written in one go. Their
	// readiness, initialization, endpoint and counters reconcile it at once.
	providerConditionDelay = time.Second
)

// Reconciler reconciles Clusters.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// APIReader reads from the API server; it confirms that no descendant is left before the finalizer goes.
	APIReader client.Reader
	// Contracts resolves the contract of the InfraCluster and control plane kinds.
	Contracts *contract.Resolver
	// WatchFilter is the value of --watch-filter; "" means every Cluster.
	WatchFilter string
	// RuntimeClient calls the Runtime Extensions' lifecycle hooks (BeforeClusterDelete,
	// AfterControlPlaneInitialized) of Clusters with a topology; nil when the RuntimeSDK gate is off.
	RuntimeClient *runtimeclient.Client
	// Recorder records the events of failed lifecycle hooks; the manager's when nil.
	Recorder record.EventRecorder

	// RequeueAfter is how long to wait before looking again at something that sends no event the
	// controller sees: a referenced object that does not exist yet, a missing `<cluster>-ca` Secret.
	// 30s when zero.
	RequeueAfter time.Duration
	// DeleteRequeueAfter is how often a deleting Cluster looks at its descendants, in addition to the
	// events of their deletion. 5s when zero.
	DeleteRequeueAfter time.Duration
	// DeletingStatusInterval is the least time between two writes of a deleting Cluster's status that do
	// not change the deletion's step (see holdBackDeletingStatus). 10s when zero.
	DeletingStatusInterval time.Duration

	// externalReader reads InfraClusters and control plane objects; the manager's cache, so that these
	// unstructured reads are served by informers whatever the client's options.
	externalReader client.Reader
	tracker        *external.Tracker
	ownerHandler   handler.EventHandler
	// descendantsIndexed says that Client lists descendants through reconciler.ClusterNameIndex (set up by
	// SetupWithManager).
	descendantsIndexed bool
	// secretMetadata reads the metadata of Secrets: the manager's cache, which the controller's watch of
	// Secrets fills.
	secretMetadata client.Reader
	// kubeconfigs remembers what the last look at each Cluster's kubeconfig found.
	kubeconfigs kubeconfigChecks
	// writes are the controller's writes of Clusters the cache may not show yet.
	writes patch.Writes
	// deletingStatus remembers when the status of each deleting Cluster was last written.
	deletingStatus deletingStatusWrites
}

// SetupWithManager adds the Cluster controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Contracts == nil {
		return errors.New("the Cluster controller needs a Client and a contract Resolver")
	}
	r.externalReader = mgr.GetCache()
	r.secretMetadata = mgr.GetCache()
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "cluster-controller")
	}
	// The descendants of a Cluster are listed from the cache by their cluster-name label on every reconcile:
	// a label selector alone makes the cache scan every object of the namespace, so with a thousand Clusters
	// in one namespace each list would read thousands of objects. The index finds them directly.
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(),
		&clusterv1.MachineDeployment{}, &clusterv1.MachineSet{}, &clusterv1.Machine{}, &clusterv1.MachinePool{}); err != nil {
		return err
	}
	r.descendantsIndexed = true
	toCluster := reconciler.EnqueueAfter(descendantEventDelay, clusterOfLabelledObject)
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&clusterv1.Cluster{}).
		Watches(&clusterv1.Machine{}, toCluster, builder.WithPredicates(machineCountersChanged())).
		Watches(&clusterv1.MachineSet{}, toCluster, builder.WithPredicates(machineSetFactsChanged())).
		Watches(&clusterv1.MachineDeployment{}, toCluster, builder.WithPredicates(machineDeploymentFactsChanged())).
		Watches(&clusterv1.MachinePool{}, toCluster, builder.WithPredicates(machinePoolFactsChanged())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Named("cluster").
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("building the Cluster controller: %w", err)
	}

	// Only the metadata of Secrets is watched, so that a new `<cluster>-ca` or a deleted
	// `<cluster>-kubeconfig` is acted upon at once without caching Secret data. These events carry no
	// watch-filter label; Reconcile checks the Cluster's own.
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Watch(source.Kind[client.Object](mgr.GetCache(), secret,
		handler.EnqueueRequestsFromMapFunc(clusterOfSecret))); err != nil {
		return fmt.Errorf("watching Secrets: %w", err)
	}

	// Provider objects need not carry the watch-filter label either; their events are mapped through the
	// controller ownerReference, which the Cluster sets.
	r.tracker = &external.Tracker{Controller: c, Cache: mgr.GetCache()}
	// A change of their conditions alone, or of an object being deleted, reaches the Cluster after
	// providerConditionDelay (see there).
	r.ownerHandler = reconciler.DelayConditionChanges(
		handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.Cluster{}, handler.OnlyControllerOwner()),
		providerConditionDelay)
	return nil
}

// scope is what one reconcile of a Cluster learns; phases record facts in it, updateStatus turns them
// into status.
type scope struct {
	cluster *clusterv1.Cluster

	infra        externalObject
	controlPlane externalObject

	descendants     descendants
	descendantsRead bool

	// deletingReason and deletingMessage say what the deletion waits for.
	deletingReason, deletingMessage string
}

// externalObject is what a reconcile read from the InfraCluster or the control plane object.
type externalObject struct {
	// obj is the object, nil when it was not read.
	obj *unstructured.Unstructured
	// notFound is set when the object does not exist.
	notFound bool
	// problem says why the object cannot be read in a way the user must fix (a reference to another
	// namespace, RBAC that forbids reading its kind).
	problem string
	// contract is the contract the object was read by.
	contract contract.Version

	// ready is, for an InfraCluster, whether it is provisioned; for a control plane, whether it is ready
	// (status.ready under the v1beta1 contract, initialized under v1beta2).
	ready bool
	// initialized is whether a control plane is initialized.
	initialized bool
	// failureReason and failureMessage are the object's terminal failure (v1beta1 contract).
	failureReason, failureMessage string
	// failureDomains are an InfraCluster's failure domains.
	failureDomains clusterv1.FailureDomains
	// replicas are a control plane's replica counters.
	replicas contract.ControlPlaneReplicas
	// versions are a control plane's status.versions (nil when it has none); versionsRead is false when
	// they could not be used (a list that does not parse or is out of order).
	versions     []clusterv1.StatusVersion
	versionsRead bool

	// readyCondition is the object's Ready condition, as the v1beta1 conditions mirror it.
	readyCondition *contract.Condition
	// v1beta2Condition is the condition the v1beta2 conditions mirror: Ready for an InfraCluster,
	// Available for a control plane.
	v1beta2Condition *contract.Condition
	// conditionError is set when the object's conditions cannot be read.
	conditionError error
}

// descendants are the objects that carry the Cluster's cluster-name label, sorted by name.
type descendants struct {
	machinePools         []clusterv1.MachinePool
	machineDeployments   []clusterv1.MachineDeployment
	machineSets          []clusterv1.MachineSet
	controlPlaneMachines []clusterv1.Machine
	// workerMachines are the worker Machines that do not belong to a MachinePool; machinePoolMachines
	// those that do, which the Cluster's counters leave out, as upstream v1.10 does.
	workerMachines      []clusterv1.Machine
	machinePoolMachines []clusterv1.Machine
}

// Release forgets what the controller remembered of a Cluster that is gone.
func (r *Reconciler) Release(_ context.Context, key types.NamespacedName) error {
	r.kubeconfigs.forget(key)
	r.deletingStatus.forget(key)
	return nil
}

// Reconcile brings a Cluster's status, its provider objects' ownership and its kubeconfig up to date, or
// deletes its descendants when the Cluster is being deleted.
func (r *Reconciler) Reconcile(ctx context.Context, cluster *clusterv1.Cluster) (res ctrl.Result, reterr error) {
	// Events of provider objects, Secrets and descendants may name a Cluster outside the watch filter.
	if r.WatchFilter != "" && cluster.Labels[clusterv1.WatchLabel] != r.WatchFilter {
		return ctrl.Result{}, nil
	}
	key := client.ObjectKeyFromObject(cluster)

	helper := patch.NewHelper(cluster, r.Client, patch.WithWrites(&r.writes))

	if reconciler.IsPaused(cluster, cluster) {
		setPausedCondition(cluster)
		return ctrl.Result{}, helper.Patch(ctx, cluster)
	}

	// The finalizer, so that a Cluster is never deleted before its descendants, is written with the rest of
	// this reconcile's changes, in one patch at the end (with optimistic locking, as the helper sends a
	// change of the finalizers).
	if cluster.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(cluster, clusterv1.ClusterFinalizer) {
		controllerutil.AddFinalizer(cluster, clusterv1.ClusterFinalizer)
		r.markHooksPending(cluster, true)
	}

	s := &scope{cluster: cluster}
	var deletingBefore *clusterv1.ClusterStatus
	if !cluster.DeletionTimestamp.IsZero() {
		deletingBefore = cluster.Status.DeepCopy()
	}
	defer func() {
		updateStatus(s)
		if reterr == nil {
			cluster.Status.ObservedGeneration = cluster.Generation
		}
		// A deleting Cluster's status that only follows its descendants' progress is written at most every
		// deletingStatusInterval; a new step of the deletion, at once (see holdBackDeletingStatus).
		now, writesStatus := time.Now(), false
		if deletingBefore != nil && !equality.Semantic.DeepEqual(*deletingBefore, cluster.Status) {
			wait := holdBackDeletingStatus(deletingBefore, &cluster.Status, r.deletingStatus.last(key), now, r.deletingStatusInterval())
			if wait > 0 {
				cluster.Status = *deletingBefore
				if res.RequeueAfter == 0 || wait < res.RequeueAfter {
					res = ctrl.Result{RequeueAfter: wait}
				}
			}
			writesStatus = wait == 0
		}
		if err := helper.Patch(ctx, cluster); err != nil {
			reterr = errors.Join(reterr, err)
		} else if writesStatus {
			r.deletingStatus.wrote(key, now)
		}
	}()

	phases := []reconciler.Phase[*scope]{
		r.reconcileInfrastructure,
		r.reconcileControlPlane,
		r.getDescendants,
	}
	switch {
	case !cluster.DeletionTimestamp.IsZero():
		phases = append(phases, r.reconcileDelete)
	case cluster.Spec.Topology != nil && cluster.Spec.ControlPlaneRef == nil:
		// The topology controller has not created the control plane yet; a kubeconfig written now would
		// belong to the control plane provider.
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the topology to be generated")
		r.markHooksPending(cluster, false)
	default:
		phases = append(phases, r.reconcileKubeconfig, r.reconcileAfterControlPlaneInitialized)
	}
	// Every phase runs, even after one fails, so that each records its facts.
	return reconciler.RunPhasesWith(ctx, s, reconciler.PhaseOptions{All: true}, phases...)
}

func (r *Reconciler) requeueAfter() time.Duration {
	if r.RequeueAfter > 0 {
		return r.RequeueAfter
	}
	return defaultRequeueAfter
}

func (r *Reconciler) deletingStatusInterval() time.Duration {
	if r.DeletingStatusInterval > 0 {
		return r.DeletingStatusInterval
	}
	return deletingStatusInterval
}

// deletePoll is the next look at a deleting Cluster whose descendants are not all gone. It goes at low
// priority: the events of the descendants' deletion, which the controller watches, are what moves a
// deletion on, and with many Clusters deleting at once their polls would otherwise hold those events back
// in the queue.
func (r *Reconciler) deletePoll() ctrl.Result {
	d := defaultDeleteRequeueAfter
	if r.DeleteRequeueAfter > 0 {
		d = r.DeleteRequeueAfter
	}
	return ctrl.Result{RequeueAfter: d, Priority: ptr.To(handler.LowPriority)}
}

// clusterOfLabelledObject maps a Machine, MachineSet or MachineDeployment to its Cluster by the
// cluster-name label.
func clusterOfLabelledObject(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// clusterOfSecret maps `<cluster>-ca` and `<cluster>-kubeconfig` Secrets to their Cluster by name; the CA
// Secret may come from a user without any label.
func clusterOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	for _, suffix := range []string{clustersecret.Name("", clustersecret.ClusterCA), clustersecret.Name("", clustersecret.Kubeconfig)} {
		if name, ok := strings.CutSuffix(obj.GetName(), suffix); ok && name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
		}
	}
	return nil
}

// machineCountersChanged lets through the Machine updates that change what the Cluster reads from its
// Machines: ownership, labels, deletion, the Node, the Ready, Available and UpToDate conditions and the
// Kubernetes version (status.versions).
func machineCountersChanged() predicate.Predicate {
	return reconciler.UpdateChanged(func(before, after *clusterv1.Machine) bool {
		return machineFacts(before) != machineFacts(after)
	})
}

type machineFactSet struct {
	labels, owners, version    string
	deleting, hasNode          bool
	ready, available, upToDate metav1.ConditionStatus
}

func machineFacts(m *clusterv1.Machine) machineFactSet {
	status := func(t string) metav1.ConditionStatus {
		if c := conditions.GetV1Beta2(m, t); c != nil {
			return c.Status
		}
		return ""
	}
	owners := make([]string, 0, len(m.OwnerReferences))
	for _, o := range m.OwnerReferences {
		owners = append(owners, string(o.UID)+o.Kind+o.Name)
	}
	return machineFactSet{
		labels:    fmt.Sprint(m.Labels),
		owners:    strings.Join(owners, ","),
		version:   kubeversion.OfMachine(m),
		deleting:  !m.DeletionTimestamp.IsZero(),
		hasNode:   m.Status.NodeRef != nil,
		ready:     status(machineReadyCondition),
		available: status(machineAvailableCondition),
		upToDate:  status(machineUpToDateCondition),
	}
}

// machineSetFactsChanged lets through the MachineSet updates that change what the Cluster reads from its
// MachineSets: labels, the controller owner, spec.replicas, deletion, the replica counters and
// status.versions.
func machineSetFactsChanged() predicate.Predicate {
	return reconciler.UpdateChanged(func(before, after *clusterv1.MachineSet) bool {
		return ownershipFacts(before) != ownershipFacts(after) || !ptr.Equal(before.Spec.Replicas, after.Spec.Replicas) ||
			before.Status.Replicas != after.Status.Replicas || replicaCounters(before.Status.V1Beta2) != replicaCounters(after.Status.V1Beta2) ||
			!slices.Equal(before.Status.Versions, after.Status.Versions)
	})
}

// counters are a MachineDeployment's or MachineSet's v1beta2 replica counters, which the Cluster adds up.
type counters struct{ ready, available, upToDate int32 }

// replicaCounters reads the v1beta2 replica counters of a MachineDeployment's or MachineSet's status.
func replicaCounters[T clusterv1.MachineDeploymentV1Beta2Status | clusterv1.MachineSetV1Beta2Status](s *T) counters {
	switch v := any(s).(type) {
	case *clusterv1.MachineDeploymentV1Beta2Status:
		if v != nil {
			return counters{ptr.Deref(v.ReadyReplicas, 0), ptr.Deref(v.AvailableReplicas, 0), ptr.Deref(v.UpToDateReplicas, 0)}
		}
	case *clusterv1.MachineSetV1Beta2Status:
		if v != nil {
			return counters{ptr.Deref(v.ReadyReplicas, 0), ptr.Deref(v.AvailableReplicas, 0), ptr.Deref(v.UpToDateReplicas, 0)}
		}
	}
	return counters{}
}

// machineDeploymentFactsChanged lets through the MachineDeployment updates that change what the Cluster
// reads from its MachineDeployments: labels, the controller owner, spec.replicas, deletion, the Available
// condition, the replica counters and status.versions.
func machineDeploymentFactsChanged() predicate.Predicate {
	return reconciler.UpdateChanged(func(before, after *clusterv1.MachineDeployment) bool {
		return ownershipFacts(before) != ownershipFacts(after) || !ptr.Equal(before.Spec.Replicas, after.Spec.Replicas) ||
			!sameCondition(conditions.GetV1Beta2(before, machineAvailableCondition), conditions.GetV1Beta2(after, machineAvailableCondition)) ||
			before.Status.Replicas != after.Status.Replicas || replicaCounters(before.Status.V1Beta2) != replicaCounters(after.Status.V1Beta2) ||
			!slices.Equal(before.Status.Versions, after.Status.Versions)
	})
}

// machinePoolFactsChanged lets through the MachinePool updates that change what the Cluster reads from its
// MachinePools: labels, the controller owner, deletion and status.versions.
func machinePoolFactsChanged() predicate.Predicate {
	return reconciler.UpdateChanged(func(before, after *clusterv1.MachinePool) bool {
		return ownershipFacts(before) != ownershipFacts(after) || !slices.Equal(before.Status.Versions, after.Status.Versions)
	})
}

// ownershipFact is what the Cluster reads of any descendant: labels, controller owner and deletion.
type ownershipFact struct {
	labels, controller string
	deleting           bool
}

func ownershipFacts(obj metav1.Object) ownershipFact {
	f := ownershipFact{labels: fmt.Sprint(obj.GetLabels()), deleting: !obj.GetDeletionTimestamp().IsZero()}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		f.controller = string(ref.UID) + ref.APIVersion + ref.Kind + ref.Name
	}
	return f
}

// sameCondition compares what a condition says: status, reason and message.
func sameCondition(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

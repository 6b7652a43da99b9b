package machinehealthcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Events the controller records, with upstream's reasons.
const (
	// EventRemediationRestricted: maxUnhealthy or unhealthyRange stopped remediation.
	EventRemediationRestricted = "RemediationRestricted"
	// EventMachineMarkedUnhealthy: a Machine was marked for remediation.
	EventMachineMarkedUnhealthy = "MachineMarkedUnhealthy"
	// EventDetectedUnhealthy: a Machine's Node shows an unhealthy condition that has not lasted its timeout.
	EventDetectedUnhealthy = "DetectedUnhealthy"
)

const (
	nodeWatchName = "machinehealthcheck-nodes"
	// defaultRemoteConnectionRetryInterval is when a MachineHealthCheck is looked at again while its
	// workload cluster cannot be reached; the clustercache also requeues it when the connection comes up.
	defaultRemoteConnectionRetryInterval = time.Minute
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinehealthchecks;machinehealthchecks/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles MachineHealthChecks.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// ClusterCache reaches the workload clusters.
	ClusterCache *clustercache.ClusterCache
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string
	// Recorder records events; the manager's recorder for "machinehealthcheck-controller" when nil.
	Recorder record.EventRecorder

	// now returns the current time; time.Now when nil. Tests replace it.
	now        func() time.Time
	controller controller.Controller
	// indexed says that Client lists MachineHealthChecks and Machines through the indexes SetupWithManager
	// sets up (an API server does not know them; tests that call Reconcile directly may not set them up).
	indexed bool
	writes  patch.Writes
}

// SetupWithManager adds the MachineHealthCheck controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("the MachineHealthCheck controller needs a Client and a ClusterCache")
	}
	// A Cluster's MachineHealthChecks and Machines are listed through indexes: each event of a Machine or
	// a Cluster maps to its health checks, and with thousands of Clusters in a namespace a list of every
	// health check (or a label selector over every Machine) at each event costs more than the rest of the
	// controller's work.
	if err := reconciler.IndexField(ctx, mgr.GetFieldIndexer(), &clusterv1.MachineHealthCheck{}, mhcClusterNameIndex, mhcClusterName); err != nil {
		return err
	}
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{}); err != nil {
		return err
	}
	r.indexed = true
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "machinehealthcheck-controller")
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("machinehealthcheck").
		For(&clusterv1.MachineHealthCheck{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToMachineHealthChecks),
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachineHealthChecks),
			builder.WithPredicates(clusterChanges())).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.clusterToMachineHealthChecks)).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the MachineHealthCheck controller: %w", err)
	}
	r.controller = c
	return nil
}

// clusterChanges lets through the Cluster events that change what a health check decides: pause and
// resume, infrastructure and control plane readiness.
func clusterChanges() predicate.Predicate {
	return reconciler.ClusterUpdates(func(o, n *clusterv1.Cluster) bool {
		return o.Spec.Paused != n.Spec.Paused ||
			infrastructureReady(o) != infrastructureReady(n) || controlPlaneInitialized(o) != controlPlaneInitialized(n)
	})
}

// Reconcile checks the Machines of one MachineHealthCheck.
func (r *Reconciler) Reconcile(ctx context.Context, mhc *clusterv1.MachineHealthCheck) (_ ctrl.Result, reterr error) {
	ctx, cluster, wait, err := reconciler.WaitForCluster(ctx, r.Client, mhc, mhc.Spec.ClusterName, 0)
	if wait || err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	if cluster == nil {
		// A MachineHealthCheck holds no finalizer of its own: being deleted, it has nothing to clean up and,
		// without its Cluster, nothing to look at.
		log.Info("Waiting for the Cluster to exist")
		return ctrl.Result{}, nil
	}

	helper := patch.NewHelper(mhc, r.Client, patch.WithWrites(&r.writes))
	defer func() {
		if reterr == nil {
			mhc.Status.ObservedGeneration = mhc.Generation
		}
		if err := helper.Patch(ctx, mhc); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	paused := reconciler.IsPaused(cluster, mhc)
	conditions.SetV1Beta2(mhc, reconciler.PausedCondition(cluster, mhc, "MachineHealthCheck", paused))
	if paused {
		log.V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	if !mhc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	reconciler.SetClusterNameLabel(mhc, mhc.Spec.ClusterName)
	if !hasOwner(mhc, cluster) {
		mhc.OwnerReferences = append(mhc.OwnerReferences, metav1.OwnerReference{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
		})
	}
	if !cluster.DeletionTimestamp.IsZero() {
		// Every Machine of a Cluster being deleted is going away: there is nothing left to remediate, and
		// checking them would only write down their Nodes disappearing one by one (upstream checks them
		// to the end). Its label and owner reference are kept up to date all the same, so that it goes
		// with the Cluster.
		log.V(4).Info("Not checking Machines: the Cluster is being deleted")
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, cluster, mhc)
}

func hasOwner(obj metav1.Object, owner metav1.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

func (r *Reconciler) reconcile(ctx context.Context, cluster *clusterv1.Cluster, mhc *clusterv1.MachineHealthCheck) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if err := validate(mhc); err != nil {
		log.Info("The MachineHealthCheck's spec is invalid, not checking Machines", "reason", err.Error())
		setInvalid(mhc, err)
		return ctrl.Result{}, nil
	}

	// Nodes are only looked at once the control plane can answer.
	var remote client.Reader
	if controlPlaneInitialized(cluster) {
		key := client.ObjectKeyFromObject(cluster)
		c, err := r.ClusterCache.GetClient(ctx, key)
		if err == nil {
			err = r.ClusterCache.Watch(ctx, key, clustercache.WatchInput{
				Name: nodeWatchName, Watcher: r.controller, Kind: &corev1.Node{},
				EventHandler: handler.EnqueueRequestsFromMapFunc(r.nodeToMachineHealthChecks(key)),
				Predicates:   []predicate.Predicate{predicate.ResourceVersionChangedPredicate{}},
			})
		}
		if errors.Is(err, clustercache.ErrClusterNotConnected) {
			// Judging Machines without their Nodes would be wrong: wait for the connection.
			log.V(4).Info("Requeuing: the workload cluster cannot be reached")
			return ctrl.Result{RequeueAfter: defaultRemoteConnectionRetryInterval}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		remote = c
	}

	targets, skipped, err := getTargets(ctx, r.Client, remote, mhc, r.indexed)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, s := range skipped {
		log.V(3).Info("Skipping remediation", "reason", s)
	}

	nodeStartupTimeout := clusterv1.DefaultNodeStartupTimeout.Duration
	if mhc.Spec.NodeStartupTimeout != nil {
		nodeStartupTimeout = mhc.Spec.NodeStartupTimeout.Duration
	}
	now := reconciler.Clock(r.now)
	var healthy, unhealthyTargets []*target
	var nextCheck time.Duration
	for _, t := range targets {
		v := check(t, cluster, &mhc.Spec, nodeStartupTimeout, now)
		switch {
		case v.unhealthy:
			conditions.Set(t.machine, v.v1beta1)
			conditions.SetV1Beta2(t.machine, v.v1beta2)
			unhealthyTargets = append(unhealthyTargets, t)
		case v.nextCheck > 0:
			log.V(3).Info("Machine may become unhealthy", "Machine", klog.KObj(t.machine), "in", v.nextCheck.Truncate(time.Second).String())
			if t.node != nil {
				r.Recorder.Eventf(t.machine, corev1.EventTypeNormal, EventDetectedUnhealthy, "Machine %s has unhealthy Node %s", klog.KObj(t.machine), t.nodeName())
			}
			if nextCheck == 0 || v.nextCheck < nextCheck {
				nextCheck = v.nextCheck
			}
		case t.machine.DeletionTimestamp.IsZero() && t.node != nil:
			conditions.MarkTrue(t.machine, clusterv1.MachineHealthCheckSucceededCondition)
			conditions.SetV1Beta2(t.machine, metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededV1Beta2Condition,
				Status: metav1.ConditionTrue, Reason: clusterv1.MachineHealthCheckSucceededV1Beta2Reason})
			healthy = append(healthy, t)
		}
	}
	setCounts(mhc, targets, len(healthy))

	allowed, err := allowRemediation(mhc, len(targets), len(healthy))
	if err != nil {
		setInvalid(mhc, err)
		return ctrl.Result{}, nil
	}
	setRemediationAllowed(mhc, allowed)
	res := ctrl.Result{RequeueAfter: nextCheck}
	if !allowed.allowed {
		maxUnhealthy := maxUnhealthyOf(mhc)
		log.Info("Short-circuiting remediation", "total", len(targets), "unhealthy", len(unhealthyTargets),
			"maxUnhealthy", maxUnhealthy.String(), "unhealthyRange", ptrString(mhc.Spec.UnhealthyRange))
		if len(unhealthyTargets) > 0 {
			r.Recorder.Event(mhc, corev1.EventTypeWarning, EventRemediationRestricted, allowed.message)
		}
		// The health of every Machine is still reported, but none is handed over for remediation.
		return res, r.patchTargets(ctx, append(healthy, unhealthyTargets...))
	}

	errs := []error{r.remediate(ctx, mhc, unhealthyTargets), r.patchHealthy(ctx, mhc, healthy)}
	return res, errors.Join(errs...)
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// patchTargets writes the health check conditions of the targets.
func (r *Reconciler) patchTargets(ctx context.Context, targets []*target) error {
	var errs []error
	for _, t := range targets {
		if err := r.patchMachine(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// patchMachine writes what the reconcile changed in a Machine's status (its conditions), against the
// version it listed: conditions are a list that the Machine controller writes too, so a Machine changed
// since fails with a conflict and is judged again.
func (r *Reconciler) patchMachine(ctx context.Context, t *target) error {
	if err := patch.NewHelper(t.original, r.Client).Patch(ctx, t.machine); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the health check conditions of Machine %s: %w", t.machine.Name, err)
	}
	return nil
}

// mhcClusterNameIndex indexes MachineHealthChecks in the cache by spec.clusterName.
const mhcClusterNameIndex = "capstan.cluster.x-k8s.io/mhc-cluster-name"

func mhcClusterName(obj client.Object) []string {
	if mhc, ok := obj.(*clusterv1.MachineHealthCheck); ok && mhc.Spec.ClusterName != "" {
		return []string{mhc.Spec.ClusterName}
	}
	return nil
}

// healthChecksOf lists the MachineHealthChecks of the Cluster namespace/cluster (and, without the index, the
// namespace's others too: callers check spec.clusterName).
func (r *Reconciler) healthChecksOf(ctx context.Context, namespace, cluster string) (*clusterv1.MachineHealthCheckList, error) {
	list := &clusterv1.MachineHealthCheckList{}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if r.indexed {
		opts = append(opts, client.MatchingFields{mhcClusterNameIndex: cluster})
	}
	return list, r.Client.List(ctx, list, opts...)
}

// clusterToMachineHealthChecks maps a Cluster to its MachineHealthChecks.
func (r *Reconciler) clusterToMachineHealthChecks(ctx context.Context, obj client.Object) []reconcile.Request {
	list, err := r.healthChecksOf(ctx, obj.GetNamespace(), obj.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachineHealthChecks of a Cluster", "Cluster", klog.KObj(obj))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.ClusterName == obj.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// machineToMachineHealthChecks maps a Machine to the MachineHealthChecks of its Cluster that select it.
func (r *Reconciler) machineToMachineHealthChecks(ctx context.Context, obj client.Object) []reconcile.Request {
	m, ok := obj.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	list, err := r.healthChecksOf(ctx, m.Namespace, m.Spec.ClusterName)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachineHealthChecks of a Machine", "Machine", klog.KObj(m))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		mhc := &list.Items[i]
		if mhc.Spec.ClusterName != m.Spec.ClusterName {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(&mhc.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(m.Labels)) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mhc)})
	}
	return reqs
}

// nodeToMachineHealthChecks maps a Node of a Cluster's workload cluster to the MachineHealthChecks of its
// Machine, found by the annotations the Machine controller puts on Nodes.
func (r *Reconciler) nodeToMachineHealthChecks(cluster client.ObjectKey) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		a := obj.GetAnnotations()
		name := a[clusterv1.MachineAnnotation]
		if name == "" || a[clusterv1.ClusterNamespaceAnnotation] != cluster.Namespace {
			return nil
		}
		m := &clusterv1.Machine{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, m); err != nil {
			return nil
		}
		return r.machineToMachineHealthChecks(ctx, m)
	}
}

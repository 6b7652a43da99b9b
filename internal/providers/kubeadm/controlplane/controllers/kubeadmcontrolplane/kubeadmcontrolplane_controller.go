package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// kubeadmControlPlaneKind is the kind this controller reconciles.
const kubeadmControlPlaneKind = "KubeadmControlPlane"

// Requeue intervals, as upstream's.
const (
	deleteRequeueAfter = 5 * time.Second
	// deletingRequeueAfter is upstream's deleteRequeueAfter: how often a deleting KubeadmControlPlane looks
	// again at the workers it waits for and at its Machines being deleted, besides the deletion events of
	// both.
	deletingRequeueAfter        = 30 * time.Second
	preflightFailedRequeueAfter = 15 * time.Second
	dependentCertRequeueAfter   = 30 * time.Second
	notReadyRequeueAfter        = 20 * time.Second
)

// pollAfter is the result of a reconcile that looks again after d for what it does not watch (the workload
// cluster's Pods and Nodes, its connection coming up): at a low priority, so that the reconciles a change
// asked for (a Machine that got its Node, a connection that came up) go first. With a thousand control
// planes being created, each looking again every 20 seconds, the manager cannot keep up with the looks; in
// a queue served in order, a control plane whose Machine just got its Node would wait behind all of them
// before its health is read — and the Machine's Ready and the counts of the control plane and the Cluster
// with it.
func pollAfter(d time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: d, Priority: ptr.To(handler.LowPriority)}
}

// DefaultHealthInterval is how often the health of a ready, healthy control plane is read again by
// default (Reconciler.HealthInterval): the workload cluster's Pods are not watched. Upstream reads them
// again only on Machine events and at the sync period (10 minutes); every read opens a port-forward and
// an etcd client, so a short interval keeps a thousand idle clusters busy.
const DefaultHealthInterval = 5 * time.Minute

// Reconciler reconciles KubeadmControlPlanes.
type Reconciler struct {
	// Client is the manager's client (Machines, Secrets labelled with a cluster name and InfraMachines are
	// read from its cache, other Secrets from the API server); APIReader reads the control plane's Machines
	// while the cache may not show one this controller just created or deleted, so that a Machine is never
	// created or deleted twice, and a Machine again before a conflicting write.
	Client    client.Client
	APIReader client.Reader
	// ClusterCache connects to the workload clusters.
	ClusterCache *clustercache.ClusterCache
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string
	// EtcdDialTimeout and EtcdCallTimeout bound the connections and calls to etcd.
	EtcdDialTimeout, EtcdCallTimeout time.Duration
	// HealthInterval is how often the health of a ready, healthy control plane is read again
	// (DefaultHealthInterval when zero); one that is not ready or not healthy is read again every 20s.
	HealthInterval time.Duration
	// EtcdHealthReuse is how long a read of etcd that found every member healthy is reused for the same
	// Nodes (DefaultEtcdHealthReuse when zero, never when negative).
	EtcdHealthReuse time.Duration
	// EtcdLogger receives the etcd client's logs; none when nil.
	EtcdLogger *zap.Logger
	// InPlaceUpdates is the InPlaceUpdates feature gate: with it and an InPlaceUpdateChecker, a rollout
	// updates an outdated Machine in place, rather than replacing it, when the CanUpdateMachine extension
	// can (upstream v1.12). Off or without a checker, Machines are replaced.
	InPlaceUpdates       bool
	InPlaceUpdateChecker InPlaceUpdateChecker

	recorder  record.EventRecorder
	etcdCerts etcdClientCerts
	etcdReads etcdReads
	// machineWrites are the Machines created and deleted that the cache may not show yet.
	machineWrites machineWrites
	// writes are the versions of KubeadmControlPlanes this controller's writes replaced.
	writes patch.Writes
}

// SetupWithManager builds the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil || r.ClusterCache == nil {
		return errors.New("the KubeadmControlPlane controller needs a client, an API reader and a cluster cache")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1.Machine{}, controlPlaneMachinesIndex, controlPlaneMachineOf); err != nil {
		return fmt.Errorf("indexing the control plane Machines by cluster name: %w", err)
	}
	if r.HealthInterval <= 0 {
		r.HealthInterval = DefaultHealthInterval
	}
	if r.EtcdHealthReuse == 0 {
		r.EtcdHealthReuse = DefaultEtcdHealthReuse
	}
	if options.RateLimiter == nil {
		// A reconcile fails at each event while the workload cluster does not answer (a new etcd member
		// joining, an API server being replaced): retry within notReadyRequeueAfter, whatever the number of
		// failures in a row, as the control plane is looked at again that often while it is not ready.
		options.RateLimiter = reconciler.ErrorBackoff(notReadyRequeueAfter)
	}
	r.recorder = reconciler.EventRecorder(mgr, "kubeadmcontrolplane-controller")
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("kubeadmcontrolplane").
		WithOptions(options).
		For(&controlplanev1.KubeadmControlPlane{}, builder.WithPredicates(r.writes.LetThroughAwaited(reconciler.NotOwnStatus()))).
		Owns(&clusterv1.Machine{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.workerToDeletingKubeadmControlPlane), builder.WithPredicates(workerMachineGone())).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToKubeadmControlPlane), builder.WithPredicates(clusterChangesForKubeadmControlPlane())).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return err
	}
	return c.Watch(r.ClusterCache.ClusterSource(r.clusterToKubeadmControlPlane))
}

// clusterChangesForKubeadmControlPlane lets through the Cluster changes a KubeadmControlPlane reads: the
// spec (paused, the control plane endpoint), labels and annotations, deletion, status.infrastructureReady
// and status.failureDomains. The Cluster's other status changes (its conditions mirror the control
// plane's, so each change of the KubeadmControlPlane changes the Cluster) are not.
func clusterChangesForKubeadmControlPlane() predicate.Predicate {
	return reconciler.SpecOrMetadataChanged(reconciler.ClusterUpdates(func(old, updated *clusterv1.Cluster) bool {
		return old.Status.InfrastructureReady != updated.Status.InfrastructureReady ||
			!equality.Semantic.DeepEqual(old.Status.FailureDomains, updated.Status.FailureDomains)
	}))
}

// workerMachineGone lets through the deletion of a Machine that is not a control plane Machine: a deleting
// KubeadmControlPlane waits for the Cluster's workers to be gone.
func workerMachineGone() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc: func(e event.DeleteEvent) bool {
			_, cp := e.Object.GetLabels()[clusterv1.MachineControlPlaneLabel]
			return !cp && e.Object.GetLabels()[clusterv1.ClusterNameLabel] != ""
		},
	}
}

// workerToDeletingKubeadmControlPlane maps a worker Machine that is gone to its Cluster's
// KubeadmControlPlane, when that is being deleted: it deletes its own Machines once the workers are gone, as
// soon as they are rather than at its next periodic look.
func (r *Reconciler) workerToDeletingKubeadmControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[clusterv1.ClusterNameLabel]}, cluster); err != nil {
		return nil
	}
	reqs := r.clusterToKubeadmControlPlane(ctx, cluster)
	out := reqs[:0]
	for _, req := range reqs {
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := r.Client.Get(ctx, req.NamespacedName, kcp); err == nil && !kcp.DeletionTimestamp.IsZero() {
			out = append(out, req)
		}
	}
	return out
}

// clusterToKubeadmControlPlane maps a Cluster to its KubeadmControlPlane. The cluster cache's connection
// events carry only the Cluster's key: the Cluster is read from the cache then.
func (r *Reconciler) clusterToKubeadmControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	if c.Spec.ControlPlaneRef == nil && c.Spec.InfrastructureRef == nil {
		full := &clusterv1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(c), full); err != nil {
			return nil
		}
		c = full
	}
	ref := c.Spec.ControlPlaneRef
	if ref == nil || ref.Kind != kubeadmControlPlaneKind {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
}

// Release forgets the Machine writes remembered for a KubeadmControlPlane that is gone.
func (r *Reconciler) Release(_ context.Context, key types.NamespacedName) error {
	r.machineWrites.forget(key)
	return nil
}

// Reconcile reconciles one KubeadmControlPlane.
func (r *Reconciler) Reconcile(ctx context.Context, kcp *controlplanev1.KubeadmControlPlane) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	cluster := &clusterv1.Cluster{}
	found, err := reconciler.GetOwner(ctx, r.Client, kcp, "Cluster", cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found {
		if !kcp.DeletionTimestamp.IsZero() {
			// The Cluster is gone: nothing is left to clean up but the finalizer.
			helper := patch.NewHelper(kcp, r.Client, patch.WithWrites(&r.writes))
			controllerutil.RemoveFinalizer(kcp, controlplanev1.KubeadmControlPlaneFinalizer)
			return ctrl.Result{}, helper.Patch(ctx, kcp)
		}
		log.Info("Waiting for the Cluster controller to set an owner reference on the KubeadmControlPlane")
		return ctrl.Result{}, nil
	}
	log = log.WithValues("Cluster", klog.KObj(cluster))
	ctx = ctrl.LoggerInto(ctx, log)

	helper := patch.NewHelper(kcp, r.Client, patch.WithWrites(&r.writes))
	if kcp.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(kcp, controlplanev1.KubeadmControlPlaneFinalizer) {
		controllerutil.AddFinalizer(kcp, controlplanev1.KubeadmControlPlaneFinalizer)
		return ctrl.Result{}, helper.Patch(ctx, kcp)
	}

	s := &scope{kcp: kcp, cluster: cluster, now: time.Now(), inPlaceUpdates: r.InPlaceUpdates}
	paused := reconciler.IsPaused(cluster, kcp)
	if err := r.readMachines(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	s.machineWriters = map[string]*machineWriter{}
	for name, m := range s.machines {
		s.machineWriters[name] = newMachineWriter(m, r.Client)
	}
	defer func() {
		if paused {
			setPausedStatus(s)
		} else {
			setStatus(s)
		}
		// The Machines' conditions are written even when a phase failed: what the reconcile read of their
		// health holds, and only the conditions it changed are written (see patchMachine).
		var errs []error
		for name, m := range s.machines {
			if w, ok := s.machineWriters[name]; ok {
				if err := r.patchMachine(ctx, w, m); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("patching Machine %s: %w", name, err))
				}
			}
		}
		if reterr == nil && len(errs) == 0 {
			// As upstream (patch.WithStatusObservedGeneration): the status is that of this spec.
			kcp.Status.ObservedGeneration = kcp.Generation
		}
		if err := helper.Patch(ctx, kcp); err != nil {
			errs = append(errs, err)
		}
		reterr = errors.Join(append([]error{reterr}, errs...)...)
		if reterr == nil && res.IsZero() && kcp.DeletionTimestamp.IsZero() && !paused {
			// Pod and Node changes in the workload cluster are not watched: look again while the control plane
			// is not ready or a component is unhealthy. The interval is spread (up to a tenth longer), so that
			// the control planes reconciled together after a restart are not all read again together.
			res = pollAfter(wait.Jitter(r.HealthInterval, 0.1))
			if !kcp.Status.Ready || !componentsHealthy(kcp) {
				res = pollAfter(notReadyRequeueAfter)
			}
		}
		if res.Priority == nil {
			// A step that asked to be looked at again (a Machine created, a deletion under way) goes at the
			// normal priority, even when a low-priority poll brought the control plane here.
			res.Priority = ptr.To(0)
		}
	}()

	if paused {
		log.V(1).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	if !kcp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcile(ctx, s)
}

// readMachines reads the control plane Machines the KubeadmControlPlane owns, their KubeadmConfigs and
// InfraMachines, and which of them are up to date. The Machines are read from the cache, unless it may not
// show yet a Machine this controller created or deleted (see machineWrites): then from the API server.
func (r *Reconciler) readMachines(ctx context.Context, s *scope) error {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.kcp.Namespace), client.MatchingFields{controlPlaneMachinesIndex: s.cluster.Name}); err != nil {
		return fmt.Errorf("listing the control plane Machines: %w", err)
	}
	if !r.machineWrites.shownBy(client.ObjectKeyFromObject(s.kcp), list.Items, s.now) {
		list = &clusterv1.MachineList{}
		if err := r.APIReader.List(ctx, list, client.InNamespace(s.kcp.Namespace), client.MatchingLabels{
			clusterv1.ClusterNameLabel: s.cluster.Name, clusterv1.MachineControlPlaneLabel: "",
		}); err != nil {
			return fmt.Errorf("listing the control plane Machines: %w", err)
		}
	}
	s.machines = map[string]*clusterv1.Machine{}
	s.kubeadmConfigs = map[string]*bootstrapv1.KubeadmConfig{}
	s.infraMachines = map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		m := &list.Items[i]
		if owner := metav1.GetControllerOf(m); owner == nil || owner.Kind != kubeadmControlPlaneKind || owner.UID != s.kcp.UID {
			continue
		}
		s.machines[m.Name] = m
		if ref := m.Spec.Bootstrap.ConfigRef; ref != nil && ref.Kind == "KubeadmConfig" {
			cfg := &bootstrapv1.KubeadmConfig{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, cfg); err == nil {
				s.kubeadmConfigs[m.Name] = cfg
			} else if !apierrors.IsNotFound(err) {
				return fmt.Errorf("getting KubeadmConfig %s of Machine %s: %w", ref.Name, m.Name, err)
			}
		}
		if infra, err := external.Get(ctx, r.Client, &m.Spec.InfrastructureRef, m.Namespace); err == nil {
			s.infraMachines[m.Name] = infra
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("getting the InfraMachine of Machine %s: %w", m.Name, err)
		}
	}
	s.computeUpToDate()
	return nil
}

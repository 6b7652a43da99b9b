package topology

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/internal/topologystate"
)

// FieldManager is the server-side apply field manager of the objects the controller manages.
const FieldManager = topology.FieldManager

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedeployments;machinehealthchecks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io;bootstrap.cluster.x-k8s.io,resources=*,verbs=get;list;watch;create;update;patch;delete

// Hooks calls the lifecycle hooks of managed topologies (Runtime SDK). The engine says which hooks to
// call (topology.Desired.Hooks); the controller calls them through Hooks and keeps the Cluster's
// runtime.cluster.x-k8s.io/pending-hooks annotation.
type Hooks interface {
	// Call calls every handler of a hook for a Cluster and returns their answer (the shortest retry of
	// those that block, with their messages).
	Call(ctx context.Context, cluster *clusterv1.Cluster, call topology.HookCall) (topology.HookResponse, error)
}

// Reconciler reconciles the topology of Clusters.
type Reconciler struct {
	// Client is the manager's client.
	Client client.Client
	// APIReader reads straight from the API server.
	APIReader client.Reader
	// WatchFilter is the value of --watch-filter; "" reconciles everything.
	WatchFilter string
	// ExternalPatcher runs external patches; without it, classes with external patches are reported as
	// not reconcilable.
	ExternalPatcher topology.ExternalPatcher
	// Hooks are the lifecycle hooks; none when nil (the Runtime SDK is off).
	Hooks Hooks
	// UpgradePlanner asks the upgrade plan extensions of ClusterClasses (GenerateUpgradePlan); without it,
	// Clusters of a class that names one cannot be upgraded, and say so.
	UpgradePlanner topology.UpgradePlanner
	// Workload returns a reader of a Cluster's workload cluster, to read the Nodes of its MachinePools;
	// without it no MachinePool is seen upgrading.
	Workload func(ctx context.Context, cluster client.ObjectKey) (client.Reader, error)

	controller controller.Controller
	cache      cache.Cache
	watched    sync.Map // schema.GroupVersionKind -> struct{}
	writes     patch.Writes
	noDiff     *noDiffCache
	// indexed says that Client lists a Cluster's MachineDeployments and Machines through
	// reconciler.ClusterNameIndex, which SetupWithManager sets up.
	indexed bool
}

// SetupWithManager adds the topology controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil {
		return errors.New("the topology controller needs a Client")
	}
	// Each reconcile lists its Cluster's MachineDeployments and Machines: through the index rather than a
	// label selector, which makes the cache read every object of the namespace.
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.MachineDeployment{}, &clusterv1.Machine{}, &clusterv1.MachinePool{}); err != nil {
		return err
	}
	r.indexed = true
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	r.noDiff = newNoDiffCache()
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("topology/cluster").
		For(&clusterv1.Cluster{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			c, ok := o.(*clusterv1.Cluster)
			return ok && c.Spec.Topology != nil
		}), r.writes.LetThroughAwaited(clusterChangeIsRelevant()))).
		Watches(&clusterv1.ClusterClass{}, handler.EnqueueRequestsFromMapFunc(r.classToClusters)).
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(ownedToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(isTopologyOwned), machineDeploymentChangeIsRelevant())).
		Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(ownedToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(isTopologyOwned), machinePoolChangeIsRelevant())).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(ownedToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				_, ok := o.GetLabels()[clusterv1.ClusterTopologyOwnedLabel]
				return ok
			}), machineChangeIsRelevant())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the topology controller: %w", err)
	}
	r.controller = c
	r.cache = mgr.GetCache()
	return nil
}

func isTopologyOwned(o client.Object) bool {
	_, ok := o.GetLabels()[clusterv1.ClusterTopologyOwnedLabel]
	return ok
}

func ownedToCluster(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[clusterv1.ClusterNameLabel]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

func (r *Reconciler) classToClusters(ctx context.Context, o client.Object) []reconcile.Request {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Clusters of a ClusterClass")
		return nil
	}
	var out []reconcile.Request
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if c.Spec.Topology == nil {
			continue
		}
		ns, name := c.GetClassKey()
		if ns == o.GetNamespace() && name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		}
	}
	return out
}

// watch starts watching a kind of InfraCluster or control plane (once), so that their status changes
// (a control plane finishing an upgrade) bring their Cluster back.
func (r *Reconciler) watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	if r.controller == nil {
		return nil
	}
	if _, loaded := r.watched.LoadOrStore(gvk, struct{}{}); loaded {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := r.controller.Watch(source.Kind[client.Object](r.cache, u, handler.EnqueueRequestsFromMapFunc(ownedToCluster),
		predicate.NewPredicateFuncs(isTopologyOwned))); err != nil {
		r.watched.Delete(gvk)
		return fmt.Errorf("watching %s: %w", gvk.Kind, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Watching kind", "kind", gvk.Kind)
	return nil
}

// Reconcile reconciles the topology of one Cluster.
func (r *Reconciler) Reconcile(ctx context.Context, cluster *clusterv1.Cluster) (_ ctrl.Result, reterr error) {
	if cluster.Spec.Topology == nil {
		return ctrl.Result{}, nil
	}
	if !cluster.DeletionTimestamp.IsZero() {
		// The Cluster controller deletes the Cluster's descendants.
		return ctrl.Result{}, nil
	}
	if reconciler.IsPaused(cluster, cluster) {
		ctrl.LoggerFrom(ctx).V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	ns, name := cluster.GetClassKey()
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("ClusterClass", klog.KRef(ns, name)))

	s := &scope{cluster: cluster}
	res, err := r.reconcile(ctx, s)
	if err != nil {
		s.err = err
	}
	if perr := r.patchTopologyReconciled(ctx, client.ObjectKeyFromObject(cluster), s); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if s.requeueAfter > 0 {
		res = reconciler.LowestNonZero(res, ctrl.Result{RequeueAfter: s.requeueAfter})
	}
	return res, err
}

// conditionWriteAttempts bounds how often patchTopologyReconciled writes the condition.
const conditionWriteAttempts = 3

// patchTopologyReconciled writes the Cluster's TopologyReconciled condition and upgrade plans, the only
// parts of its status that are this controller's. The Cluster controller writes the rest of the status, often at the same time
// (the control plane's and the workers' changes that brought this reconcile here bring it there too): a
// write that conflicts with one of its writes is sent again over the Cluster read from the API server,
// rather than failing the reconcile, which would compute the whole topology again for one condition.
func (r *Reconciler) patchTopologyReconciled(ctx context.Context, key client.ObjectKey, s *scope) error {
	var reader client.Reader = r.Client
	var err error
	for range conditionWriteAttempts {
		latest := &clusterv1.Cluster{}
		if err = reader.Get(ctx, key, latest); err != nil {
			return err
		}
		helper := patch.NewHelper(latest, r.Client, patch.WithWrites(&r.writes))
		setTopologyReconciled(latest, s)
		setUpgradePlan(latest, s)
		if err = helper.Patch(ctx, latest); err == nil || !apierrors.IsConflict(err) {
			return err
		}
		reader = r.APIReader
	}
	return err
}

// scope holds what a reconcile found, from which the condition is computed.
type scope struct {
	cluster *clusterv1.Cluster
	class   *clusterv1.ClusterClass
	desired *topology.Desired
	// classNotReconciled: the ClusterClass controller has not seen the class's latest generation.
	classNotReconciled bool
	// blockingHook names the lifecycle hook that holds the Cluster back, and why.
	blockingHook, hookMessage string
	// creating: the Cluster's objects did not exist before this reconcile.
	creating     bool
	err          error
	requeueAfter time.Duration
}

func (r *Reconciler) gatherer() *topologystate.Gatherer {
	return &topologystate.Gatherer{Reader: r.Client, Indexed: r.indexed, Workload: r.Workload}
}

func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	g := r.gatherer()
	class, err := g.Class(ctx, s.cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.class = class
	if class.Status.ObservedGeneration != class.Generation {
		s.classNotReconciled = true
		log.V(4).Info("Waiting for the ClusterClass to be reconciled")
		return ctrl.Result{}, nil
	}
	bp, err := g.Blueprint(ctx, class)
	if err != nil {
		return ctrl.Result{}, err
	}
	cur, err := g.Current(ctx, s.cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.creating = cur.ControlPlane.Object == nil && cur.InfrastructureCluster == nil
	desired, err := r.compute(ctx, s.cluster, bp, cur)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.desired = desired
	if u := desired.Upgrade; u.BlockingHook != "" {
		s.blockingHook, s.hookMessage, s.requeueAfter = u.BlockingHook, u.HookMessage, u.HookRetryAfter
	}
	if desired.HoldCreate {
		return ctrl.Result{}, nil
	}
	// The intent to call the After... hooks is recorded before the control plane takes a version.
	if err := r.markHooks(ctx, s.cluster, desired.Hooks.MarkPending, desired.Hooks.MarkDone); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.apply(ctx, s, cur, desired); err != nil {
		return ctrl.Result{}, err
	}
	for _, call := range desired.Hooks.CallAfterApply {
		resp, err := r.callHook(ctx, s.cluster, call)
		if err != nil {
			return ctrl.Result{}, err
		}
		if resp.Blocking() {
			// AfterClusterUpgrade stays pending: it is called again, and no other upgrade starts meanwhile.
			s.blockingHook, s.hookMessage = call.Hook, resp.Message
			s.requeueAfter = reconciler.LowestNonZero(ctrl.Result{RequeueAfter: s.requeueAfter}, ctrl.Result{RequeueAfter: resp.RetryAfter}).RequeueAfter
			continue
		}
		if err := r.markHooks(ctx, s.cluster, nil, []string{call.Hook}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(desired.Upgrade.MachinePoolsUpgrading) > 0 {
		// A MachinePool's Nodes take its version without a change of the MachinePool: look again.
		if s.requeueAfter == 0 || s.requeueAfter > machinePoolUpgradeRecheck {
			s.requeueAfter = machinePoolUpgradeRecheck
		}
	}
	return ctrl.Result{}, nil
}

// machinePoolUpgradeRecheck is how often the Nodes of an upgrading MachinePool are looked at again.
const machinePoolUpgradeRecheck = 15 * time.Second

// maxHookRounds bounds the computations of one reconcile: each asks for the hooks whose answers it
// needs, and one hook is called once per reconcile. Up to five hooks may be asked in turn (the end of a
// step of a chained upgrade: AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade; the
// next: BeforeClusterUpgrade, BeforeControlPlaneUpgrade), and the last computation asks for none.
const maxHookRounds = 7

// compute runs the engine, calls the hooks it asks for, and runs it again with their answers.
func (r *Reconciler) compute(ctx context.Context, cluster *clusterv1.Cluster, bp *topology.Blueprint, cur *topology.Current) (*topology.Desired, error) {
	opts := topology.Options{ExternalPatcher: r.ExternalPatcher, RuntimeHooks: r.Hooks != nil, UpgradePlanner: r.UpgradePlanner}
	cur.HookResponses = map[string]topology.HookResponse{}
	for range maxHookRounds {
		desired, err := topology.Compute(ctx, bp, cur, opts)
		if err != nil {
			return nil, fmt.Errorf("computing the desired state: %w", err)
		}
		if len(desired.Hooks.Call) == 0 {
			return desired, nil
		}
		for _, call := range desired.Hooks.Call {
			if _, called := cur.HookResponses[call.Hook]; called {
				return nil, fmt.Errorf("the topology engine asks for the %s hook again", call.Hook)
			}
			resp, err := r.callHook(ctx, cluster, call)
			if err != nil {
				return nil, err
			}
			cur.HookResponses[call.Hook] = resp
		}
	}
	return nil, errors.New("the topology engine keeps asking for hooks")
}

func (r *Reconciler) callHook(ctx context.Context, cluster *clusterv1.Cluster, call topology.HookCall) (topology.HookResponse, error) {
	resp, err := r.Hooks.Call(ctx, cluster, call)
	if err != nil {
		return resp, fmt.Errorf("calling the %s hook: %w", call.Hook, err)
	}
	return resp, nil
}

// markHooks adds hooks to, and removes hooks from, the Cluster's pending-hooks annotation and, when it
// changed, writes that annotation alone (a patch of the whole map would drop annotations others added
// meanwhile).
func (r *Reconciler) markHooks(ctx context.Context, cluster *clusterv1.Cluster, pending, done []string) error {
	changed := false
	// Done first: a hook of one step may be done, and the same hook of the next step pending.
	for _, h := range done {
		changed = hooks.MarkDone(cluster, runtimehooksv1.Hook(h)) || changed
	}
	for _, h := range pending {
		changed = hooks.MarkPending(cluster, runtimehooksv1.Hook(h)) || changed
	}
	if !changed {
		return nil
	}
	var value any
	if v, ok := cluster.Annotations[runtimev1.PendingHooksAnnotation]; ok {
		value = v
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{runtimev1.PendingHooksAnnotation: value}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("writing the %s annotation of the Cluster: %w", runtimev1.PendingHooksAnnotation, err)
	}
	return nil
}

package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	"github.com/capstan-dev/capstan/internal/topology"
)

// FieldManager is the server-side apply field manager of the objects the controller manages.
const FieldManager = "capi-topology"

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusterclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedeployments;machinehealthchecks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io;controlplane.cluster.x-k8s.io;bootstrap.cluster.x-k8s.io,resources=*,verbs=get;list;watch;create;update;patch;delete

// Hooks are the lifecycle hooks of managed topologies (Runtime SDK) that the controller calls around the
// engine. All are optional; a nil Hooks calls none.
type Hooks interface {
	topology.UpgradeHooks
	// BeforeClusterCreate is called before the first objects of a Cluster are created; a blocking
	// response delays the creation.
	BeforeClusterCreate(ctx context.Context, cluster *clusterv1.Cluster) (topology.HookResponse, error)
	// AfterClusterReconciled is called after each successful reconcile with the desired state that was
	// applied, so that AfterControlPlaneInitialized, AfterClusterUpgrade and the tracking of pending hooks
	// (upstream's runtime.cluster.x-k8s.io/pending-hooks annotation) can be done.
	AfterClusterReconciled(ctx context.Context, cluster *clusterv1.Cluster, desired *topology.Desired) error
	// AfterControlPlaneUpgradePending reports whether AfterControlPlaneUpgrade still has to be called.
	AfterControlPlaneUpgradePending(cluster *clusterv1.Cluster) bool
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
	// Hooks are the lifecycle hooks; none when nil.
	Hooks Hooks

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
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.MachineDeployment{}, &clusterv1.Machine{}); err != nil {
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
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(ownedToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				_, ok := o.GetLabels()[clusterv1.ClusterTopologyOwnedLabel]
				return ok
			}), machineChangeIsRelevant())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.RequeueOnConflict(r))
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
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.Spec.Topology == nil {
		return ctrl.Result{}, nil
	}
	if retry, behind := r.writes.Behind(cluster); behind {
		// The cache has not caught up with this controller's last write of the Cluster: the event of the
		// newer version brings it back (let through even when it changes the status only).
		return retry, nil
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
	if perr := r.patchTopologyReconciled(ctx, req.NamespacedName, s); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if s.requeueAfter > 0 {
		res = reconciler.LowestNonZero(res, ctrl.Result{RequeueAfter: s.requeueAfter})
	}
	return res, err
}

// conditionWriteAttempts bounds how often patchTopologyReconciled writes the condition.
const conditionWriteAttempts = 3

// patchTopologyReconciled writes the Cluster's TopologyReconciled condition, the only part of its status
// that is this controller's. The Cluster controller writes the rest of the status, often at the same time
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

func (r *Reconciler) reconcile(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ns, name := s.cluster.GetClassKey()
	class := &clusterv1.ClusterClass{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("ClusterClass %s/%s does not exist", ns, name)
		}
		return ctrl.Result{}, fmt.Errorf("getting ClusterClass %s/%s: %w", ns, name, err)
	}
	s.class = class
	if class.Status.ObservedGeneration != class.Generation {
		s.classNotReconciled = true
		log.V(4).Info("Waiting for the ClusterClass to be reconciled")
		return ctrl.Result{}, nil
	}
	bp, err := r.blueprint(ctx, class)
	if err != nil {
		return ctrl.Result{}, err
	}
	cur, err := r.current(ctx, s.cluster, bp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cur.ControlPlane.Object == nil && cur.InfrastructureCluster == nil {
		s.creating = true
		if r.Hooks != nil {
			resp, err := r.Hooks.BeforeClusterCreate(ctx, s.cluster)
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("calling the BeforeClusterCreate hook: %w", err)
			}
			if resp.Blocking() {
				s.blockingHook, s.hookMessage, s.requeueAfter = "BeforeClusterCreate", resp.Message, resp.RetryAfter
				return ctrl.Result{}, nil
			}
		}
	}
	if r.Hooks != nil {
		cur.AfterControlPlaneUpgradePending = r.Hooks.AfterControlPlaneUpgradePending(s.cluster)
	}
	opts := topology.Options{ExternalPatcher: r.ExternalPatcher}
	if r.Hooks != nil {
		opts.UpgradeHooks = r.Hooks
	}
	desired, err := topology.Compute(ctx, bp, cur, opts)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("computing the desired state: %w", err)
	}
	s.desired = desired
	if desired.Upgrade.BlockingHook != "" {
		s.blockingHook, s.hookMessage, s.requeueAfter = desired.Upgrade.BlockingHook, desired.Upgrade.HookMessage, desired.Upgrade.HookRetryAfter
	}
	if err := r.apply(ctx, s, cur, desired); err != nil {
		return ctrl.Result{}, err
	}
	if r.Hooks != nil {
		if err := r.Hooks.AfterClusterReconciled(ctx, s.cluster, desired); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// get reads an object by reference; nil when it does not exist.
func (r *Reconciler) get(ctx context.Context, ref *corev1.ObjectReference, namespace string) (*unstructured.Unstructured, error) {
	if ref == nil {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	if ref.Namespace != "" {
		namespace = ref.Namespace
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	return obj, nil
}

// blueprint reads the templates of a class.
func (r *Reconciler) blueprint(ctx context.Context, class *clusterv1.ClusterClass) (*topology.Blueprint, error) {
	bp := &topology.Blueprint{ClusterClass: class, MachineDeployments: map[string]topology.MachineDeploymentTemplates{}}
	must := func(ref *corev1.ObjectReference) (*unstructured.Unstructured, error) {
		obj, err := r.get(ctx, ref, class.Namespace)
		if err != nil {
			return nil, err
		}
		if obj == nil && ref != nil {
			return nil, fmt.Errorf("%s %s referenced by ClusterClass %s does not exist", ref.Kind, ref.Name, class.Name)
		}
		return obj, nil
	}
	var err error
	if bp.InfrastructureClusterTemplate, err = must(class.Spec.Infrastructure.Ref); err != nil {
		return nil, err
	}
	if bp.ControlPlaneTemplate, err = must(class.Spec.ControlPlane.Ref); err != nil {
		return nil, err
	}
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		if bp.ControlPlaneMachineInfrastructureTemplate, err = must(mi.Ref); err != nil {
			return nil, err
		}
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		var t topology.MachineDeploymentTemplates
		if t.BootstrapTemplate, err = must(md.Template.Bootstrap.Ref); err != nil {
			return nil, err
		}
		if t.InfrastructureMachineTemplate, err = must(md.Template.Infrastructure.Ref); err != nil {
			return nil, err
		}
		bp.MachineDeployments[md.Class] = t
	}
	return bp, nil
}

// current reads the objects the topology of a Cluster manages.
func (r *Reconciler) current(ctx context.Context, cluster *clusterv1.Cluster, bp *topology.Blueprint) (*topology.Current, error) {
	cur := &topology.Current{Cluster: cluster, MachineDeployments: map[string]*topology.MachineDeploymentState{}}
	var err error
	if cur.InfrastructureCluster, err = r.get(ctx, cluster.Spec.InfrastructureRef, cluster.Namespace); err != nil {
		return nil, err
	}
	if cur.ControlPlane.Object, err = r.get(ctx, cluster.Spec.ControlPlaneRef, cluster.Namespace); err != nil {
		return nil, err
	}
	if cp := cur.ControlPlane.Object; cp != nil {
		if m, ok, _ := unstructured.NestedMap(cp.Object, "spec", "machineTemplate", "infrastructureRef"); ok {
			ref := &corev1.ObjectReference{}
			ref.APIVersion, _ = m["apiVersion"].(string)
			ref.Kind, _ = m["kind"].(string)
			ref.Name, _ = m["name"].(string)
			if cur.ControlPlane.InfrastructureMachineTemplate, err = r.get(ctx, ref, cluster.Namespace); err != nil {
				return nil, err
			}
		}
		mhc := &clusterv1.MachineHealthCheck{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cp.GetName()}, mhc); err == nil {
			cur.ControlPlane.MachineHealthCheck = mhc
		} else if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	ofCluster := func(labels client.MatchingLabels) []client.ListOption {
		opts := []client.ListOption{client.InNamespace(cluster.Namespace), labels}
		if r.indexed {
			opts = append(opts, client.MatchingFields{reconciler.ClusterNameIndex: cluster.Name})
		}
		return opts
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, mds, ofCluster(client.MatchingLabels{
		clusterv1.ClusterNameLabel: cluster.Name, clusterv1.ClusterTopologyOwnedLabel: "",
	})...); err != nil {
		return nil, fmt.Errorf("listing MachineDeployments: %w", err)
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, ofCluster(client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name})...); err != nil {
		return nil, fmt.Errorf("listing Machines: %w", err)
	}
	for i := range mds.Items {
		md := &mds.Items[i]
		topoName, ok := md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel]
		if !ok {
			continue
		}
		st := &topology.MachineDeploymentState{Object: md}
		if st.BootstrapTemplate, err = r.get(ctx, md.Spec.Template.Spec.Bootstrap.ConfigRef, md.Namespace); err != nil {
			return nil, err
		}
		if st.InfrastructureMachineTemplate, err = r.get(ctx, &md.Spec.Template.Spec.InfrastructureRef, md.Namespace); err != nil {
			return nil, err
		}
		mhc := &clusterv1.MachineHealthCheck{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: md.Namespace, Name: md.Name}, mhc); err == nil {
			st.MachineHealthCheck = mhc
		} else if !apierrors.IsNotFound(err) {
			return nil, err
		}
		st.Upgrading = upgrading(md, machines.Items)
		cur.MachineDeployments[topoName] = st
	}
	return cur, nil
}

// upgrading reports whether some Machines of a MachineDeployment do not run its version yet.
func upgrading(md *clusterv1.MachineDeployment, machines []clusterv1.Machine) bool {
	if md.Spec.Template.Spec.Version == nil {
		return false
	}
	want := *md.Spec.Template.Spec.Version
	return slices.ContainsFunc(machines, func(m clusterv1.Machine) bool {
		return m.Labels[clusterv1.MachineDeploymentNameLabel] == md.Name && m.Spec.Version != nil && *m.Spec.Version != want
	})
}

package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/feature"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// DefaultTokenTTL is how long a bootstrap token is valid (--bootstrap-token-ttl), as upstream's.
const DefaultTokenTTL = 15 * time.Minute

// Defaults of the Reconciler's intervals.
const (
	defaultWaitInterval   = 30 * time.Second
	defaultConfigInterval = 20 * time.Second
)

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs;kubeadmconfigs/status;kubeadmconfigs/finalizers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status;machines;machines/status;machinepools;machinepools/status,verbs=get;list;watch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=kubeadmcontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles KubeadmConfigs.
type Reconciler struct {
	// Client is the manager's client (Secrets labelled with a cluster name are read from its cache, other
	// Secrets and ConfigMaps from the API server).
	Client client.Client
	// APIReader, when set, reads a KubeadmConfig from the API server before its data is rendered, so that
	// a cache that has not seen the last render yet does not render it again.
	APIReader client.Reader
	// SecretCache, when set, is the manager's cache, which holds the Secrets labelled with a cluster name
	// (controllermanager.CacheOptions): the bootstrap data Secrets the controller writes are looked up
	// there only, so that a KubeadmConfig whose data Secret does not exist yet costs no request to the API
	// server (the Client would read a Secret the cache does not have from the API server).
	SecretCache client.Reader
	// ClusterCache reaches the workload clusters, where bootstrap tokens are created.
	ClusterCache *clustercache.ClusterCache
	// WatchFilter is the value of --watch-filter; "" reconciles every KubeadmConfig.
	WatchFilter string
	// TokenTTL is how long the bootstrap tokens of joining Machines are valid (DefaultTokenTTL when zero);
	// they are refreshed until the Machine has a Node.
	TokenTTL time.Duration
	// WaitInterval is how soon a KubeadmConfig waiting for the control plane is looked at again (30s).
	WaitInterval time.Duration
	// ConfigInterval is how soon a KubeadmConfig whose bootstrap data cannot be generated because of its
	// configuration (a missing Secret...) is looked at again (20s).
	ConfigInterval time.Duration
	// Now is the clock of token expirations; time.Now when nil.
	Now func() time.Time
	// FeatureGates are the provider's --feature-gates: spec.format ignition needs
	// KubeadmBootstrapFormatIgnition (off by default, as upstream).
	FeatureGates *feature.Gates

	// writes are the versions of KubeadmConfigs this controller's writes replaced.
	writes patch.Writes
}

// SetupWithManager adds the controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("the KubeadmConfig controller needs a Client and a ClusterCache")
	}
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &clusterv1.Machine{}, &clusterv1.MachinePool{}); err != nil {
		return err
	}
	if r.TokenTTL == 0 {
		r.TokenTTL = DefaultTokenTTL
	}
	if r.WaitInterval == 0 {
		r.WaitInterval = defaultWaitInterval
	}
	if r.ConfigInterval == 0 {
		r.ConfigInterval = defaultConfigInterval
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	_, err := ctrl.NewControllerManagedBy(mgr).
		Named("kubeadmconfig").
		For(&bootstrapv1.KubeadmConfig{}, builder.WithPredicates(r.writes.LetThroughAwaited(reconciler.NotOwnStatus()))).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToConfig), builder.WithPredicates(ownerChangesForConfigs())).
		Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(machinePoolToConfig), builder.WithPredicates(ownerChangesForConfigs())).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConfigs),
			builder.WithPredicates(clusterChangesForConfigs())).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.clusterToConfigs)).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Build(reconciler.Guarded(r.Client, &r.writes, r))
	if err != nil {
		return fmt.Errorf("creating the KubeadmConfig controller: %w", err)
	}
	return nil
}

// isKubeadmConfig reports whether a bootstrap configRef points at a KubeadmConfig.
func isKubeadmConfig(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == bootstrapv1.GroupVersion.Group && kind == "KubeadmConfig"
}

// machineToConfig maps a Machine to its KubeadmConfig.
func machineToConfig(_ context.Context, obj client.Object) []reconcile.Request {
	m, ok := obj.(*clusterv1.Machine)
	if !ok || m.Spec.Bootstrap.ConfigRef == nil || !isKubeadmConfig(m.Spec.Bootstrap.ConfigRef.APIVersion, m.Spec.Bootstrap.ConfigRef.Kind) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}}}
}

// machinePoolToConfig maps a MachinePool to its KubeadmConfig.
func machinePoolToConfig(_ context.Context, obj client.Object) []reconcile.Request {
	mp, ok := obj.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	ref := mp.Spec.Template.Spec.Bootstrap.ConfigRef
	if ref == nil || !isKubeadmConfig(ref.APIVersion, ref.Kind) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: mp.Namespace, Name: ref.Name}}}
}

// clusterToConfigs maps a Cluster to the KubeadmConfigs of its Machines and MachinePools.
func (r *Reconciler) clusterToConfigs(ctx context.Context, obj client.Object) []reconcile.Request {
	inCluster := []client.ListOption{client.InNamespace(obj.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: obj.GetName()}}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, inCluster...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the Machines of a Cluster", "Cluster", klog.KObj(obj))
		return nil
	}
	var out []reconcile.Request
	for i := range machines.Items {
		out = append(out, machineToConfig(ctx, &machines.Items[i])...)
	}
	pools := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, pools, inCluster...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePools of a Cluster", "Cluster", klog.KObj(obj))
		return out
	}
	for i := range pools.Items {
		out = append(out, machinePoolToConfig(ctx, &pools.Items[i])...)
	}
	return out
}

// clusterChangesForConfigs lets through the Cluster events a KubeadmConfig reacts to: creation, pause and
// resume, infrastructure readiness, control plane initialization and the control plane endpoint.
func clusterChangesForConfigs() predicate.Predicate {
	return reconciler.ClusterUpdates(func(old, updated *clusterv1.Cluster) bool {
		return old.Spec.Paused != updated.Spec.Paused ||
			old.Status.InfrastructureReady != updated.Status.InfrastructureReady ||
			controlPlaneInitialized(old) != controlPlaneInitialized(updated) ||
			old.Spec.ControlPlaneEndpoint != updated.Spec.ControlPlaneEndpoint
	})
}

// ownerChangesForConfigs lets through the Machine and MachinePool changes a KubeadmConfig reads: the spec
// (version, bootstrap data Secret, replicas), labels and annotations, deletion, status.infrastructureReady
// and the Nodes that joined. The other status changes, which the core and the control plane provider
// write many times while a Machine is created, are not.
func ownerChangesForConfigs() predicate.Predicate {
	return reconciler.SpecOrMetadataChanged(
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			switch old := e.ObjectOld.(type) {
			case *clusterv1.Machine:
				updated, ok := e.ObjectNew.(*clusterv1.Machine)
				return !ok || old.Status.InfrastructureReady != updated.Status.InfrastructureReady || (old.Status.NodeRef == nil) != (updated.Status.NodeRef == nil)
			case *clusterv1.MachinePool:
				updated, ok := e.ObjectNew.(*clusterv1.MachinePool)
				return !ok || old.Status.InfrastructureReady != updated.Status.InfrastructureReady || len(old.Status.NodeRefs) != len(updated.Status.NodeRefs)
			}
			return true
		}})
}

// controlPlaneInitialized reports whether the Cluster's control plane accepts requests, so that Machines
// may join it.
func controlPlaneInitialized(c *clusterv1.Cluster) bool {
	return c.Status.ControlPlaneReady || conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition)
}

// Reconcile renders a KubeadmConfig's bootstrap data once its Machine and Cluster allow it.
func (r *Reconciler) Reconcile(ctx context.Context, config *bootstrapv1.KubeadmConfig) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	owner, err := getOwner(ctx, r.Client, config)
	if err != nil {
		return ctrl.Result{}, err
	}
	if owner == nil {
		log.V(1).Info("Waiting for a Machine or a MachinePool to own the KubeadmConfig")
		return ctrl.Result{}, nil
	}
	log = log.WithValues(owner.kind, klog.KObj(owner.obj), "Cluster", klog.KRef(config.Namespace, owner.clusterName))
	ctx = ctrl.LoggerInto(ctx, log)
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: owner.clusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Waiting for the " + owner.kind + "'s Cluster to exist")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	s := &scope{config: config, owner: owner, cluster: cluster}
	helper := patch.NewHelper(config, r.Client, patch.WithWrites(&r.writes))
	defer func() {
		setStatus(config, s.facts)
		if reterr == nil && !s.facts.paused {
			config.Status.ObservedGeneration = config.Generation
		}
		if err := helper.Patch(ctx, config); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()

	if reconciler.IsPaused(cluster, config) {
		s.facts.paused = true
		log.V(1).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	if !config.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, s)
}

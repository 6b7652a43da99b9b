// Package localmachinepool is the local provider's LocalMachinePool controller: the infrastructure of a
// MachinePool, one simulated Node per replica of the MachinePool, run by the backend in the workload
// cluster of the Cluster's LocalCluster.
//
// Instances are named <pool>-<index> (index 0 to replicas-1), their Nodes too, with the provider ID
// local://<namespace>/<cluster>/<instance>. Scaling up adds the next indexes; scaling down removes the
// highest ones (their Nodes are deleted). spec.providerIDList lists the instances whose Node is
// registered, in index order, and status.replicas counts them; status.ready (and
// status.initialization.provisioned) become true once every instance was registered and stay true. The
// Nodes get the labels and taints of the bootstrap data's nodeRegistration; the
// local.infrastructure.cluster.x-k8s.io/node-ready annotation sets their Ready condition. Deleting the
// LocalMachinePool removes every instance.
package localmachinepool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Reconciler reconciles LocalMachinePools.
type Reconciler struct {
	Client      client.Client // the manager's (cached) client
	WatchFilter string        // value of --watch-filter; "" = everything

	// Backend runs the instances' Nodes.
	Backend backend.Backend
	// RetryInterval is how soon a pool waiting for its control plane is looked at again;
	// backend.RetryInterval when zero.
	RetryInterval time.Duration
}

// SetupWithManager builds the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	// Lists of one Cluster's objects by the cluster-name label are answered from this index (see
	// controllermanager.NewCache).
	if err := reconciler.IndexByClusterName(ctx, mgr.GetFieldIndexer(), &infrav1.LocalMachinePool{}); err != nil {
		return err
	}
	if r.RetryInterval == 0 {
		r.RetryInterval = backend.RetryInterval
	}
	watchFilter := reconciler.HasWatchLabel(r.WatchFilter)
	return ctrl.NewControllerManagedBy(mgr).
		Named("localmachinepool").
		WithOptions(options).
		For(&infrav1.LocalMachinePool{}, builder.WithPredicates(watchFilter)).
		Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(machinePoolToLocalMachinePool), builder.WithPredicates(watchFilter)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToPools), builder.WithPredicates(watchFilter)).
		WatchesRawSource(backend.Changes(r.Backend, handler.EnqueueRequestsFromMapFunc(r.localClusterToPools))).
		Complete(reconciler.RequeueOnConflict(r))
}

// machinePoolToLocalMachinePool maps a MachinePool to the LocalMachinePool of its infrastructureRef.
func machinePoolToLocalMachinePool(_ context.Context, o client.Object) []reconcile.Request {
	mp, ok := o.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	ref := mp.Spec.Template.Spec.InfrastructureRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != infrav1.GroupVersion.Group || ref.Kind != "LocalMachinePool" || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: mp.Namespace, Name: ref.Name}}}
}

// clusterToPools maps a Cluster to the LocalMachinePools labelled with its name.
func (r *Reconciler) clusterToPools(ctx context.Context, o client.Object) []reconcile.Request {
	return r.poolsOf(ctx, o.GetNamespace(), o.GetName())
}

// localClusterToPools maps a backend notification, which names a LocalCluster, to the pools of its Cluster.
func (r *Reconciler) localClusterToPools(ctx context.Context, o client.Object) []reconcile.Request {
	lc := &infrav1.LocalCluster{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(o), lc); err != nil {
		return nil
	}
	for _, ref := range lc.OwnerReferences {
		if reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, "Cluster") {
			return r.poolsOf(ctx, lc.Namespace, ref.Name)
		}
	}
	return nil
}

func (r *Reconciler) poolsOf(ctx context.Context, namespace, clusterName string) []reconcile.Request {
	list := &infrav1.LocalMachinePoolList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the LocalMachinePools of a Cluster", "Cluster", klog.KRef(namespace, clusterName))
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// scope is what one reconcile works on.
type scope struct {
	pool    *infrav1.LocalMachinePool
	mp      *clusterv1.MachinePool // nil only while deleting
	cluster *clusterv1.Cluster     // nil only while deleting
	facts   facts
}

// Reconcile reconciles one LocalMachinePool.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	pool := &infrav1.LocalMachinePool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	mp := &clusterv1.MachinePool{}
	found, err := reconciler.GetOwner(ctx, r.Client, pool, "MachinePool", mp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found {
		mp = nil
		if pool.DeletionTimestamp.IsZero() {
			log.Info("Waiting for the MachinePool controller to set an owner reference on the LocalMachinePool")
			return ctrl.Result{}, nil
		}
	}
	var cluster *clusterv1.Cluster
	if mp != nil {
		log = log.WithValues("MachinePool", klog.KObj(mp), "Cluster", klog.KRef(pool.Namespace, mp.Spec.ClusterName))
		cluster = &clusterv1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: mp.Spec.ClusterName}, cluster); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			cluster = nil
			if pool.DeletionTimestamp.IsZero() {
				log.Info("Waiting for the MachinePool's Cluster to exist")
				return ctrl.Result{}, nil
			}
		}
	}
	ctx = ctrl.LoggerInto(ctx, log)

	s := &scope{pool: pool, mp: mp, cluster: cluster}
	helper := patch.NewHelper(pool, r.Client)
	defer func() {
		setStatus(pool, s.facts)
		if err := helper.Patch(ctx, pool); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if reconciler.IsDeletedForMove(pool) {
		// The instances belong to the management cluster the pool moved to.
		controllerutil.RemoveFinalizer(pool, infrav1.LocalMachinePoolFinalizer)
		return ctrl.Result{}, nil
	}
	if reconciler.IsPaused(cluster, pool) {
		s.facts.paused = true
		return ctrl.Result{}, nil
	}
	if !pool.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// instanceName is the name of the backend machine (and Node) of an instance.
func instanceName(pool string, i int) string { return pool + "-" + strconv.Itoa(i) }

// providerID is the provider ID of an instance: local://<namespace>/<cluster>/<instance>.
func providerID(namespace, clusterName, instance string) string {
	return infrav1.ProviderIDPrefix + namespace + "/" + clusterName + "/" + instance
}

// instanceIndex returns the index of the instance a provider ID of the pool names.
func instanceIndex(pool, id string) (int, bool) {
	name := id[strings.LastIndex(id, "/")+1:]
	suffix, ok := strings.CutPrefix(name, pool+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(suffix)
	return i, err == nil && i >= 0
}

func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	pool, mp, cluster := s.pool, s.mp, s.cluster
	controllerutil.AddFinalizer(pool, infrav1.LocalMachinePoolFinalizer)
	if !cluster.Status.InfrastructureReady {
		s.facts.waiting = infrav1.WaitingForClusterInfrastructureReason
		return ctrl.Result{}, nil
	}
	dataSecret := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	if dataSecret == "" {
		s.facts.waiting = infrav1.WaitingForBootstrapDataReason
		return ctrl.Result{}, nil
	}
	key, ok := backend.ClusterOf(cluster)
	if !ok {
		s.facts.notLocal = true
		return ctrl.Result{}, nil
	}
	node, err := r.nodeRegistration(ctx, pool.Namespace, dataSecret)
	if err != nil {
		if nodeboot.IsInvalid(err) || errors.Is(err, errInvalid) {
			s.facts.bootstrapInvalid = err.Error()
			return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
		}
		return ctrl.Result{}, err
	}
	desired := int(ptr.Deref(mp.Spec.Replicas, 1))

	// Scale down: the instances of the highest indexes go, with their Nodes.
	var errs []error
	for _, id := range pool.Spec.ProviderIDList {
		i, ok := instanceIndex(pool.Name, id)
		if !ok || i < desired {
			continue
		}
		log.Info("Removing an instance of the pool", "instance", instanceName(pool.Name, i))
		if err := r.Backend.DeleteMachine(ctx, key, instanceName(pool.Name, i)); err != nil {
			if errors.Is(err, backend.ErrClusterNotReady) {
				s.facts.waiting = infrav1.WaitingForControlPlaneReason
				return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
			}
			errs = append(errs, fmt.Errorf("removing instance %s: %w", instanceName(pool.Name, i), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.facts.registrationFailed = true
		return ctrl.Result{}, err
	}

	var ids []string
	for i := range desired {
		name := instanceName(pool.Name, i)
		id := providerID(pool.Namespace, cluster.Name, name)
		status, err := r.Backend.EnsureMachine(ctx, key, backend.Machine{
			Name: name, NodeName: name, ProviderID: id, Version: ptr.Deref(mp.Spec.Template.Spec.Version, ""),
			Labels: node.Labels, Taints: node.Taints, DefaultTaints: node.DefaultTaints,
			Ready: pool.Annotations[infrav1.NodeReadyAnnotation],
		})
		if errors.Is(err, backend.ErrClusterNotReady) {
			s.facts.waiting = infrav1.WaitingForControlPlaneReason
			break
		}
		if err != nil {
			s.facts.registrationFailed = true
			errs = append(errs, fmt.Errorf("running instance %s: %w", name, err))
			continue
		}
		if status.NodeRegistered {
			ids = append(ids, id)
		}
	}
	pool.Spec.ProviderIDList = ids
	s.facts.registered, s.facts.desired, s.facts.counted = len(ids), desired, true
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(ids) < desired {
		if s.facts.waiting == "" {
			s.facts.waiting = infrav1.WaitingForControlPlaneReason
		}
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	}
	return ctrl.Result{}, nil
}

// errInvalid wraps what makes the pool's bootstrap data unusable.
var errInvalid = errors.New("invalid bootstrap data")

// nodeRegistration reads the labels and taints the instances' Nodes get from the bootstrap data.
func (r *Reconciler) nodeRegistration(ctx context.Context, namespace, name string) (nodeboot.Node, error) {
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nodeboot.Node{}, fmt.Errorf("getting the bootstrap data Secret %s: %w", name, err)
	}
	value, ok := secret.Data["value"]
	if !ok {
		return nodeboot.Node{}, fmt.Errorf("%w: Secret %s has no value key", errInvalid, name)
	}
	d, err := nodeboot.Parse(string(secret.Data["format"]), value)
	if err != nil {
		return nodeboot.Node{}, fmt.Errorf("%w: %w", errInvalid, err)
	}
	if d.ControlPlane() {
		return nodeboot.Node{}, fmt.Errorf("%w: the data of a MachinePool must join worker Nodes, not run a control plane", errInvalid)
	}
	node, err := d.Node()
	if err != nil {
		return nodeboot.Node{}, fmt.Errorf("%w: %w", errInvalid, err)
	}
	return node, nil
}

// reconcileDelete removes every instance of the pool, unless the workload cluster goes as well.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	s.facts.deleting = true
	if !controllerutil.ContainsFinalizer(pool, infrav1.LocalMachinePoolFinalizer) {
		return ctrl.Result{}, nil
	}
	if s.cluster != nil {
		key, live, err := backend.LiveClusterOf(ctx, r.Client, s.cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		// A LocalCluster being deleted (or gone) removes every instance itself.
		for _, id := range pool.Spec.ProviderIDList {
			i, ok := instanceIndex(pool.Name, id)
			if !live || !ok {
				continue
			}
			ctrl.LoggerFrom(ctx).Info("Removing an instance of the pool", "instance", instanceName(pool.Name, i))
			err := r.Backend.DeleteMachine(ctx, key, instanceName(pool.Name, i))
			if errors.Is(err, backend.ErrClusterNotReady) {
				s.facts.waiting = infrav1.WaitingForControlPlaneReason
				return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
			}
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("removing instance %s: %w", instanceName(pool.Name, i), err)
			}
		}
	}
	controllerutil.RemoveFinalizer(pool, infrav1.LocalMachinePoolFinalizer)
	return ctrl.Result{}, nil
}

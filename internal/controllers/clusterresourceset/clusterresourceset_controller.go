package clusterresourceset

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

const (
	// conflictRequeue is how soon a ClusterResourceSet whose binding another ClusterResourceSet changed at
	// the same time is retried: without backoff, as upstream, so that sets sharing Clusters settle quickly.
	conflictRequeue = 100 * time.Millisecond
	// defaultRemoteConnectionRetryInterval is when a ClusterResourceSet is retried after a workload cluster
	// could not be reached; the clustercache also requeues it when the connection comes up.
	defaultRemoteConnectionRetryInterval = time.Minute
)

// +kubebuilder:rbac:groups=addons.cluster.x-k8s.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=configmaps;secrets,verbs=get;list;watch;patch;update

// Reconciler reconciles ClusterResourceSets.
type Reconciler struct {
	// Client is the manager's client (Secrets and ConfigMaps read from the API server).
	Client client.Client
	// ClusterCache reaches the workload clusters.
	ClusterCache *clustercache.ClusterCache
	// WatchFilter is the value of --watch-filter; "" reconciles every ClusterResourceSet.
	WatchFilter string
	// RemoteConnectionRetryInterval is when a ClusterResourceSet is retried after a workload cluster could
	// not be reached (1m).
	RemoteConnectionRetryInterval time.Duration

	// now returns the current time; time.Now when nil.
	now func() time.Time
}

// SetupWithManager adds the ClusterResourceSet controller to mgr.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("the ClusterResourceSet controller needs a Client and a ClusterCache")
	}
	resourceHandler := handler.EnqueueRequestsFromMapFunc(r.resourceToClusterResourceSets)
	err := ctrl.NewControllerManagedBy(mgr).
		Named("clusterresourceset").
		For(&addonsv1.ClusterResourceSet{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToClusterResourceSets),
			builder.WithPredicates(clusterChanges())).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.clusterToClusterResourceSets)).
		// Metadata only: the data is read from the API server when a set is reconciled.
		WatchesMetadata(&corev1.ConfigMap{}, resourceHandler, builder.WithPredicates(resourceChanges())).
		WatchesMetadata(&corev1.Secret{}, resourceHandler, builder.WithPredicates(resourceChanges())).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("creating the ClusterResourceSet controller: %w", err)
	}
	return nil
}

// clusterChanges lets through the Cluster events that change which sets apply to which Clusters: creation,
// label changes and the start of deletion.
func clusterChanges() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !labels.Equals(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
				e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}

// resourceChanges lets through the creation of a Secret or ConfigMap and the changes of its content
// (resourceVersion); deletions change nothing a ClusterResourceSet applied.
func resourceChanges() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// clusterToClusterResourceSets maps a Cluster to the sets that select it and to those its binding lists
// (which must remove themselves when the Cluster stopped matching).
func (r *Reconciler) clusterToClusterResourceSets(ctx context.Context, obj client.Object) []reconcile.Request {
	log := ctrl.LoggerFrom(ctx)
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), cluster); err != nil {
		if !apierrors.IsNotFound(err) {
			log.Error(err, "Reading a Cluster to find its ClusterResourceSets", "Cluster", klog.KObj(obj))
		}
		return nil
	}
	sets := &addonsv1.ClusterResourceSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(cluster.Namespace)); err != nil {
		log.Error(err, "Listing the ClusterResourceSets of a Cluster", "Cluster", klog.KObj(cluster))
		return nil
	}
	names := map[string]bool{}
	for i := range sets.Items {
		if selects(&sets.Items[i], cluster) {
			names[sets.Items[i].Name] = true
		}
	}
	binding := &addonsv1.ClusterResourceSetBinding{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(cluster), binding); err == nil {
		for _, b := range binding.Spec.Bindings {
			names[b.ClusterResourceSetName] = true
		}
	}
	out := make([]reconcile.Request, 0, len(names))
	for name := range names {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: cluster.Namespace, Name: name}})
	}
	return out
}

// selects reports whether a set selects a Cluster. An empty selector selects nothing.
func selects(crs *addonsv1.ClusterResourceSet, cluster *clusterv1.Cluster) bool {
	selector, err := metav1.LabelSelectorAsSelector(&crs.Spec.ClusterSelector)
	if err != nil || selector.Empty() {
		return false
	}
	return selector.Matches(labels.Set(cluster.Labels))
}

// resourceToClusterResourceSets maps a Secret or ConfigMap to the sets that own it or name it.
func (r *Reconciler) resourceToClusterResourceSets(ctx context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range obj.GetOwnerReferences() {
		if reconciler.RefersTo(ref, addonsv1.GroupVersion.Group, "ClusterResourceSet") {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}})
		}
	}
	if len(out) > 0 {
		return out
	}
	// Metadata events carry their kind; an object without one matches resources of either kind.
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	sets := &addonsv1.ClusterResourceSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the ClusterResourceSets of a resource", kind, klog.KObj(obj))
		return nil
	}
	for i := range sets.Items {
		for _, res := range sets.Items[i].Spec.Resources {
			if (kind == "" || res.Kind == kind) && res.Name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sets.Items[i])})
				break
			}
		}
	}
	return out
}

// Reconcile applies a ClusterResourceSet to the Clusters it selects, or removes it from its bindings when it
// is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	crs := &addonsv1.ClusterResourceSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, crs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if added, err := reconciler.AddFinalizerFirst(ctx, r.Client, crs, addonsv1.ClusterResourceSetFinalizer); added {
		return ctrl.Result{}, err
	}

	helper := patch.NewHelper(crs, r.Client)
	s := &scope{crs: crs}
	paused := reconciler.IsPaused(nil, crs)
	defer func() {
		conditions.SetV1Beta2(crs, reconciler.PausedCondition(nil, crs, "ClusterResourceSet", paused))
		if !paused {
			setStatus(s)
		}
		if err := helper.Patch(ctx, crs); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if paused {
		ctrl.LoggerFrom(ctx).V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}

	if !crs.DeletionTimestamp.IsZero() {
		if err := r.removeFromBindings(ctx, crs, nil); err != nil {
			return ctrl.Result{}, err
		}
		controllerutil.RemoveFinalizer(crs, addonsv1.ClusterResourceSetFinalizer)
		return ctrl.Result{}, nil
	}

	clusters, err := r.selectedClusters(ctx, crs)
	if err != nil {
		s.fail(failure{reason: addonsv1.ClusterMatchFailedReason, severity: clusterv1.ConditionSeverityWarning,
			v2Reason: addonsv1.ResourcesAppliedInternalErrorV1Beta2Reason, message: err.Error()})
		return ctrl.Result{}, err
	}
	selected := map[string]bool{}
	for _, c := range clusters {
		selected[c.Name] = true
	}
	if err := r.removeFromBindings(ctx, crs, selected); err != nil {
		return conflictResult(err)
	}

	resources, err := r.getResources(ctx, s)
	if err != nil {
		// As upstream: nothing is applied while a resource cannot be used (a missing one is skipped).
		return ctrl.Result{}, err
	}
	var (
		errs []error
		res  ctrl.Result
	)
	for _, cluster := range clusters {
		err := r.applyToCluster(ctx, s, cluster, resources)
		switch {
		case errors.Is(err, clustercache.ErrClusterNotConnected):
			res = reconciler.LowestNonZero(res, ctrl.Result{RequeueAfter: reconciler.OrDefault(r.RemoteConnectionRetryInterval, defaultRemoteConnectionRetryInterval)})
		case err != nil:
			errs = append(errs, err)
		default:
			s.applied++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return conflictResult(err)
	}
	return res, nil
}

// conflictResult turns a conflict on a binding into a quick retry, and returns other errors.
func conflictResult(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) || isOnlyConflicts(err) {
		return ctrl.Result{RequeueAfter: conflictRequeue}, nil
	}
	return ctrl.Result{}, err
}

func isOnlyConflicts(err error) bool {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	for _, e := range joined.Unwrap() {
		if !apierrors.IsConflict(e) && !isOnlyConflicts(e) {
			return false
		}
	}
	return len(joined.Unwrap()) > 0
}

// selectedClusters returns the Clusters of the set's namespace its selector matches, except those being
// deleted. An empty selector matches nothing.
func (r *Reconciler) selectedClusters(ctx context.Context, crs *addonsv1.ClusterResourceSet) ([]*clusterv1.Cluster, error) {
	selector, err := metav1.LabelSelectorAsSelector(&crs.Spec.ClusterSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.clusterSelector is not a valid label selector: %w", err)
	}
	if selector.Empty() {
		ctrl.LoggerFrom(ctx).Info("The ClusterResourceSet's selector is empty: it selects no Cluster")
		return nil, nil
	}
	list := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(crs.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing the Clusters of the selector: %w", err)
	}
	var out []*clusterv1.Cluster
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// getResources reads the set's resources and makes the set an owner of each (so that a change of the
// resource requeues it, and clusterctl move carries it along). A resource that does not exist is nil; the
// failures are recorded in s, and those other than a missing resource are returned.
func (r *Reconciler) getResources(ctx context.Context, s *scope) ([]*resource, error) {
	log := ctrl.LoggerFrom(ctx)
	crs := s.crs
	var errs []error
	out := make([]*resource, len(crs.Spec.Resources))
	for i, ref := range crs.Spec.Resources {
		res, err := getResource(ctx, r.Client, ref, crs.Namespace)
		switch {
		case errors.Is(err, errWrongSecretType):
			s.fail(failure{reason: addonsv1.WrongSecretTypeReason, severity: clusterv1.ConditionSeverityWarning,
				v2Reason: addonsv1.ResourcesAppliedWrongSecretTypeV1Beta2Reason, message: err.Error(),
				v2Message: fmt.Sprintf("Secret type of resource %s is not supported", ref.Name)})
			errs = append(errs, err)
			continue
		case err != nil:
			message := err.Error()
			if apierrors.IsNotFound(err) {
				message = fmt.Sprintf("%s %s not found in namespace %s", ref.Kind, ref.Name, crs.Namespace)
			}
			s.fail(failure{reason: addonsv1.RetrievingResourceFailedReason, severity: clusterv1.ConditionSeverityWarning,
				v2Reason: addonsv1.ResourcesAppliedInternalErrorV1Beta2Reason, message: message})
			log.Info("Cannot read a resource of the ClusterResourceSet", "problem", message)
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		if err := r.ensureOwnerRef(ctx, crs, ref.Kind, res.obj); err != nil {
			s.fail(failure{reason: addonsv1.RetrievingResourceFailedReason, severity: clusterv1.ConditionSeverityWarning,
				v2Reason: addonsv1.ResourcesAppliedInternalErrorV1Beta2Reason, message: err.Error()})
			errs = append(errs, err)
			continue
		}
		out[i] = res
	}
	return out, errors.Join(errs...)
}

// ensureOwnerRef adds the set to the ownerReferences of a resource (not as controller: several sets may
// share it).
func (r *Reconciler) ensureOwnerRef(ctx context.Context, crs *addonsv1.ClusterResourceSet, kind string, obj client.Object) error {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == crs.UID {
			return nil
		}
	}
	before := obj.DeepCopyObject().(client.Object)
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: addonsv1.GroupVersion.String(), Kind: "ClusterResourceSet", Name: crs.Name, UID: crs.UID,
	}))
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding ClusterResourceSet %s as an owner of %s %s: %w", crs.Name, kind, obj.GetName(), err)
	}
	return nil
}

func (r *Reconciler) clock() time.Time { return reconciler.Clock(r.now) }

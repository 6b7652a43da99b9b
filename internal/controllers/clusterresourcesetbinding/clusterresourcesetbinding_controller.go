// Package clusterresourcesetbinding is the ClusterResourceSetBinding controller: it deletes the binding of
// a Cluster that is being deleted or is gone, and moves the Cluster reference of bindings written before
// spec.clusterName existed (a Cluster ownerReference) into spec.clusterName, as upstream Cluster API v1.10's
// internal/controllers/clusterresourcesetbinding does.
package clusterresourcesetbinding

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// Reconciler reconciles ClusterResourceSetBindings.
type Reconciler struct {
	// Client is the manager's client.
	Client client.Client
	// WatchFilter is the value of --watch-filter; "" reconciles every binding.
	WatchFilter string
}

// SetupWithManager adds the ClusterResourceSetBinding controller to mgr.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil {
		return errors.New("the ClusterResourceSetBinding controller needs a Client")
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("clusterresourcesetbinding").
		For(&addonsv1.ClusterResourceSetBinding{}).
		// A binding has its Cluster's name.
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
		})).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("creating the ClusterResourceSetBinding controller: %w", err)
	}
	return nil
}

// Reconcile deletes a binding whose Cluster is gone or being deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	binding := &addonsv1.ClusterResourceSetBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, binding); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !binding.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if err := r.updateClusterReference(ctx, binding); err != nil {
		return ctrl.Result{}, err
	}
	cluster := &clusterv1.Cluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: binding.Namespace, Name: binding.Spec.ClusterName}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		log.Info("Deleting the ClusterResourceSetBinding: its Cluster no longer exists", "Cluster", binding.Spec.ClusterName)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", binding.Spec.ClusterName, err)
	case !cluster.DeletionTimestamp.IsZero():
		if reconciler.IsDeletedForMove(cluster) {
			// clusterctl move took the Cluster and its binding to another management cluster: the binding
			// goes with the source's objects, not because the Cluster is deleted.
			return ctrl.Result{}, nil
		}
		log.Info("Deleting the ClusterResourceSetBinding: its Cluster is being deleted", "Cluster", binding.Spec.ClusterName)
	default:
		return ctrl.Result{}, nil
	}
	if err := r.Client.Delete(ctx, binding); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("deleting ClusterResourceSetBinding %s: %w", binding.Name, err)
	}
	return ctrl.Result{}, nil
}

// updateClusterReference fills spec.clusterName from a Cluster ownerReference (bindings written before
// Cluster API v1.4) and removes that ownerReference, so that the binding does not go with the Cluster by
// garbage collection before the ClusterResourceSets are done with it.
func (r *Reconciler) updateClusterReference(ctx context.Context, binding *addonsv1.ClusterResourceSetBinding) error {
	h := patch.NewHelper(binding, r.Client)
	isCluster := func(ref metav1.OwnerReference) bool {
		return reconciler.RefersTo(ref, clusterv1.GroupVersion.Group, "Cluster")
	}
	if binding.Spec.ClusterName == "" {
		i := slices.IndexFunc(binding.OwnerReferences, isCluster)
		if i < 0 || binding.OwnerReferences[i].Name == "" {
			return fmt.Errorf("ClusterResourceSetBinding %s has no spec.clusterName and no Cluster ownerReference: set spec.clusterName to the name of its Cluster", binding.Name)
		}
		binding.Spec.ClusterName = binding.OwnerReferences[i].Name
	}
	binding.OwnerReferences = slices.DeleteFunc(binding.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return isCluster(ref) && ref.Name == binding.Spec.ClusterName
	})
	return h.Patch(ctx, binding)
}

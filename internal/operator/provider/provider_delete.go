package provider

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/operator/deletion"
)

// reconcileDelete removes what the operator installed for a deleted provider (its components, keeping
// CRDs and the namespace as clusterctl delete does, and its inventory record), unless something still
// uses it: then the deletion waits, with a DeletionBlocked condition that names what uses it. The
// admission webhook refuses such deletions up front; this is the guard when it is not there.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (reconcile.Result, error) {
	p := s.provider
	if !controllerutil.ContainsFinalizer(p, operatorv1.ProviderFinalizer) {
		return reconcile.Result{}, nil
	}
	if err := deletion.Check(ctx, r.APIReader, p); err != nil {
		if blocked, ok := deletion.IsBlocked(err); ok {
			s.deletionBlocked = &fact{ok: true, reason: blocked.Reason, message: blocked.Message}
			return reconcile.Result{RequeueAfter: waitInterval}, nil
		}
		return reconcile.Result{}, err
	}
	s.deletionBlocked = bad("Deleting", "Nothing uses the provider: deleting its components")
	inventory, err := r.inventory(ctx, s)
	if err != nil {
		return reconcile.Result{}, err
	}
	if inventory != nil {
		ctrl.LoggerFrom(ctx).Info("Deleting", "provider", s.label, "version", inventory.Version, "namespace", p.GetNamespace())
		if err := r.Cluster.DeleteComponents(ctx, s.label, p.GetNamespace(), cluster.DeleteComponentsOptions{}); err != nil {
			s.deletionBlocked = bad(operatorv1.OldComponentsDeletionErrorReason, err.Error())
			return reconcile.Result{}, fmt.Errorf("deleting the components of %s: %w", s.label, err)
		}
		if err := r.Cluster.DeleteProvider(ctx, *inventory); err != nil {
			return reconcile.Result{}, err
		}
	}
	controllerutil.RemoveFinalizer(p, operatorv1.ProviderFinalizer)
	return reconcile.Result{}, nil
}

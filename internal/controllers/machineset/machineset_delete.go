package machineset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// reconcileDelete deletes the MachineSet's Machines and, once they are gone, removes its finalizer. Machine
// deletions reach the MachineSet through its watch, so it does not poll.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if len(s.machines) == 0 {
		if controllerutil.ContainsFinalizer(s.ms, clusterv1.MachineSetFinalizer) {
			log.Info("Removing the finalizer: every Machine is gone")
			controllerutil.RemoveFinalizer(s.ms, clusterv1.MachineSetFinalizer)
		}
		return ctrl.Result{}, nil
	}
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		log.Info("Deleting Machine (MachineSet is being deleted)", "Machine", klog.KObj(m))
		if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting Machine %s: %w", m.Name, err)
		}
	}
	log.V(2).Info("Waiting for Machines to be deleted", "count", len(s.machines))
	return ctrl.Result{}, nil
}

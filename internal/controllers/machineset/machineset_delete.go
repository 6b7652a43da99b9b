package machineset

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// reconcileDelete deletes the MachineSet's Machines and, once they are gone, removes its finalizer. Machine
// deletions reach the MachineSet through its watch, so it does not poll.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	return ctrl.Result{}, reconciler.DeleteDependents(ctx, r.Client, s.ms, clusterv1.MachineSetFinalizer,
		"MachineSet", "Machine", s.machines)
}

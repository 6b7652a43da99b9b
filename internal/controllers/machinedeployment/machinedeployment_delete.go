package machinedeployment

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// reconcileDelete deletes the MachineDeployment's MachineSets (which delete their Machines) and, once they
// are gone, removes its finalizer. MachineSet deletions reach the MachineDeployment through its watch.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	return ctrl.Result{}, reconciler.DeleteDependents(ctx, r.Client, s.md, clusterv1.MachineDeploymentFinalizer,
		"MachineDeployment", "MachineSet", s.machineSets)
}

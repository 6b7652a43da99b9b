package machinedeployment

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// reconcileDelete deletes the MachineDeployment's MachineSets (which delete their Machines) and, once they
// are gone, removes its finalizer. MachineSet deletions reach the MachineDeployment through its watch.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if len(s.machineSets) == 0 {
		if controllerutil.ContainsFinalizer(s.md, clusterv1.MachineDeploymentFinalizer) {
			log.Info("Removing the finalizer: every MachineSet is gone")
			controllerutil.RemoveFinalizer(s.md, clusterv1.MachineDeploymentFinalizer)
		}
		return ctrl.Result{}, nil
	}
	for _, ms := range s.machineSets {
		if !ms.DeletionTimestamp.IsZero() {
			continue
		}
		log.Info("Deleting MachineSet (MachineDeployment is being deleted)", "MachineSet", klog.KObj(ms))
		if err := r.Client.Delete(ctx, ms); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting MachineSet %s: %w", ms.Name, err)
		}
	}
	log.V(2).Info("Waiting for MachineSets to be deleted", "count", len(s.machineSets))
	return ctrl.Result{}, nil
}

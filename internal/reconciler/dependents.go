package reconciler

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// DeleteDependents is the deletion of an object that owns others (a MachineDeployment its MachineSets, a
// MachineSet its Machines): it deletes every dependent not being deleted yet and, once none is left,
// removes the owner's finalizer (the caller writes the owner). The dependents' deletions reach the owner
// through its watch, so nothing polls. ownerKind and dependentKind name the kinds in logs and errors.
func DeleteDependents[T client.Object](ctx context.Context, c client.Client, owner client.Object, finalizer, ownerKind, dependentKind string, dependents []T) error {
	log := ctrl.LoggerFrom(ctx)
	if len(dependents) == 0 {
		if controllerutil.RemoveFinalizer(owner, finalizer) {
			log.Info(fmt.Sprintf("Removing the finalizer: every %s is gone", dependentKind))
		}
		return nil
	}
	for _, d := range dependents {
		if !d.GetDeletionTimestamp().IsZero() {
			continue
		}
		log.Info(fmt.Sprintf("Deleting %s (%s is being deleted)", dependentKind, ownerKind), dependentKind, klog.KObj(d))
		if err := c.Delete(ctx, d); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", dependentKind, d.GetName(), err)
		}
	}
	log.V(2).Info(fmt.Sprintf("Waiting for %ss to be deleted", dependentKind), "count", len(dependents))
	return nil
}

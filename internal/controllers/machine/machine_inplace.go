package machine

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
)

// InPlaceUpdater performs the in-place update of a Machine: upstream's UpdateMachine Runtime hook, called
// while the Machine's owner has marked it (UpdateInProgressAnnotation and the hook pending).
type InPlaceUpdater interface {
	// UpdateMachine asks the update extension to bring the machine to the Machine's spec and to the spec of
	// infra and bootstrap (nil when the Machine has no bootstrap config). A retryAfter above zero means the
	// update is still in progress, message saying what it does; zero means it is complete.
	UpdateMachine(ctx context.Context, m *clusterv1.Machine, infra, bootstrap *unstructured.Unstructured) (retryAfter time.Duration, message string, err error)
}

// inPlaceUpdateInProgress reports whether an in-place update of m is in progress, as upstream counts it: from
// the moment its owner sets the annotation until the UpdateMachine hook is no longer pending.
func inPlaceUpdateInProgress(m *clusterv1.Machine) bool {
	_, marked := m.Annotations[clusterv1.UpdateInProgressAnnotation]
	return marked || hooks.IsPending(runtimehooksv1.UpdateMachine, m)
}

// reconcileInPlaceUpdate carries an in-place update of the Machine (InPlaceUpdates gate; nothing without
// an InPlaceUpdater): once its owner marked the Machine, its InfraMachine and its bootstrap config with
// UpdateInProgressAnnotation and the UpdateMachine hook pending, and the Machine runs (provisioned, with a
// Node), the hook is called until it completes; then the annotations and the pending hook go.
func (r *Reconciler) reconcileInPlaceUpdate(ctx context.Context, s *scope) (ctrl.Result, error) {
	if r.InPlaceUpdater == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	m := s.machine
	_, marked := m.Annotations[clusterv1.UpdateInProgressAnnotation]
	pending := hooks.IsPending(runtimehooksv1.UpdateMachine, m)
	switch {
	case !marked && pending:
		// The owner took the annotation away while the hook was pending: the update is over.
		log.Info("The in-place update annotation is gone but the UpdateMachine hook is still pending: cleaning up")
		return ctrl.Result{}, r.completeInPlaceUpdate(ctx, s)
	case !marked:
		return ctrl.Result{}, nil
	case !pending:
		log.Info("Machine marked for in-place update, waiting for its owner to mark the UpdateMachine hook pending")
		return ctrl.Result{}, nil
	case !m.Status.InfrastructureReady || !m.Status.BootstrapReady || m.Status.NodeRef == nil:
		log.V(4).Info("The Machine is not running yet: the in-place update waits")
		return ctrl.Result{}, nil
	case s.infra.obj == nil:
		s.updatingReason, s.updatingMessage = clusterv1.MachineInPlaceUpdateFailedV1Beta2Reason, "In-place update not possible: InfraMachine not found"
		return ctrl.Result{}, fmt.Errorf("in-place update failed: %s %s not found", m.Spec.InfrastructureRef.Kind, klog.KRef(m.Namespace, m.Spec.InfrastructureRef.Name))
	}
	if !hasUpdateInProgress(s.infra.obj) || (s.bootstrap.obj != nil && !hasUpdateInProgress(s.bootstrap.obj)) {
		log.Info("Waiting for the InfraMachine and the bootstrap config to be marked for the in-place update")
		return ctrl.Result{}, nil
	}

	retryAfter, message, err := r.InPlaceUpdater.UpdateMachine(ctx, m, s.infra.obj, s.bootstrap.obj)
	if err != nil {
		s.updatingReason, s.updatingMessage = clusterv1.MachineInPlaceUpdateFailedV1Beta2Reason, "UpdateMachine hook failed: please check controller logs for errors"
		return ctrl.Result{}, fmt.Errorf("in-place update failed: %w", err)
	}
	if retryAfter > 0 {
		s.updatingReason, s.updatingMessage = clusterv1.MachineInPlaceUpdatingV1Beta2Reason, "In-place update in progress"
		if message != "" {
			s.updatingMessage += ": " + message
		}
		return ctrl.Result{RequeueAfter: retryAfter}, nil
	}
	log.Info("UpdateMachine hook completed")
	return ctrl.Result{}, r.completeInPlaceUpdate(ctx, s)
}

func hasUpdateInProgress(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[clusterv1.UpdateInProgressAnnotation]
	return ok
}

// completeInPlaceUpdate removes UpdateInProgressAnnotation from the InfraMachine and the bootstrap config
// (written now), then from the Machine with the pending UpdateMachine hook (written with the Machine's
// status at the end of the reconcile).
func (r *Reconciler) completeInPlaceUpdate(ctx context.Context, s *scope) error {
	for _, obj := range []*unstructured.Unstructured{s.infra.obj, s.bootstrap.obj} {
		if obj == nil || !hasUpdateInProgress(obj) {
			continue
		}
		before := obj.DeepCopy()
		annotations := obj.GetAnnotations()
		delete(annotations, clusterv1.UpdateInProgressAnnotation)
		obj.SetAnnotations(annotations)
		if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("removing the %s annotation from %s %s: %w", clusterv1.UpdateInProgressAnnotation, obj.GetKind(), klog.KObj(obj), err)
		}
	}
	m := s.machine
	annotations := m.GetAnnotations()
	delete(annotations, clusterv1.UpdateInProgressAnnotation)
	m.SetAnnotations(annotations)
	hooks.MarkDone(m, runtimehooksv1.UpdateMachine)
	ctrl.LoggerFrom(ctx).Info("Completed the in-place update")
	return nil
}

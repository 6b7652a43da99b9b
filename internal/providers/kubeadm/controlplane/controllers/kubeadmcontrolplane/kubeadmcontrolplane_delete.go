package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// reconcileDelete deletes the control plane once the Cluster's workers are gone: every control plane
// Machine at once, without the kcp-cleanup hook (no etcd member removal: the whole etcd goes). A deletion by
// clusterctl move only releases the KubeadmControlPlane.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	r.etcdReads.forget(client.ObjectKeyFromObject(s.cluster))
	if reconciler.IsDeletedForMove(s.kcp) || len(s.machines) == 0 {
		s.deletingReason, s.deletingMessage = controlplanev1.KubeadmControlPlaneDeletingDeletionCompletedV1Beta2Reason, "Deletion completed"
		controllerutil.RemoveFinalizer(s.kcp, controlplanev1.KubeadmControlPlaneFinalizer)
		return ctrl.Result{}, nil
	}
	all := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, all, client.InNamespace(s.cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		s.deletingReason, s.deletingMessage = controlplanev1.KubeadmControlPlaneDeletingInternalErrorV1Beta2Reason, "Please check controller logs for errors"
		return ctrl.Result{}, err
	}
	var workers []string
	for _, m := range all.Items {
		if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; !ok {
			workers = append(workers, m.Name)
		}
	}
	if len(workers) > 0 {
		sort.Strings(workers)
		log.Info("Waiting for worker nodes to be deleted first")
		s.deletingReason = controlplanev1.KubeadmControlPlaneDeletingWaitingForWorkersDeletionV1Beta2Reason
		s.deletingMessage = "KubeadmControlPlane deletion blocked because following objects still exist:\n* Machines: " + listNames(workers)
		return ctrl.Result{RequeueAfter: deletingRequeueAfter}, nil
	}
	var errs []error
	for _, m := range s.all() {
		if err := r.removePreTerminateHook(ctx, s, m); err != nil {
			errs = append(errs, err)
			continue
		}
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting control plane Machine %s: %w", m.Name, err))
			continue
		}
		r.machineWrites.deleted(client.ObjectKeyFromObject(s.kcp), m.Name)
		log.Info("Deleting Machine (KubeadmControlPlane deleted)", "Machine", klog.KObj(m))
	}
	if err := errors.Join(errs...); err != nil {
		r.recorder.Eventf(s.kcp, corev1.EventTypeWarning, "FailedDelete", "Failed to delete control plane Machines for cluster %s control plane: %v", klog.KObj(s.cluster), err)
		s.deletingReason, s.deletingMessage = controlplanev1.KubeadmControlPlaneDeletingInternalErrorV1Beta2Reason, "Please check controller logs for errors"
		return ctrl.Result{}, err
	}
	s.deletingReason = controlplanev1.KubeadmControlPlaneDeletingWaitingForMachineDeletionV1Beta2Reason
	if n := len(s.machines); n == 1 {
		s.deletingMessage = "Deleting 1 Machine"
	} else {
		s.deletingMessage = fmt.Sprintf("Deleting %d Machines", n)
	}
	return ctrl.Result{RequeueAfter: deletingRequeueAfter}, nil
}

// listNames lists names as upstream's messages do: at most ten, then "... (n more)".
func listNames(in []string) string {
	if len(in) <= 10 {
		return strings.Join(in, ", ")
	}
	return strings.Join(in[:10], ", ") + fmt.Sprintf(", ... (%d more)", len(in)-10)
}

package localmachine

import (
	"context"
	"errors"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// reconcileDelete removes the machine from the workload cluster (its Node, and for a control plane machine
// its etcd member, unless a control plane provider removed it already, and its processes), then releases
// the finalizer. When the LocalCluster is gone or being deleted, the whole cluster goes with it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	lm := s.localMachine
	s.facts.deleting = true
	if !controllerutil.ContainsFinalizer(lm, infrav1.LocalMachineFinalizer) {
		return ctrl.Result{}, nil
	}
	// The status is patched after the finalizer: a LocalMachine still Ready first reports its deletion (Ready
	// False, Deleting), then is torn down and released, so that nobody sees it released but Ready.
	if conditions.IsTrue(lm, clusterv1.ReadyCondition) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	if s.machine != nil && s.cluster != nil {
		key, live, err := backend.LiveClusterOf(ctx, r.Client, s.cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		if live {
			ctrl.LoggerFrom(ctx).Info("Deleting the machine: its Node, and for a control plane machine its etcd member and processes")
			err := r.Backend.DeleteMachine(ctx, key, s.machine.Name)
			switch {
			case errors.Is(err, backend.ErrClusterNotReady) && !s.cluster.DeletionTimestamp.IsZero():
				// The Cluster is going, its control plane machines may be gone already: there is no API
				// server left to delete the Node from, and the LocalCluster's deletion removes the rest
				// (upstream skips the Node deletion of a Cluster being deleted too).
				ctrl.LoggerFrom(ctx).Info("The Cluster is being deleted and its control plane is gone: leaving the Node to the LocalCluster's deletion")
			case errors.Is(err, backend.ErrClusterNotReady):
				s.facts.waiting = infrav1.WaitingForControlPlaneReason
				return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
			case err != nil:
				s.facts.deleteFailed = true
				return ctrl.Result{}, fmt.Errorf("deleting machine %s: %w", s.machine.Name, err)
			}
		}
	}
	controllerutil.RemoveFinalizer(lm, infrav1.LocalMachineFinalizer)
	return ctrl.Result{}, nil
}

// reconcileDeleteForMove releases a LocalMachine that clusterctl move took to another management cluster:
// its Node stays registered (the provider there goes on with it) and the finalizer goes. clusterctl
// removes the finalizer itself, so this runs only when something added it back.
func (r *Reconciler) reconcileDeleteForMove(ctx context.Context, s *scope) (ctrl.Result, error) {
	if controllerutil.RemoveFinalizer(s.localMachine, infrav1.LocalMachineFinalizer) {
		ctrl.LoggerFrom(ctx).Info("The LocalMachine was moved to another management cluster: leaving its Node")
	}
	return ctrl.Result{}, nil
}

package localcluster

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// reconcileDelete stops the workload cluster's processes and removes its data, then releases the
// finalizer. It does so whether or not the LocalCluster still has a Cluster owner: processes are never
// left behind.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.facts.deleting = true
	if !controllerutil.ContainsFinalizer(s.localCluster, infrav1.LocalClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	// The status is patched after the finalizer: a LocalCluster still Ready first reports its deletion (Ready
	// False, Deleting), then is torn down and released, so that nobody sees it released but Ready.
	if conditions.IsTrue(s.localCluster, clusterv1.ReadyCondition) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Stopping the workload cluster's processes and removing its data")
	if err := r.Backend.DeleteCluster(ctx, s.key()); err != nil {
		s.facts.deleteFailed = true
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(s.localCluster, infrav1.LocalClusterFinalizer)
	return ctrl.Result{}, nil
}

// reconcileDeleteForMove releases a LocalCluster that clusterctl move took to another management cluster:
// its processes stop, its data (etcd, with the Nodes) stays for the provider there to take over, and the
// finalizer goes. clusterctl removes the finalizer itself, so this runs only when something added it back.
func (r *Reconciler) reconcileDeleteForMove(ctx context.Context, s *scope) (ctrl.Result, error) {
	ctrl.LoggerFrom(ctx).Info("The LocalCluster was moved to another management cluster: releasing its workload cluster, keeping its data")
	if err := r.Backend.ReleaseCluster(ctx, s.key()); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(s.localCluster, infrav1.LocalClusterFinalizer)
	return ctrl.Result{}, nil
}

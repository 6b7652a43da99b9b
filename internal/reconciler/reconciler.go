// Package reconciler holds what every capstan controller does the same way around its Reconcile: the read
// of its object with the guard against copies older than its last write (Guarded), quiet requeues on
// conflicts, the count of reconcile results by reason (capstan_reconcile_results_total), the
// pause rules, deletions by clusterctl move, and the --watch-filter and --namespace event filters.
package reconciler

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// RequeueOnConflict wraps a reconciler so that a conflict (someone else changed the object first) is
// requeued without being reported as an error: the next reconcile reads the new version. Every outcome,
// conflicts included, counts in the ResultsMetric counter under the controller's name, which is the name
// of r's package (one package per controller: "machine" for *machine.Reconciler).
func RequeueOnConflict(r reconcile.Reconciler) reconcile.Reconciler {
	return requeueOnConflict(controllerName(r), r)
}

func requeueOnConflict(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	counter := resultsOf(controller)
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		result, reason := classify(res, err)
		counter.WithLabelValues(result, reason).Inc()
		if err != nil && isConflict(err) {
			return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // Requeue is what a quiet retry needs here.
		}
		return res, err
	})
}

func isConflict(err error) bool {
	return apierrors.IsConflict(err)
}

// IsPaused reports whether obj must not be reconciled: its Cluster has spec.paused set, or obj carries
// the cluster.x-k8s.io/paused annotation. cluster may be nil when obj does not belong to a Cluster yet.
func IsPaused(cluster *clusterv1.Cluster, obj metav1.Object) bool {
	if cluster != nil && cluster.Spec.Paused {
		return true
	}
	_, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]
	return ok
}

// IsDeletedForMove reports whether obj is being deleted by clusterctl move, which took it to another
// management cluster: it carries the clusterctl.cluster.x-k8s.io/delete-for-move annotation. Its
// controller must release it without tearing down what it stands for, which now belongs to the target.
func IsDeletedForMove(obj metav1.Object) bool {
	if obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	_, ok := obj.GetAnnotations()[clusterctlv1.DeleteForMoveAnnotation]
	return ok
}

// HasWatchLabel keeps only objects whose cluster.x-k8s.io/watch-filter label equals value; every object
// passes when value is empty.
func HasWatchLabel(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return value == "" || obj.GetLabels()[clusterv1.WatchLabel] == value
	})
}

// ClusterCreatedOrPauseChanged passes Cluster creations (an object may wait for its Cluster to exist) and
// changes of the Cluster's spec.paused: the Cluster events that the MachineDeployment and MachineSet
// controllers act on.
func ClusterCreatedOrPauseChanged() predicate.Predicate {
	return ClusterUpdates(func(old, updated *clusterv1.Cluster) bool { return old.Spec.Paused != updated.Spec.Paused })
}

// ClusterUpdates passes the Cluster events a controller of the Cluster's objects acts on: creations (an
// object may wait for its Cluster to exist) and the updates for which changed(old, updated) is true. A
// deletion is not passed: the objects of a Cluster are deleted with it, each by its own event.
func ClusterUpdates(changed func(old, updated *clusterv1.Cluster) bool) predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*clusterv1.Cluster)
			updated, okNew := e.ObjectNew.(*clusterv1.Cluster)
			return okOld && okNew && changed(old, updated)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// EventRecorder returns the manager's recorder of core/v1 Events for a controller: the recorder
// (Eventf(object, type, reason, message)) that upstream Cluster API records with, whose events kubectl get
// events shows.
func EventRecorder(mgr manager.Manager, name string) record.EventRecorder {
	return mgr.GetEventRecorderFor(name) //nolint:staticcheck // The core/v1 recorder, as upstream's controllers record with.
}

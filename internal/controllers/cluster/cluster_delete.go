package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// deletionStep is what a deleting Cluster does next: the objects to delete now, and the reason and
// message of its Deleting condition. done means nothing is left and the finalizer can go.
type deletionStep struct {
	reason, message string
	toDelete        []kindedObject
	done            bool
}

type kindedObject struct {
	kind string
	obj  client.Object
}

// planDeletion returns the next step of a Cluster's deletion. The Cluster deletes its descendants one
// kind at a time and waits until the objects of a kind are gone before it deletes the next:
// MachinePools (their Machines go with them); MachineDeployments; MachineSets (those of a MachineDeployment are normally gone with it, by garbage
// collection); worker Machines; control plane Machines, only when there is no control plane object (that
// object deletes its own Machines); the control plane object; the InfraCluster. Objects already being
// deleted are not deleted again.
func planDeletion(c *clusterv1.Cluster, d descendants, cp, infra externalObject) deletionStep {
	workers := clusterv1.ClusterDeletingWaitingForWorkersDeletionV1Beta2Reason
	if len(d.machinePools) > 0 {
		return deleteAll(workers, "MachinePool", d.machinePools, nil)
	}
	if len(d.machinePoolMachines) > 0 {
		// The Machines of MachinePools that are gone: garbage collection deletes them.
		return deleteAll(workers, "Machine", d.machinePoolMachines, func(m *clusterv1.Machine) bool {
			return metav1.GetControllerOfNoCopy(m) == nil
		})
	}
	if len(d.machineDeployments) > 0 {
		return deleteAll(workers, "MachineDeployment", d.machineDeployments, nil)
	}
	if len(d.machineSets) > 0 {
		return deleteAll(workers, "MachineSet", d.machineSets, func(ms *clusterv1.MachineSet) bool {
			return !ownedByOneOf(ms, "MachineDeployment", d.machineDeployments)
		})
	}
	if len(d.workerMachines) > 0 {
		return deleteAll(workers, "Machine", d.workerMachines, func(m *clusterv1.Machine) bool {
			return !ownedByOneOf(m, "MachineSet", d.machineSets)
		})
	}

	controlPlane := clusterv1.ClusterDeletingWaitingForControlPlaneDeletionV1Beta2Reason
	if c.Spec.ControlPlaneRef == nil && len(d.controlPlaneMachines) > 0 {
		step := waitFor(controlPlane, "control plane Machine", names(d.controlPlaneMachines))
		for i := range d.controlPlaneMachines {
			step.deleteIfNotDeleting("Machine", &d.controlPlaneMachines[i])
		}
		return step
	}
	if ref := c.Spec.ControlPlaneRef; ref != nil {
		switch {
		case cp.obj != nil:
			step := waitFor(controlPlane, ref.Kind, []string{ref.Name})
			step.deleteIfNotDeleting(ref.Kind, cp.obj)
			return step
		case !cp.notFound:
			// Whether it still exists is unknown: never go on to the InfraCluster before it is gone.
			return deletionStep{reason: clusterv1.ClusterDeletingInternalErrorV1Beta2Reason, message: conditions.InternalErrorMessage}
		}
	}

	if ref := c.Spec.InfrastructureRef; ref != nil {
		switch {
		case infra.obj != nil:
			step := waitFor(clusterv1.ClusterDeletingWaitingForInfrastructureDeletionV1Beta2Reason, ref.Kind, []string{ref.Name})
			step.deleteIfNotDeleting(ref.Kind, infra.obj)
			return step
		case !infra.notFound:
			return deletionStep{reason: clusterv1.ClusterDeletingInternalErrorV1Beta2Reason, message: conditions.InternalErrorMessage}
		}
	}
	return deletionStep{reason: clusterv1.ClusterDeletingDeletionCompletedV1Beta2Reason, message: "Deletion completed", done: true}
}

func waitFor(reason, kind string, objectNames []string) deletionStep {
	return deletionStep{reason: reason, message: fmt.Sprintf("Waiting for %s to be deleted", namedObjects(kind, objectNames))}
}

// deleteAll is the step that waits for objs, of kind, to be gone and deletes those of them that are not
// being deleted yet, except those that deletable (when set) leaves to their owner.
func deleteAll[T any, PT interface {
	*T
	client.Object
}](reason, kind string, objs []T, deletable func(PT) bool) deletionStep {
	step := waitFor(reason, kind, names[T, PT](objs))
	for i := range objs {
		if o := PT(&objs[i]); deletable == nil || deletable(o) {
			step.deleteIfNotDeleting(kind, o)
		}
	}
	return step
}

func (s *deletionStep) deleteIfNotDeleting(kind string, obj client.Object) {
	if obj.GetDeletionTimestamp().IsZero() {
		s.toDelete = append(s.toDelete, kindedObject{kind: kind, obj: obj})
	}
}

func names[T any, PT interface {
	*T
	metav1.Object
}](items []T) []string {
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	return out
}

// ownedByOneOf reports whether obj's controller is one of owners, of the given kind.
func ownedByOneOf[T any, PT interface {
	*T
	metav1.Object
}](obj metav1.Object, kind string, owners []T) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != kind {
		return false
	}
	for i := range owners {
		if o := PT(&owners[i]); o.GetUID() == ref.UID {
			return true
		}
	}
	return false
}

// reconcileDelete deletes the Cluster's descendants in order and removes the finalizer once they are all
// gone, confirming that with reads from the API server rather than the cache.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if !s.descendantsRead {
		// getDescendants has returned the error.
		s.deletingReason, s.deletingMessage = clusterv1.ClusterDeletingInternalErrorV1Beta2Reason, conditions.InternalErrorMessage
		return ctrl.Result{}, nil
	}

	if ok, res, err := r.reconcileBeforeClusterDelete(ctx, s); !ok || err != nil {
		return res, err
	}

	step := planDeletion(s.cluster, s.descendants, s.controlPlane, s.infra)
	s.deletingReason, s.deletingMessage = step.reason, step.message
	var errs []error
	for _, o := range step.toDelete {
		log.Info("Deleting "+o.kind, o.kind, klog.KObj(o.obj))
		if err := r.Client.Delete(ctx, o.obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", o.kind, o.obj.GetName(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if !step.done {
		return r.deletePoll(), nil
	}

	// The cache may not have seen a descendant created a moment ago.
	reader, indexed := r.APIReader, false
	if reader == nil {
		reader, indexed = r.Client, r.descendantsIndexed
	}
	live, err := listDescendants(ctx, reader, s.cluster, indexed)
	if err != nil {
		return ctrl.Result{}, err
	}
	if step := planDeletion(s.cluster, live, s.controlPlane, s.infra); !step.done {
		s.deletingReason, s.deletingMessage = step.reason, step.message
		return r.deletePoll(), nil
	}

	log.Info("Removing the finalizer: every descendant is deleted")
	controllerutil.RemoveFinalizer(s.cluster, clusterv1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deletingStatusInterval is the least time between two writes of a deleting Cluster's status that only
// follow its descendants' progress (see holdBackDeletingStatus).
const deletingStatusInterval = 10 * time.Second

// deletingStatusWrites remembers when the controller last wrote the status of each deleting Cluster. It
// holds back writes of a status that is current (the wrapper's guard, reconciler.Guarded, stops only
// reconciles of a stale copy): at N=150 the Cluster status writes per Cluster while deleting went from
// 7.4 to 4.4 (docs/dev/scale-history.md, run 22).
type deletingStatusWrites struct {
	mu sync.Mutex
	at map[types.NamespacedName]time.Time
}

func (w *deletingStatusWrites) last(key types.NamespacedName) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at[key]
}

func (w *deletingStatusWrites) wrote(key types.NamespacedName, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil {
		w.at = map[types.NamespacedName]time.Time{}
	}
	w.at[key] = at
}

func (w *deletingStatusWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.at, key)
}

// holdBackDeletingStatus says how long the status a reconcile of a deleting Cluster computed (after) waits
// before it is written over the one the Cluster has (before); 0 means at once. A change of the deletion's
// step (the phase, the Deleting condition's reason or message: what the Cluster waits for) is written at
// once. A change that only follows the descendants' progress (their counters going down, the control
// plane's conditions going to Deleting) is written at once when the last write of the status is at least
// interval old, otherwise held back until then: a deletion goes through many such states within seconds,
// and each write of a Cluster's status costs the API server as much as a step. The deletion itself never
// waits for a status write.
func holdBackDeletingStatus(before, after *clusterv1.ClusterStatus, lastWrite, now time.Time, interval time.Duration) time.Duration {
	if before.Phase != after.Phase || !sameCondition(deletingCondition(before), deletingCondition(after)) {
		return 0
	}
	if wait := lastWrite.Add(interval).Sub(now); wait > 0 {
		return wait
	}
	return 0
}

func deletingCondition(s *clusterv1.ClusterStatus) *metav1.Condition {
	if s.V1Beta2 == nil {
		return nil
	}
	return meta.FindStatusCondition(s.V1Beta2.Conditions, clusterv1.ClusterDeletingV1Beta2Condition)
}

package machinepool

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// deleteRequeueAfter is how soon a deleting MachinePool looks again at what it waits for, in case an
// event is missed.
const deleteRequeueAfter = 5 * time.Second

// reconcileDelete takes the deletion of a MachinePool one step further, in order: the MachinePool
// Machines (each drains its Node), then the bootstrap config and the InfraMachinePool, then the Nodes of
// status.nodeRefs (skipped when the Cluster is going away, given up after nodeDeletionTimeout); then the
// finalizer goes. A MachinePool that clusterctl move took to another management cluster is released
// without tearing anything down.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mp := s.mp
	if reconciler.IsDeletedForMove(mp) {
		if controllerutil.RemoveFinalizer(mp, clusterv1.MachinePoolFinalizer) {
			log.Info("The MachinePool was moved to another management cluster: releasing it")
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(mp, clusterv1.MachinePoolFinalizer) {
		return ctrl.Result{}, nil
	}

	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(mp.Namespace),
		client.MatchingLabels{clusterv1.MachinePoolNameLabel: labelformat.Value(mp.Name), clusterv1.ClusterNameLabel: mp.Spec.ClusterName}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Machines of MachinePool %s: %w", mp.Name, err)
	}
	var owned []*clusterv1.Machine
	for i := range machines.Items {
		if ref := metav1.GetControllerOfNoCopy(&machines.Items[i]); ref != nil && ref.UID == mp.UID {
			owned = append(owned, &machines.Items[i])
		}
	}
	s.machines, s.machinesRead = machines.Items, true
	if len(owned) > 0 {
		s.deletingMessage = fmt.Sprintf("Waiting for %d Machines to be deleted", len(owned))
		for _, m := range owned {
			if !m.DeletionTimestamp.IsZero() {
				continue
			}
			log.Info("Deleting a Machine of the pool", "Machine", klog.KObj(m))
			if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("deleting Machine %s: %w", m.Name, err)
			}
		}
		return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
	}

	remaining, err := r.deleteExternal(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		s.deletingMessage = "Waiting for " + joinWithAnd(remaining) + " to be deleted"
		return ctrl.Result{RequeueAfter: deleteRequeueAfter}, nil
	}

	if wait, res := r.deleteNodes(ctx, s); wait {
		return res, nil
	}
	log.Info("Removing the finalizer: the pool's Machines, provider objects and Nodes are deleted")
	controllerutil.RemoveFinalizer(mp, clusterv1.MachinePoolFinalizer)
	return ctrl.Result{}, nil
}

// deleteExternal deletes the bootstrap config and the InfraMachinePool and returns those still there.
func (r *Reconciler) deleteExternal(ctx context.Context, s *scope) ([]string, error) {
	mp := s.mp
	refs := []*corev1.ObjectReference{mp.Spec.Template.Spec.Bootstrap.ConfigRef, &mp.Spec.Template.Spec.InfrastructureRef}
	var remaining []string
	for _, ref := range refs {
		if ref == nil || ref.Name == "" {
			continue
		}
		obj, err := external.Get(ctx, r.Client, ref, mp.Namespace)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			if external.ReadProblem(err, ref) != "" {
				// Never another namespace's object, nor one the controller may not read.
				continue
			}
			return nil, fmt.Errorf("getting %s %s: %w", ref.Kind, ref.Name, err)
		}
		remaining = append(remaining, ref.Kind+" "+ref.Name)
		if !obj.GetDeletionTimestamp().IsZero() {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting "+ref.Kind, ref.Kind, klog.KObj(obj))
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting %s %s: %w", ref.Kind, ref.Name, err)
		}
	}
	return remaining, nil
}

// deleteNodes deletes the Nodes of status.nodeRefs; wait is true when the deletion must wait for a later
// reconcile. Nodes are left when the Cluster is going away (its workload cluster goes with it), and once
// nodeDeletionTimeout has passed since the MachinePool's deletion started.
func (r *Reconciler) deleteNodes(ctx context.Context, s *scope) (wait bool, res ctrl.Result) {
	log := ctrl.LoggerFrom(ctx)
	mp := s.mp
	if len(mp.Status.NodeRefs) == 0 || s.cluster == nil || !s.cluster.DeletionTimestamp.IsZero() {
		return false, ctrl.Result{}
	}
	timeout := defaultNodeDeletionTimeout
	if t := mp.Spec.Template.Spec.NodeDeletionTimeout; t != nil {
		timeout = t.Duration
	}
	timedOut := timeout > 0 && mp.DeletionTimestamp.Add(timeout).Before(r.clock())
	if timedOut {
		log.Info("nodeDeletionTimeout passed, leaving the pool's Nodes", "nodeDeletionTimeout", timeout)
		return false, ctrl.Result{}
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		s.deletingMessage = "Waiting for the workload cluster to be reachable to delete the pool's Nodes"
		return true, ctrl.Result{RequeueAfter: deleteRequeueAfter}
	}
	for _, ref := range mp.Status.NodeRefs {
		node := &corev1.Node{}
		node.Name = ref.Name
		log.Info("Deleting a Node of the pool", "Node", klog.KObj(node))
		if err := remote.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			s.deletingMessage = "Deleting the pool's Nodes failed; retrying until nodeDeletionTimeout"
			log.Error(err, "Deleting a Node of the pool failed", "Node", klog.KObj(node))
			return true, ctrl.Result{RequeueAfter: deleteRequeueAfter}
		}
	}
	return false, ctrl.Result{}
}

func joinWithAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	default:
		out := items[0]
		for _, i := range items[1 : len(items)-1] {
			out += ", " + i
		}
		return out + " and " + items[len(items)-1]
	}
}

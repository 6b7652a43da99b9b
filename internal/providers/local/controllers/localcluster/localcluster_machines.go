package localcluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// reconcileOrphanedMachines deletes the backend's machines of the cluster whose Machine is gone: a
// Machine deleted by force (its finalizers removed) leaves its LocalMachine's deletion nothing to act on,
// and the machine's processes would run until the whole cluster goes. The machines of LocalMachinePools
// (named <pool>-<index>, without a Machine) are left to their pool. A machine is deleted only once an
// uncached read confirms its Machine does not exist.
func (r *Reconciler) reconcileOrphanedMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	names, err := r.Backend.Machines(ctx, s.key())
	if err != nil || len(names) == 0 {
		return ctrl.Result{}, err
	}
	ns := s.localCluster.Namespace
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Machines of the cluster: %w", err)
	}
	known := map[string]bool{}
	for _, m := range machines.Items {
		known[m.Name] = true
	}
	pools := &infrav1.LocalMachinePoolList{}
	if err := r.Client.List(ctx, pools, client.InNamespace(ns)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the LocalMachinePools: %w", err)
	}
	for _, name := range names {
		if known[name] || isPoolInstance(pools.Items, name) {
			continue
		}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &clusterv1.Machine{})
		if !apierrors.IsNotFound(err) {
			// There (the cache is behind) or unknown: look again at the next reconcile.
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting a machine whose Machine is gone (deleted without its LocalMachine's cleanup): its Node, etcd member and processes", "machine", name)
		if err := r.Backend.DeleteMachine(ctx, s.key(), name); err != nil {
			if errors.Is(err, backend.ErrClusterNotReady) {
				return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
			}
			return ctrl.Result{}, fmt.Errorf("deleting machine %s, whose Machine is gone: %w", name, err)
		}
	}
	return ctrl.Result{}, nil
}

// isPoolInstance reports whether name is an instance of one of the pools: <pool>-<index>.
func isPoolInstance(pools []infrav1.LocalMachinePool, name string) bool {
	for _, p := range pools {
		if suffix, ok := strings.CutPrefix(name, p.Name+"-"); ok {
			if _, err := strconv.Atoi(suffix); err == nil {
				return true
			}
		}
	}
	return false
}

// machineDeleted lets through the deletions of Machines only.
func machineDeleted() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// machineToLocalCluster maps a Machine to the LocalCluster of its Cluster.
func (r *Reconciler) machineToLocalCluster(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, cluster); err != nil || cluster.Spec.InfrastructureRef == nil {
		return nil
	}
	ref := cluster.Spec.InfrastructureRef
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != infrav1.GroupVersion.Group || ref.Kind != "LocalCluster" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cluster.Namespace, Name: ref.Name}}}
}

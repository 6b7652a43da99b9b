package localmachine

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// leaveEndpointRetry is how soon a deleted control plane Machine's hook is looked at again while its
// API server stops.
const leaveEndpointRetry = time.Second

// reconcileLeaveEndpoint keeps the LeaveEndpointHookAnnotation pre-terminate hook on a control plane
// Machine while it lives, and once it is deleted takes its API server out of the cluster's endpoint
// (Backend.LeaveEndpoint) before removing the hook, which lets the control plane provider remove its etcd
// member. Workers, and every Machine of a backend without API servers to leave (the memory backend), are
// left alone.
func (r *Reconciler) reconcileLeaveEndpoint(ctx context.Context, s *scope) (ctrl.Result, error) {
	m := s.machine
	leaver, ok := r.Backend.(backend.EndpointLeaver)
	if !ok || m == nil || !isControlPlane(m) {
		return ctrl.Result{}, nil
	}
	_, hooked := m.Annotations[infrav1.LeaveEndpointHookAnnotation]
	switch {
	case m.DeletionTimestamp.IsZero() && s.localMachine.DeletionTimestamp.IsZero():
		if hooked {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.setHook(ctx, m, true)
	case !hooked:
		return ctrl.Result{}, nil
	}
	if s.cluster != nil && s.localMachine.DeletionTimestamp.IsZero() {
		if key, ok := backend.ClusterOf(s.cluster); ok {
			done, err := leaver.LeaveEndpoint(ctx, key, m.Name)
			if err != nil {
				return ctrl.Result{}, err
			}
			if !done {
				ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the Machine's kube-apiserver to stop after leaving the cluster's endpoint")
				return ctrl.Result{RequeueAfter: leaveEndpointRetry}, nil
			}
		}
	}
	return ctrl.Result{}, r.setHook(ctx, m, false)
}

// setHook adds or removes the LeaveEndpointHookAnnotation of a Machine.
func (r *Reconciler) setHook(ctx context.Context, m client.Object, add bool) error {
	before := m.DeepCopyObject().(client.Object)
	annotations := m.GetAnnotations()
	if add {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[infrav1.LeaveEndpointHookAnnotation] = ""
		ctrl.LoggerFrom(ctx).Info("Adding the pre-terminate hook that takes the Machine's kube-apiserver out of the cluster's endpoint before its etcd member is removed")
	} else {
		delete(annotations, infrav1.LeaveEndpointHookAnnotation)
		ctrl.LoggerFrom(ctx).Info("Removing the pre-terminate hook: the Machine's kube-apiserver left the cluster's endpoint")
	}
	m.SetAnnotations(annotations)
	return client.IgnoreNotFound(r.Client.Patch(ctx, m, client.MergeFrom(before)))
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
)

// The lifecycle hooks of the Runtime SDK that the Cluster controller calls, for Clusters with a managed
// topology as upstream's do: BeforeClusterDelete before the deletion of a Cluster's objects starts, and
// AfterControlPlaneInitialized once its control plane is initialized (tracked with the pending-hooks
// annotation, so that it is called once even across restarts).

// lifecycleHookFailedEvent is the reason of the Warning event of a hook call that failed.
const lifecycleHookFailedEvent = "LifecycleHookFailed"

// hooksEnabled reports whether c's lifecycle hooks are called.
func (r *Reconciler) hooksEnabled(c *clusterv1.Cluster) bool {
	return r.RuntimeClient != nil && c.Spec.Topology != nil
}

// markHooksPending records on a new Cluster with a topology that AfterControlPlaneInitialized must be
// called once its control plane is initialized. new is true on the Cluster's first reconcile; later, a
// Cluster whose topology has not created a control plane yet is still new.
func (r *Reconciler) markHooksPending(c *clusterv1.Cluster, isNew bool) {
	if !r.hooksEnabled(c) || !c.DeletionTimestamp.IsZero() || conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition) {
		return
	}
	if isNew || c.Spec.ControlPlaneRef == nil {
		hooks.MarkPending(c, runtimehooksv1.AfterControlPlaneInitialized)
	}
}

// reconcileAfterControlPlaneInitialized calls AfterControlPlaneInitialized when it is pending and the
// control plane is initialized; once every handler answered, it is done.
func (r *Reconciler) reconcileAfterControlPlaneInitialized(ctx context.Context, s *scope) (ctrl.Result, error) {
	c := s.cluster
	r.markHooksPending(c, false)
	if !r.hooksEnabled(c) || !hooks.IsPending(runtimehooksv1.AfterControlPlaneInitialized, c) {
		return ctrl.Result{}, nil
	}
	if !s.controlPlane.initialized && !conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition) {
		return ctrl.Result{}, nil
	}
	req := &runtimehooksv1.AfterControlPlaneInitializedRequest{Cluster: *hookCluster(c)}
	resp := &runtimehooksv1.AfterControlPlaneInitializedResponse{}
	if err := r.RuntimeClient.CallAll(ctx, runtimehooksv1.AfterControlPlaneInitialized, c, req, resp); err != nil {
		r.hookFailed(c, runtimehooksv1.AfterControlPlaneInitialized, err)
		return ctrl.Result{}, fmt.Errorf("calling the AfterControlPlaneInitialized hook: %w", err)
	}
	hooks.MarkDone(c, runtimehooksv1.AfterControlPlaneInitialized)
	return ctrl.Result{}, nil
}

// reconcileBeforeClusterDelete calls BeforeClusterDelete until every handler lets the deletion go on,
// then marks the Cluster ok-to-delete. done is false while the deletion must wait; the Deleting
// condition then says for what.
func (r *Reconciler) reconcileBeforeClusterDelete(ctx context.Context, s *scope) (done bool, _ ctrl.Result, _ error) {
	c := s.cluster
	if !r.hooksEnabled(c) || hooks.IsOkToDelete(c) {
		return true, ctrl.Result{}, nil
	}
	req := &runtimehooksv1.BeforeClusterDeleteRequest{Cluster: *hookCluster(c)}
	resp := &runtimehooksv1.BeforeClusterDeleteResponse{}
	s.deletingReason = clusterv1.ClusterDeletingWaitingForBeforeDeleteHookV1Beta2Reason
	if err := r.RuntimeClient.CallAll(ctx, runtimehooksv1.BeforeClusterDelete, c, req, resp); err != nil {
		s.deletingMessage = "BeforeClusterDelete hook failed: " + err.Error()
		var handlerErr *runtimeclient.HandlerError
		if errors.As(err, &handlerErr) {
			s.deletingMessage = conditions.Capitalise(err.Error())
		}
		r.hookFailed(c, runtimehooksv1.BeforeClusterDelete, err)
		return false, ctrl.Result{}, fmt.Errorf("calling the BeforeClusterDelete hook: %w", err)
	}
	if resp.RetryAfterSeconds != 0 {
		s.deletingMessage = "Waiting for BeforeClusterDelete hook"
		if resp.Message != "" {
			s.deletingMessage += ": " + resp.Message
		}
		ctrl.LoggerFrom(ctx).Info("BeforeClusterDelete hook holds the deletion", "retryAfterSeconds", resp.RetryAfterSeconds)
		return false, ctrl.Result{RequeueAfter: time.Duration(resp.RetryAfterSeconds) * time.Second}, nil
	}
	s.deletingReason = ""
	hooks.MarkOkToDelete(c)
	return true, ctrl.Result{}, nil
}

func (r *Reconciler) hookFailed(c *clusterv1.Cluster, hook runtimehooksv1.Hook, err error) {
	if r.Recorder != nil {
		r.Recorder.Eventf(c, corev1.EventTypeWarning, lifecycleHookFailedEvent, "%s hook failed: %s", hook, err.Error())
	}
}

// hookCluster is the Cluster as hook requests carry it: with its apiVersion and kind, without managed
// fields.
func hookCluster(c *clusterv1.Cluster) *clusterv1.Cluster {
	out := c.DeepCopy()
	out.APIVersion, out.Kind = clusterv1.GroupVersion.String(), "Cluster"
	out.ManagedFields = nil
	return out
}

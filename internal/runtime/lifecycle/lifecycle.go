// Package lifecycle calls the lifecycle hooks of the Runtime SDK that the topology controller calls,
// with upstream's requests: BeforeClusterCreate, BeforeClusterUpgrade, AfterControlPlaneUpgrade and
// AfterClusterUpgrade. When each is called, and what its answer does, is the topology engine's decision
// (internal/topology: Desired.Hooks); the controller calls them through Hooks and keeps the Cluster's
// runtime.cluster.x-k8s.io/pending-hooks annotation.
package lifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/topology"
)

// FailedEventReason is the reason of the Warning event of a hook call that failed.
const FailedEventReason = "LifecycleHookFailed"

// Hooks calls the lifecycle hooks of managed topologies; it implements the topology controller's Hooks.
type Hooks struct {
	// Runtime calls the handlers.
	Runtime *runtimeclient.Client
	// Recorder records a Warning event on the Cluster when a hook fails; none when nil.
	Recorder record.EventRecorder
}

// Call calls every handler of a hook for c and returns their answer.
func (h *Hooks) Call(ctx context.Context, c *clusterv1.Cluster, call topology.HookCall) (topology.HookResponse, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster := *hookCluster(c)
	switch call.Hook {
	case topology.BeforeClusterCreateHook:
		resp := &runtimehooksv1.BeforeClusterCreateResponse{}
		if err := h.call(ctx, runtimehooksv1.BeforeClusterCreate, c, &runtimehooksv1.BeforeClusterCreateRequest{Cluster: cluster}, resp); err != nil {
			return topology.HookResponse{}, err
		}
		if resp.RetryAfterSeconds != 0 {
			log.Info("Creation of the Cluster topology is blocked by the BeforeClusterCreate hook", "retryAfterSeconds", resp.RetryAfterSeconds)
		}
		return retryResponse(resp.CommonRetryResponse), nil
	case topology.BeforeClusterUpgradeHook:
		req := &runtimehooksv1.BeforeClusterUpgradeRequest{Cluster: cluster, FromKubernetesVersion: call.FromVersion, ToKubernetesVersion: call.ToVersion}
		resp := &runtimehooksv1.BeforeClusterUpgradeResponse{}
		if err := h.call(ctx, runtimehooksv1.BeforeClusterUpgrade, c, req, resp); err != nil {
			return topology.HookResponse{}, err
		}
		if resp.RetryAfterSeconds != 0 {
			log.Info("Cluster upgrade is blocked by the BeforeClusterUpgrade hook", "version", call.ToVersion, "retryAfterSeconds", resp.RetryAfterSeconds)
		}
		return retryResponse(resp.CommonRetryResponse), nil
	case topology.AfterControlPlaneUpgradeHook:
		req := &runtimehooksv1.AfterControlPlaneUpgradeRequest{Cluster: cluster, KubernetesVersion: call.ToVersion}
		resp := &runtimehooksv1.AfterControlPlaneUpgradeResponse{}
		if err := h.call(ctx, runtimehooksv1.AfterControlPlaneUpgrade, c, req, resp); err != nil {
			return topology.HookResponse{}, err
		}
		if resp.RetryAfterSeconds != 0 {
			log.Info("MachineDeployments/MachinePools upgrade is blocked by the AfterControlPlaneUpgrade hook", "version", call.ToVersion, "retryAfterSeconds", resp.RetryAfterSeconds)
		}
		return retryResponse(resp.CommonRetryResponse), nil
	case topology.AfterClusterUpgradeHook:
		req := &runtimehooksv1.AfterClusterUpgradeRequest{Cluster: cluster, KubernetesVersion: call.ToVersion}
		resp := &runtimehooksv1.AfterClusterUpgradeResponse{}
		if err := h.call(ctx, runtimehooksv1.AfterClusterUpgrade, c, req, resp); err != nil {
			return topology.HookResponse{}, err
		}
		// TODO(issue 43): upstream v1.12 made the hook blocking; the engine calls it once the desired state
		// is applied and does not hold on its answer yet, so retryAfterSeconds is dropped here.
		if resp.RetryAfterSeconds != 0 {
			log.Info("The AfterClusterUpgrade hook asks to be called again; capstan does not hold on it yet and marks it done", "version", call.ToVersion, "retryAfterSeconds", resp.RetryAfterSeconds)
		}
		return topology.HookResponse{}, nil
	}
	return topology.HookResponse{}, fmt.Errorf("%s is not a lifecycle hook of managed topologies", call.Hook)
}

// call calls every handler of hook for c; a failure is recorded as an event and returned.
func (h *Hooks) call(ctx context.Context, hook runtimehooksv1.Hook, c *clusterv1.Cluster, req runtimehooksv1.RequestObject, resp runtimehooksv1.ResponseObject) error {
	if err := h.Runtime.CallAll(ctx, hook, c, req, resp); err != nil {
		if h.Recorder != nil {
			h.Recorder.Eventf(c, corev1.EventTypeWarning, FailedEventReason, "%s hook failed: %s", hook, err.Error())
		}
		return err // the callers say which hook they called
	}
	return nil
}

func retryResponse(r runtimehooksv1.CommonRetryResponse) topology.HookResponse {
	return topology.HookResponse{RetryAfter: time.Duration(r.RetryAfterSeconds) * time.Second, Message: r.Message}
}

// hookCluster is the Cluster as hook requests carry it: with its apiVersion and kind, without managed
// fields.
func hookCluster(c *clusterv1.Cluster) *clusterv1.Cluster {
	out := c.DeepCopy()
	out.APIVersion, out.Kind = clusterv1.GroupVersion.String(), "Cluster"
	out.ManagedFields = nil
	return out
}

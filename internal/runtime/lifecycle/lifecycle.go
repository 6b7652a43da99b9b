// Package lifecycle calls the Runtime SDK hooks of managed topologies for the topology controller: the
// lifecycle hooks BeforeClusterCreate, BeforeClusterUpgrade, BeforeControlPlaneUpgrade,
// AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade and AfterClusterUpgrade (Hooks), with
// upstream's requests, and GenerateUpgradePlan (Planner), the extension a ClusterClass may name to compute
// the upgrade plan of chained upgrades. All the lifecycle hooks it calls are blocking: an answer with
// retryAfterSeconds comes back as a blocking topology.HookResponse. When each is called, and what its
// answer does, is the topology engine's decision (internal/topology: Desired.Hooks); the controller calls
// them through Hooks and keeps the Cluster's runtime.cluster.x-k8s.io/pending-hooks annotation.
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

// Call calls every handler of a hook for c and returns their answer: blocking when one asks to be called
// again (the shortest retryAfterSeconds wins).
func (h *Hooks) Call(ctx context.Context, c *clusterv1.Cluster, call topology.HookCall) (topology.HookResponse, error) {
	cluster := *hookCluster(c)
	cpSteps, workerSteps := upgradeSteps(call.ControlPlaneUpgrades), upgradeSteps(call.WorkersUpgrades)
	switch call.Hook {
	case topology.BeforeClusterCreateHook:
		return h.callBlocking(ctx, runtimehooksv1.BeforeClusterCreate, c,
			&runtimehooksv1.BeforeClusterCreateRequest{Cluster: cluster}, &runtimehooksv1.BeforeClusterCreateResponse{},
			"Creation of Cluster topology is", "")
	case topology.BeforeClusterUpgradeHook:
		req := &runtimehooksv1.BeforeClusterUpgradeRequest{Cluster: cluster, FromKubernetesVersion: call.FromVersion, ToKubernetesVersion: call.ToVersion,
			ControlPlaneUpgrades: cpSteps, WorkersUpgrades: workerSteps}
		upgrade := fmt.Sprintf("Cluster upgrade from version %s to version %s", req.FromKubernetesVersion, req.ToKubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.BeforeClusterUpgrade, c, req, &runtimehooksv1.BeforeClusterUpgradeResponse{},
			upgrade+" is", upgrade+" unblocked by BeforeClusterUpgrade hook", "ControlPlaneUpgrades", cpSteps, "WorkersUpgrades", workerSteps)
	case topology.BeforeControlPlaneUpgradeHook:
		req := &runtimehooksv1.BeforeControlPlaneUpgradeRequest{Cluster: cluster, FromKubernetesVersion: call.FromVersion, ToKubernetesVersion: call.ToVersion,
			ControlPlaneUpgrades: cpSteps, WorkersUpgrades: workerSteps}
		upgrade := fmt.Sprintf("Control plane upgrade from version %s to version %s", req.FromKubernetesVersion, req.ToKubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.BeforeControlPlaneUpgrade, c, req, &runtimehooksv1.BeforeControlPlaneUpgradeResponse{},
			upgrade+" is", upgrade+" unblocked by BeforeControlPlaneUpgrade hook", "ControlPlaneUpgrades", cpSteps, "WorkersUpgrades", workerSteps)
	case topology.AfterControlPlaneUpgradeHook:
		req := &runtimehooksv1.AfterControlPlaneUpgradeRequest{Cluster: cluster, KubernetesVersion: call.ToVersion,
			ControlPlaneUpgrades: cpSteps, WorkersUpgrades: workerSteps}
		upgrade := fmt.Sprintf("Control plane upgrade to version %s", req.KubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.AfterControlPlaneUpgrade, c, req, &runtimehooksv1.AfterControlPlaneUpgradeResponse{},
			upgrade+" completed but next steps are", upgrade+" and AfterControlPlaneUpgrade hook completed, next steps unblocked",
			"ControlPlaneUpgrades", cpSteps, "WorkersUpgrades", workerSteps)
	case topology.BeforeWorkersUpgradeHook:
		req := &runtimehooksv1.BeforeWorkersUpgradeRequest{Cluster: cluster, FromKubernetesVersion: call.FromVersion, ToKubernetesVersion: call.ToVersion,
			ControlPlaneUpgrades: cpSteps, WorkersUpgrades: workerSteps}
		upgrade := fmt.Sprintf("Workers upgrade from version %s to version %s", req.FromKubernetesVersion, req.ToKubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.BeforeWorkersUpgrade, c, req, &runtimehooksv1.BeforeWorkersUpgradeResponse{},
			upgrade+" is", upgrade+" unblocked by BeforeWorkersUpgrade hook", "ControlPlaneUpgrades", cpSteps, "WorkersUpgrades", workerSteps)
	case topology.AfterWorkersUpgradeHook:
		req := &runtimehooksv1.AfterWorkersUpgradeRequest{Cluster: cluster, KubernetesVersion: call.ToVersion,
			ControlPlaneUpgrades: cpSteps, WorkersUpgrades: workerSteps}
		upgrade := fmt.Sprintf("Workers upgrade to version %s", req.KubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.AfterWorkersUpgrade, c, req, &runtimehooksv1.AfterWorkersUpgradeResponse{},
			upgrade+" completed but next steps are", upgrade+" and AfterWorkersUpgrade hook completed, next steps unblocked",
			"ControlPlaneUpgrades", cpSteps, "WorkersUpgrades", workerSteps)
	case topology.AfterClusterUpgradeHook:
		// Blocking since upstream v1.12: while it blocks, the next upgrade cannot start.
		req := &runtimehooksv1.AfterClusterUpgradeRequest{Cluster: cluster, KubernetesVersion: call.ToVersion}
		upgrade := fmt.Sprintf("Cluster upgrade to version %s", req.KubernetesVersion)
		return h.callBlocking(ctx, runtimehooksv1.AfterClusterUpgrade, c, req, &runtimehooksv1.AfterClusterUpgradeResponse{},
			upgrade+" completed but next upgrades are", upgrade+" and AfterClusterUpgrade hook completed")
	}
	return topology.HookResponse{}, fmt.Errorf("%s is not a lifecycle hook of managed topologies", call.Hook)
}

// callBlocking calls every handler of a blocking hook and logs the answer as upstream does: "<blocked>
// blocked by <hook> hook, retry after <n>s" when a handler blocks, unblocked (when not empty) otherwise.
func (h *Hooks) callBlocking(ctx context.Context, hook runtimehooksv1.Hook, c *clusterv1.Cluster, req runtimehooksv1.RequestObject, resp runtimehooksv1.RetryResponseObject,
	blocked, unblocked string, keysAndValues ...any) (topology.HookResponse, error) {
	if err := h.call(ctx, hook, c, req, resp); err != nil {
		return topology.HookResponse{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	retry := resp.GetRetryAfterSeconds()
	switch {
	case retry != 0:
		log.Info(fmt.Sprintf("%s blocked by %s hook, retry after %ds", blocked, hook, retry), keysAndValues...)
	case unblocked != "":
		log.Info(unblocked, keysAndValues...)
	}
	return topology.HookResponse{RetryAfter: time.Duration(retry) * time.Second, Message: resp.GetMessage()}, nil
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

// upgradeSteps are the steps of an upgrade plan as the requests carry them; none for an empty plan.
func upgradeSteps(versions []string) []runtimehooksv1.UpgradeStepInfo {
	if len(versions) == 0 {
		return nil
	}
	out := make([]runtimehooksv1.UpgradeStepInfo, 0, len(versions))
	for _, v := range versions {
		out = append(out, runtimehooksv1.UpgradeStepInfo{Version: v})
	}
	return out
}

// hookCluster is the Cluster as hook requests carry it: with its apiVersion and kind, without managed
// fields.
func hookCluster(c *clusterv1.Cluster) *clusterv1.Cluster {
	out := c.DeepCopy()
	out.APIVersion, out.Kind = clusterv1.GroupVersion.String(), "Cluster"
	out.ManagedFields = nil
	return out
}

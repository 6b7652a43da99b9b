// Package lifecycle calls the lifecycle hooks of the Runtime SDK for the topology controller, with
// upstream's semantics: BeforeClusterCreate before the first object of a Cluster is created,
// BeforeClusterUpgrade before the control plane picks up a new version (held too while the Cluster has a
// before-upgrade.hook.cluster.cluster.x-k8s.io/<name> annotation), AfterControlPlaneUpgrade once the
// control plane runs it (holding the workers while it blocks), and AfterClusterUpgrade once the whole
// Cluster does. The After... hooks are recorded in the Cluster's runtime.cluster.x-k8s.io/pending-hooks
// annotation when the upgrade starts and removed once every handler answered, so that each is called once
// even across restarts of the manager.
package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/topology"
)

// BeforeClusterUpgradeHookAnnotationPrefix starts the annotations that hold an upgrade as a blocking
// BeforeClusterUpgrade hook would, as upstream's.
const BeforeClusterUpgradeHookAnnotationPrefix = "before-upgrade.hook.cluster.cluster.x-k8s.io"

// annotationHoldRetry is how often an upgrade held by annotations is looked at again without a change of
// the Cluster (upstream: twice the default sync period).
const annotationHoldRetry = 20 * time.Minute

// FailedEventReason is the reason of the Warning event of a hook call that failed.
const FailedEventReason = "LifecycleHookFailed"

// Hooks calls the lifecycle hooks of managed topologies; it implements the topology controller's Hooks.
type Hooks struct {
	// Client writes the pending-hooks annotation of Clusters.
	Client client.Client
	// Runtime calls the handlers.
	Runtime *runtimeclient.Client
	// Recorder records a Warning event on the Cluster when a hook fails; none when nil.
	Recorder record.EventRecorder
}

// BeforeClusterCreate calls the BeforeClusterCreate handlers.
func (h *Hooks) BeforeClusterCreate(ctx context.Context, c *clusterv1.Cluster) (topology.HookResponse, error) {
	req := &runtimehooksv1.BeforeClusterCreateRequest{Cluster: *hookCluster(c)}
	resp := &runtimehooksv1.BeforeClusterCreateResponse{}
	if err := h.call(ctx, runtimehooksv1.BeforeClusterCreate, c, req, resp); err != nil {
		return topology.HookResponse{}, err
	}
	if resp.RetryAfterSeconds != 0 {
		ctrl.LoggerFrom(ctx).Info("Creation of the Cluster topology is blocked by the BeforeClusterCreate hook", "retryAfterSeconds", resp.RetryAfterSeconds)
	}
	return retryResponse(resp.CommonRetryResponse), nil
}

// BeforeClusterUpgrade holds the upgrade while the Cluster has a before-upgrade hook annotation, else
// calls the BeforeClusterUpgrade handlers; once they let the upgrade start, AfterControlPlaneUpgrade and
// AfterClusterUpgrade become pending.
func (h *Hooks) BeforeClusterUpgrade(ctx context.Context, c *clusterv1.Cluster, fromVersion, toVersion string) (topology.HookResponse, error) {
	var held []string
	for key := range c.Annotations {
		if strings.HasPrefix(key, BeforeClusterUpgradeHookAnnotationPrefix) {
			held = append(held, key)
		}
	}
	if len(held) > 0 {
		slices.Sort(held)
		msg := fmt.Sprintf("annotations [%s] are set", strings.Join(held, ", "))
		if len(held) == 1 {
			msg = fmt.Sprintf("annotation [%s] is set", held[0])
		}
		ctrl.LoggerFrom(ctx).Info("Cluster upgrade is blocked by the BeforeClusterUpgrade hook (via annotations)", "version", toVersion, "hooks", strings.Join(held, ","))
		return topology.HookResponse{RetryAfter: annotationHoldRetry, Message: msg}, nil
	}
	req := &runtimehooksv1.BeforeClusterUpgradeRequest{Cluster: *hookCluster(c), FromKubernetesVersion: fromVersion, ToKubernetesVersion: toVersion}
	resp := &runtimehooksv1.BeforeClusterUpgradeResponse{}
	if err := h.call(ctx, runtimehooksv1.BeforeClusterUpgrade, c, req, resp); err != nil {
		return topology.HookResponse{}, err
	}
	if resp.RetryAfterSeconds != 0 {
		ctrl.LoggerFrom(ctx).Info("Cluster upgrade is blocked by the BeforeClusterUpgrade hook", "version", toVersion, "retryAfterSeconds", resp.RetryAfterSeconds)
		return retryResponse(resp.CommonRetryResponse), nil
	}
	// The control plane picks up the new version: the After... hooks are to be called once it is done.
	if err := h.annotate(ctx, c, func() bool {
		return hooks.MarkPending(c, runtimehooksv1.AfterControlPlaneUpgrade, runtimehooksv1.AfterClusterUpgrade)
	}); err != nil {
		return topology.HookResponse{}, err
	}
	return topology.HookResponse{}, nil
}

// AfterControlPlaneUpgradePending reports whether AfterControlPlaneUpgrade is still to be called.
func (h *Hooks) AfterControlPlaneUpgradePending(c *clusterv1.Cluster) bool {
	return hooks.IsPending(runtimehooksv1.AfterControlPlaneUpgrade, c)
}

// AfterControlPlaneUpgrade calls the AfterControlPlaneUpgrade handlers; once none blocks, it is done.
func (h *Hooks) AfterControlPlaneUpgrade(ctx context.Context, c *clusterv1.Cluster, version string) (topology.HookResponse, error) {
	req := &runtimehooksv1.AfterControlPlaneUpgradeRequest{Cluster: *hookCluster(c), KubernetesVersion: version}
	resp := &runtimehooksv1.AfterControlPlaneUpgradeResponse{}
	if err := h.call(ctx, runtimehooksv1.AfterControlPlaneUpgrade, c, req, resp); err != nil {
		return topology.HookResponse{}, err
	}
	if resp.RetryAfterSeconds != 0 {
		ctrl.LoggerFrom(ctx).Info("MachineDeployments upgrade is blocked by the AfterControlPlaneUpgrade hook", "version", version, "retryAfterSeconds", resp.RetryAfterSeconds)
		return retryResponse(resp.CommonRetryResponse), nil
	}
	if err := h.annotate(ctx, c, func() bool { return hooks.MarkDone(c, runtimehooksv1.AfterControlPlaneUpgrade) }); err != nil {
		return topology.HookResponse{}, err
	}
	return topology.HookResponse{}, nil
}

// AfterClusterReconciled calls AfterClusterUpgrade, when it is pending, once the control plane and every
// MachineDeployment run the new version and nothing waits.
func (h *Hooks) AfterClusterReconciled(ctx context.Context, c *clusterv1.Cluster, desired *topology.Desired) error {
	if !hooks.IsPending(runtimehooksv1.AfterClusterUpgrade, c) || desired == nil || !upgraded(desired.Upgrade) ||
		hooks.IsPending(runtimehooksv1.AfterControlPlaneUpgrade, c) {
		return nil
	}
	req := &runtimehooksv1.AfterClusterUpgradeRequest{Cluster: *hookCluster(c), KubernetesVersion: c.Spec.Topology.Version}
	resp := &runtimehooksv1.AfterClusterUpgradeResponse{}
	if err := h.call(ctx, runtimehooksv1.AfterClusterUpgrade, c, req, resp); err != nil {
		return fmt.Errorf("calling the %s hook: %w", runtimehooksv1.AfterClusterUpgrade, err)
	}
	return h.annotate(ctx, c, func() bool { return hooks.MarkDone(c, runtimehooksv1.AfterClusterUpgrade) })
}

// upgraded: the control plane is stable at the version and no MachineDeployment upgrades or waits.
func upgraded(u topology.UpgradeStatus) bool {
	return !u.ControlPlaneProvisioning && !u.ControlPlaneUpgrading && !u.ControlPlaneScaling &&
		!u.ControlPlanePendingUpgrade && !u.ControlPlaneStartingUpgrade && u.BlockingHook == "" &&
		len(u.MachineDeploymentsPendingCreate) == 0 && len(u.MachineDeploymentsPendingUpgrade) == 0 &&
		len(u.MachineDeploymentsDeferred) == 0 && len(u.MachineDeploymentsUpgrading) == 0
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

// annotate changes c's pending-hooks annotation with mutate and, when it changed, writes that annotation
// alone (a patch of the whole map would drop annotations others added meanwhile).
func (h *Hooks) annotate(ctx context.Context, c *clusterv1.Cluster, mutate func() bool) error {
	if !mutate() {
		return nil
	}
	var value any
	if v, ok := c.Annotations[runtimev1.PendingHooksAnnotation]; ok {
		value = v
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{runtimev1.PendingHooksAnnotation: value}}})
	if err != nil {
		return err
	}
	if err := h.Client.Patch(ctx, c, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("writing the %s annotation of the Cluster: %w", runtimev1.PendingHooksAnnotation, err)
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

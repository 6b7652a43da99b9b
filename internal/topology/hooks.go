package topology

import (
	"fmt"
	"slices"
	"strings"
	"time"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
)

// Hook names, as upstream's.
const (
	BeforeClusterCreateHook      = string(runtimehooksv1.BeforeClusterCreate)
	BeforeClusterUpgradeHook     = string(runtimehooksv1.BeforeClusterUpgrade)
	AfterControlPlaneUpgradeHook = string(runtimehooksv1.AfterControlPlaneUpgrade)
	AfterClusterUpgradeHook      = string(runtimehooksv1.AfterClusterUpgrade)
)

// BeforeClusterUpgradeHookAnnotationPrefix starts the annotations that hold an upgrade as a blocking
// BeforeClusterUpgrade hook would, as upstream's.
const BeforeClusterUpgradeHookAnnotationPrefix = "before-upgrade.hook.cluster.cluster.x-k8s.io"

// annotationHoldRetry is how often an upgrade held by annotations is looked at again without a change of
// the Cluster (upstream: twice the default sync period).
const annotationHoldRetry = 20 * time.Minute

// hook returns the answer of a blocking hook for this computation; when the caller has not called it
// yet, it is added to Desired.Hooks.Call and answered is false.
func (c *computation) hook(call HookCall) (resp HookResponse, answered bool) {
	if r, ok := c.cur.HookResponses[call.Hook]; ok {
		return r, true
	}
	if !slices.ContainsFunc(c.desired.Hooks.Call, func(h HookCall) bool { return h.Hook == call.Hook }) {
		c.desired.Hooks.Call = append(c.desired.Hooks.Call, call)
	}
	return HookResponse{}, false
}

// block records that a hook holds the Cluster.
func (c *computation) block(hook string, resp HookResponse) {
	up := &c.desired.Upgrade
	up.BlockingHook, up.HookMessage, up.HookRetryAfter = hook, resp.Message, resp.RetryAfter
}

// letThrough asks a hook that may hold the Cluster: it reports whether the hook answered without blocking,
// and records the block when it blocks. A hook that has not answered yet (it is called) holds the Cluster too.
func (c *computation) letThrough(call HookCall) bool {
	resp, answered := c.hook(call)
	switch {
	case !answered:
		return false
	case resp.Blocking():
		c.block(call.Hook, resp)
		return false
	}
	return true
}

// beforeClusterCreate asks BeforeClusterCreate before the first object of the Cluster is created; it
// reports whether the creation may go on.
func (c *computation) beforeClusterCreate() bool {
	if !c.opts.RuntimeHooks || c.cur.ControlPlane.Object != nil || c.cur.InfrastructureCluster != nil {
		return true
	}
	return c.letThrough(HookCall{Hook: BeforeClusterCreateHook})
}

// beforeClusterUpgrade asks whether the control plane may pick up a new version now: annotations
// before-upgrade.hook.cluster.cluster.x-k8s.io/* hold it as a blocking hook would; otherwise the
// BeforeClusterUpgrade hook is asked and, once it lets the upgrade start, AfterControlPlaneUpgrade and
// AfterClusterUpgrade become pending.
func (c *computation) beforeClusterUpgrade(from, to string) bool {
	if !c.opts.RuntimeHooks {
		return true
	}
	var held []string
	for key := range c.cluster.Annotations {
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
		c.block(BeforeClusterUpgradeHook, HookResponse{RetryAfter: annotationHoldRetry, Message: msg})
		return false
	}
	if !c.letThrough(HookCall{Hook: BeforeClusterUpgradeHook, FromVersion: from, ToVersion: to}) {
		return false
	}
	c.desired.Hooks.MarkPending = append(c.desired.Hooks.MarkPending, AfterControlPlaneUpgradeHook, AfterClusterUpgradeHook)
	return true
}

// afterControlPlaneUpgrade asks AfterControlPlaneUpgrade, while it is pending, once the control plane
// runs the new version; it reports whether the workers may follow.
func (c *computation) afterControlPlaneUpgrade(version string) bool {
	if !c.opts.RuntimeHooks || !hooks.IsPending(runtimehooksv1.AfterControlPlaneUpgrade, c.cluster) {
		return true
	}
	if !c.letThrough(HookCall{Hook: AfterControlPlaneUpgradeHook, ToVersion: version}) {
		return false
	}
	c.desired.Hooks.MarkDone = append(c.desired.Hooks.MarkDone, AfterControlPlaneUpgradeHook)
	return true
}

// afterClusterUpgrade asks for AfterClusterUpgrade, while it is pending, once the control plane and every
// MachineDeployment and MachinePool run the new version and nothing waits.
func (c *computation) afterClusterUpgrade() {
	if !c.opts.RuntimeHooks || !hooks.IsPending(runtimehooksv1.AfterClusterUpgrade, c.cluster) {
		return
	}
	if hooks.IsPending(runtimehooksv1.AfterControlPlaneUpgrade, c.cluster) && !slices.Contains(c.desired.Hooks.MarkDone, AfterControlPlaneUpgradeHook) {
		return
	}
	if !c.desired.Upgrade.upgraded() {
		return
	}
	c.desired.Hooks.CallAfterApply = append(c.desired.Hooks.CallAfterApply, HookCall{Hook: AfterClusterUpgradeHook, ToVersion: c.topology.Version})
}

// upgraded: the control plane is stable at the version and no MachineDeployment or MachinePool upgrades
// or waits.
func (u *UpgradeStatus) upgraded() bool {
	return u.controlPlaneStable() && u.BlockingHook == "" &&
		len(u.MachineDeploymentsPendingCreate) == 0 && len(u.MachineDeploymentsPendingUpgrade) == 0 &&
		len(u.MachineDeploymentsDeferred) == 0 && len(u.MachineDeploymentsUpgrading) == 0 &&
		len(u.MachinePoolsPendingCreate) == 0 && len(u.MachinePoolsPendingUpgrade) == 0 &&
		len(u.MachinePoolsDeferred) == 0 && len(u.MachinePoolsUpgrading) == 0
}

// hookHoldsWorkers reports whether AfterControlPlaneUpgrade holds the workers (blocking, or not answered
// yet).
func (c *computation) hookHoldsWorkers() bool {
	if c.desired.Upgrade.BlockingHook == AfterControlPlaneUpgradeHook {
		return true
	}
	return slices.ContainsFunc(c.desired.Hooks.Call, func(h HookCall) bool { return h.Hook == AfterControlPlaneUpgradeHook })
}

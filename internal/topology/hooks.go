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
	BeforeClusterCreateHook       = string(runtimehooksv1.BeforeClusterCreate)
	BeforeClusterUpgradeHook      = string(runtimehooksv1.BeforeClusterUpgrade)
	BeforeControlPlaneUpgradeHook = string(runtimehooksv1.BeforeControlPlaneUpgrade)
	AfterControlPlaneUpgradeHook  = string(runtimehooksv1.AfterControlPlaneUpgrade)
	BeforeWorkersUpgradeHook      = string(runtimehooksv1.BeforeWorkersUpgrade)
	AfterWorkersUpgradeHook       = string(runtimehooksv1.AfterWorkersUpgrade)
	AfterClusterUpgradeHook       = string(runtimehooksv1.AfterClusterUpgrade)
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

// planCall is a hook call with the upgrade plan's remaining steps.
func (c *computation) planCall(hook, from, to string) HookCall {
	up := &c.desired.Upgrade
	return HookCall{Hook: hook, FromVersion: from, ToVersion: to,
		ControlPlaneUpgrades: slices.Clone(up.ControlPlanePlan), WorkersUpgrades: slices.Clone(up.WorkersPlan)}
}

// pending reports whether hook is in the Cluster's pending-hooks annotation and this computation does not
// mark it done.
func (c *computation) pending(hook string) bool {
	return hooks.IsPending(runtimehooksv1.Hook(hook), c.cluster) && !slices.Contains(c.desired.Hooks.MarkDone, hook)
}

// callPending asks a hook while it is pending; once it lets the Cluster go on, it is marked done. It
// reports whether the Cluster may go on.
func (c *computation) callPending(call HookCall) bool {
	if !c.opts.RuntimeHooks || !c.pending(call.Hook) {
		return true
	}
	if !c.letThrough(call) {
		return false
	}
	c.desired.Hooks.MarkDone = append(c.desired.Hooks.MarkDone, call.Hook)
	return true
}

// beforeClusterUpgrade asks, once per upgrade (while AfterClusterUpgrade is not pending), whether the
// control plane may start an upgrade to spec.topology.version: annotations
// before-upgrade.hook.cluster.cluster.x-k8s.io/* hold it as a blocking hook would; otherwise the
// BeforeClusterUpgrade hook is asked and, once it lets the upgrade start, AfterClusterUpgrade becomes
// pending (which also keeps BeforeClusterUpgrade from being asked again at the next steps).
func (c *computation) beforeClusterUpgrade(from, to string) bool {
	if !c.opts.RuntimeHooks || c.pending(AfterClusterUpgradeHook) {
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
		msg := fmt.Sprintf("annotations %s are set", strings.Join(held, ", "))
		if len(held) == 1 {
			msg = fmt.Sprintf("annotation %s is set", held[0])
		}
		c.block(BeforeClusterUpgradeHook, HookResponse{RetryAfter: annotationHoldRetry, Message: msg})
		return false
	}
	if !c.letThrough(c.planCall(BeforeClusterUpgradeHook, from, to)) {
		return false
	}
	c.desired.Hooks.MarkPending = append(c.desired.Hooks.MarkPending, AfterClusterUpgradeHook)
	return true
}

// beforeControlPlaneUpgrade asks BeforeControlPlaneUpgrade before the control plane takes the next step
// of the plan; once it lets the step start, AfterControlPlaneUpgrade becomes pending, and
// BeforeWorkersUpgrade and AfterWorkersUpgrade too when the workers take the same step.
func (c *computation) beforeControlPlaneUpgrade(from, next string) bool {
	if !c.opts.RuntimeHooks {
		return true
	}
	if !c.letThrough(c.planCall(BeforeControlPlaneUpgradeHook, from, next)) {
		return false
	}
	mark := []string{AfterControlPlaneUpgradeHook}
	if up := &c.desired.Upgrade; len(up.WorkersPlan) > 0 && up.WorkersPlan[0] == next {
		mark = append(mark, BeforeWorkersUpgradeHook, AfterWorkersUpgradeHook)
	}
	c.desired.Hooks.MarkPending = append(c.desired.Hooks.MarkPending, mark...)
	return true
}

// afterControlPlaneUpgrade asks AfterControlPlaneUpgrade, while it is pending, once the control plane
// runs the step's version; it reports whether the upgrade may go on.
func (c *computation) afterControlPlaneUpgrade(version string) bool {
	return c.callPending(c.planCall(AfterControlPlaneUpgradeHook, "", version))
}

// beforeWorkersUpgrade asks BeforeWorkersUpgrade, while it is pending, before the workers take the
// control plane's version; it reports whether the upgrade may go on.
func (c *computation) beforeWorkersUpgrade(version string) bool {
	return c.callPending(c.planCall(BeforeWorkersUpgradeHook, c.desired.Upgrade.MinWorkersVersion, version))
}

// afterWorkersUpgrade asks AfterWorkersUpgrade, while it is pending, once the workers run the control
// plane's version; it reports whether the upgrade may go on.
func (c *computation) afterWorkersUpgrade(version string) bool {
	return c.callPending(c.planCall(AfterWorkersUpgradeHook, "", version))
}

// afterClusterUpgrade asks for AfterClusterUpgrade, while it is pending, once AfterControlPlaneUpgrade and
// AfterWorkersUpgrade are done, the control plane and every MachineDeployment and MachinePool run the
// new version and nothing waits. The caller calls it once the desired state is applied and marks it done
// unless it blocks.
func (c *computation) afterClusterUpgrade() {
	if !c.opts.RuntimeHooks || !c.pending(AfterClusterUpgradeHook) ||
		c.pending(AfterControlPlaneUpgradeHook) || c.pending(AfterWorkersUpgradeHook) || !c.desired.Upgrade.upgraded() {
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

// hookHoldsWorkers reports whether AfterControlPlaneUpgrade or BeforeWorkersUpgrade holds the workers
// (blocking, or not answered yet).
func (c *computation) hookHoldsWorkers() bool {
	for _, hook := range []string{AfterControlPlaneUpgradeHook, BeforeWorkersUpgradeHook} {
		if c.desired.Upgrade.BlockingHook == hook || slices.ContainsFunc(c.desired.Hooks.Call, func(h HookCall) bool { return h.Hook == hook }) {
			return true
		}
	}
	return false
}

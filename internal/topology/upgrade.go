package topology

import (
	"fmt"
	"strconv"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// UpgradeConcurrencyAnnotation on a Cluster sets how many MachineDeployments may upgrade at once (1 when
// absent), as upstream's topology.cluster.x-k8s.io/upgrade-concurrency.
const UpgradeConcurrencyAnnotation = "topology.cluster.x-k8s.io/upgrade-concurrency"

// Hook names, as upstream's.
const (
	BeforeClusterUpgradeHook     = "BeforeClusterUpgrade"
	AfterControlPlaneUpgradeHook = "AfterControlPlaneUpgrade"
)

// controlPlaneFacts reads what the upgrade sequence needs from the control plane object.
type controlPlaneFacts struct {
	version      string
	provisioning bool
	upgrading    bool
	scaling      bool
}

func readControlPlane(obj *unstructured.Unstructured) (controlPlaneFacts, error) {
	var f controlPlaneFacts
	v, found, err := unstructured.NestedString(obj.Object, "spec", "version")
	if err != nil || !found {
		return f, fmt.Errorf("reading spec.version of %s %s: not set", obj.GetKind(), obj.GetName())
	}
	f.version = v
	statusVersion, found, _ := unstructured.NestedString(obj.Object, "status", "version")
	if !found || statusVersion == "" {
		f.provisioning = true
		return f, nil
	}
	spec, err1 := semver.ParseTolerant(v)
	status, err2 := semver.ParseTolerant(statusVersion)
	if err1 == nil && err2 == nil {
		f.upgrading = status.LT(spec)
	} else {
		f.upgrading = v != statusVersion
	}
	if replicas, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found {
		get := func(name string) (int64, bool) {
			n, ok, _ := unstructured.NestedInt64(obj.Object, "status", name)
			return n, ok
		}
		st, ok := get("replicas")
		updated, _ := get("updatedReplicas")
		ready, _ := get("readyReplicas")
		unavailable, _ := get("unavailableReplicas")
		f.scaling = !ok || st != replicas || updated != replicas || ready != replicas || unavailable > 0
	}
	return f, nil
}

// controlPlaneStable: the control plane may be upgraded or have workers upgrade against it.
func (u *UpgradeStatus) controlPlaneStable() bool {
	return !u.ControlPlaneProvisioning && !u.ControlPlaneUpgrading && !u.ControlPlaneScaling &&
		!u.ControlPlanePendingUpgrade && !u.ControlPlaneStartingUpgrade
}

// controlPlaneVersion is the version of the desired control plane: spec.topology.version, unless the
// control plane is being created, upgrading, or workers are still upgrading, or a hook holds it back.
func (c *computation) controlPlaneVersion() (string, error) {
	want := c.topology.Version
	up := &c.desired.Upgrade
	if c.cur.ControlPlane.Object == nil {
		return want, nil
	}
	f, err := readControlPlane(c.cur.ControlPlane.Object)
	if err != nil {
		return "", err
	}
	if err := checkVersionChange(f.version, want); err != nil {
		return "", err
	}
	up.ControlPlaneProvisioning = f.provisioning
	up.ControlPlaneUpgrading = f.upgrading
	up.ControlPlaneScaling = f.scaling
	up.ControlPlanePendingUpgrade = f.version != want
	if f.provisioning || f.upgrading {
		return f.version, nil
	}
	if !up.ControlPlanePendingUpgrade {
		// The control plane runs the version: ask AfterControlPlaneUpgrade before workers follow.
		if c.opts.UpgradeHooks != nil && c.cur.AfterControlPlaneUpgradePending {
			resp, err := c.opts.UpgradeHooks.AfterControlPlaneUpgrade(c.ctx, c.cluster, want)
			if err != nil {
				return "", fmt.Errorf("calling the %s hook: %w", AfterControlPlaneUpgradeHook, err)
			}
			if resp.Blocking() {
				up.BlockingHook, up.HookMessage, up.HookRetryAfter = AfterControlPlaneUpgradeHook, resp.Message, resp.RetryAfter
			}
		}
		return f.version, nil
	}
	if len(up.MachineDeploymentsUpgrading) > 0 {
		return f.version, nil
	}
	if c.opts.UpgradeHooks != nil {
		resp, err := c.opts.UpgradeHooks.BeforeClusterUpgrade(c.ctx, c.cluster, f.version, want)
		if err != nil {
			return "", fmt.Errorf("calling the %s hook: %w", BeforeClusterUpgradeHook, err)
		}
		if resp.Blocking() {
			up.BlockingHook, up.HookMessage, up.HookRetryAfter = BeforeClusterUpgradeHook, resp.Message, resp.RetryAfter
			return f.version, nil
		}
	}
	up.ControlPlanePendingUpgrade = false
	up.ControlPlaneStartingUpgrade = true
	return want, nil
}

func (c *computation) upgradeConcurrency() int {
	if v, ok := c.cluster.Annotations[UpgradeConcurrencyAnnotation]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// machineDeploymentVersion is the version of a desired MachineDeployment, and whether it is to be created
// or kept (false: a new MachineDeployment waits for the control plane).
func (c *computation) machineDeploymentVersion(mdt clusterv1.MachineDeploymentTopology, current *MachineDeploymentState) (string, bool) {
	want := c.topology.Version
	up := &c.desired.Upgrade
	hookBlocks := up.BlockingHook == AfterControlPlaneUpgradeHook
	if current == nil {
		if !c.controlPlaneInitialized() || !up.controlPlaneStable() || hookBlocks {
			up.MachineDeploymentsPendingCreate = append(up.MachineDeploymentsPendingCreate, mdt.Name)
			return "", false
		}
		return want, true
	}
	name := current.Object.Name
	have := ""
	if current.Object.Spec.Template.Spec.Version != nil {
		have = *current.Object.Spec.Template.Spec.Version
	}
	if have == want {
		return have, true
	}
	if c.deferred(mdt) {
		up.MachineDeploymentsDeferred = append(up.MachineDeploymentsDeferred, name)
		up.MachineDeploymentsPendingUpgrade = append(up.MachineDeploymentsPendingUpgrade, name)
		return have, true
	}
	if hookBlocks || !up.controlPlaneStable() || c.upgradeSlotsTaken() >= c.upgradeConcurrency() {
		if !current.Upgrading {
			up.MachineDeploymentsPendingUpgrade = append(up.MachineDeploymentsPendingUpgrade, name)
		}
		return have, true
	}
	if !current.Upgrading {
		up.MachineDeploymentsUpgrading = append(up.MachineDeploymentsUpgrading, name)
	}
	return want, true
}

func (c *computation) upgradeSlotsTaken() int {
	return len(c.desired.Upgrade.MachineDeploymentsUpgrading)
}

// controlPlaneInitialized: new MachineDeployments are created only once the control plane accepts
// requests, which the Cluster's ControlPlaneInitialized condition records.
func (c *computation) controlPlaneInitialized() bool {
	if c.cur.ControlPlane.Object == nil {
		return false
	}
	if c.cluster.Status.ControlPlaneReady {
		return true
	}
	for _, cond := range c.cluster.Status.Conditions {
		if cond.Type == clusterv1.ControlPlaneInitializedCondition && cond.Status == "True" {
			return true
		}
	}
	initialized, _, _ := unstructured.NestedBool(c.cur.ControlPlane.Object.Object, "status", "initialized")
	return initialized
}

// deferred: the MachineDeployment topology, or one before it, holds its upgrade.
func (c *computation) deferred(mdt clusterv1.MachineDeploymentTopology) bool {
	if _, ok := mdt.Metadata.Annotations[clusterv1.ClusterTopologyDeferUpgradeAnnotation]; ok {
		return true
	}
	for _, md := range c.topology.Workers.MachineDeployments {
		if _, ok := md.Metadata.Annotations[clusterv1.ClusterTopologyHoldUpgradeSequenceAnnotation]; ok {
			return true
		}
		if md.Name == mdt.Name {
			return false
		}
	}
	return false
}

// checkVersionChange refuses what admission refuses, so that nothing depends on it: a version lower than
// the control plane's, or one that skips a minor version.
func checkVersionChange(current, want string) error {
	c, err1 := semver.ParseTolerant(current)
	w, err2 := semver.ParseTolerant(want)
	if err1 != nil || err2 != nil || current == want {
		return nil
	}
	if w.LT(c) {
		return fmt.Errorf("spec.topology.version %s is lower than the control plane's version %s: versions cannot be decreased", want, current)
	}
	if w.Major != c.Major || w.Minor > c.Minor+1 {
		return fmt.Errorf("spec.topology.version %s skips a minor version from the control plane's %s: upgrade to v%d.%d.x first", want, current, c.Major, c.Minor+1)
	}
	return nil
}

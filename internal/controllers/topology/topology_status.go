package topology

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/topology"
)

// Reasons of the TopologyReconciled condition, as upstream v1.14's. Upstream's ControlPlaneUpgradePending,
// MachineDeployments/MachinePools CreatePending and UpgradePending and LifecycleHookBlocking are deprecated
// there in favour of ClusterUpgrading and no longer set.
const (
	ReconcileSucceededReason                = "ReconcileSucceeded"
	ReconcileFailedReason                   = "ReconcileFailed"
	ClusterCreatingReason                   = "ClusterCreating"
	ClusterUpgradingReason                  = "ClusterUpgrading"
	MachineDeploymentsUpgradeDeferredReason = "MachineDeploymentsUpgradeDeferred"
	MachinePoolsUpgradeDeferredReason       = "MachinePoolsUpgradeDeferred"
	ClusterClassNotReconciledReason         = "ClusterClassNotReconciled"

	// topologyReconcileFailedV1Beta1Reason is the v1beta1 reason of ReconcileFailed; the other reasons are
	// the same in both condition versions.
	topologyReconcileFailedV1Beta1Reason = "TopologyReconcileFailed"
)

// classNotReconciledMessage is upstream's message, including its missing space before ".status".
const classNotReconciledMessage = "ClusterClass not reconciled. If this condition persists please check ClusterClass status. A ClusterClass is reconciled if" +
	".status.observedGeneration == .metadata.generation is true. If this is not the case either ClusterClass reconciliation failed or the ClusterClass is paused"

// TopologyReconciledCondition is the v1beta1 condition type.
const TopologyReconciledCondition clusterv1.ConditionType = "TopologyReconciled"

// setTopologyReconciled computes the TopologyReconciled condition from what a reconcile found.
func setTopologyReconciled(cluster *clusterv1.Cluster, s *scope) {
	c := topologyReconciled(s)
	conditions.SetV1Beta2(cluster, c)
	if c.Status == metav1.ConditionTrue {
		conditions.MarkTrue(cluster, TopologyReconciledCondition)
		return
	}
	reason := c.Reason
	severity := clusterv1.ConditionSeverityInfo
	if c.Reason == ReconcileFailedReason {
		reason, severity = topologyReconcileFailedV1Beta1Reason, clusterv1.ConditionSeverityError
	}
	conditions.MarkFalse(cluster, TopologyReconciledCondition, reason, severity, "%s", c.Message)
}

// topologyReconciled is upstream's reconcileTopologyReconciledCondition: an error, then a ClusterClass not
// reconciled yet, then BeforeClusterCreate holding the creation, then any sign of an upgrade (one line per
// part of the Cluster that has not caught up), else True. Paused and deleting Clusters are not reconciled
// by this controller, so the condition keeps what it had then.
func topologyReconciled(s *scope) metav1.Condition {
	c := metav1.Condition{Type: clusterv1.ClusterTopologyReconciledV1Beta2Condition, Status: metav1.ConditionFalse}
	switch {
	case s.err != nil:
		c.Reason = ReconcileFailedReason
		c.Message = conditions.Capitalise(s.err.Error())
		return c
	case s.classNotReconciled:
		c.Reason, c.Message = ClusterClassNotReconciledReason, classNotReconciledMessage
		return c
	case s.creating && s.blockingHook == topology.BeforeClusterCreateHook:
		c.Reason, c.Message = ClusterCreatingReason, hookMessage(s, "Cluster topology creation")
		return c
	case s.desired == nil:
		// Not reached: a reconcile without an error or a ClusterClass to wait for computes the topology.
		c.Status, c.Reason = metav1.ConditionUnknown, ReconcileFailedReason
		return c
	}
	if !upgrading(s) {
		c.Status, c.Reason = metav1.ConditionTrue, ReconcileSucceededReason
		return c
	}
	c.Reason, c.Message = upgradeProgress(s)
	return c
}

// upgrading reports any sign of an upgrade in progress; as upstream, all of them are checked. A blocking
// hook counts too: every hook but BeforeClusterCreate (handled before) holds an upgrade.
func upgrading(s *scope) bool {
	u := s.desired.Upgrade
	return u.ControlPlanePendingUpgrade || u.ControlPlaneStartingUpgrade || u.ControlPlaneUpgrading ||
		len(u.MachineDeploymentsPendingUpgrade) > 0 || len(u.MachineDeploymentsUpgrading) > 0 ||
		len(u.MachineDeploymentsDeferred) > 0 || len(u.MachineDeploymentsPendingCreate) > 0 ||
		len(u.MachinePoolsPendingUpgrade) > 0 || len(u.MachinePoolsUpgrading) > 0 ||
		len(u.MachinePoolsDeferred) > 0 || len(u.MachinePoolsPendingCreate) > 0 ||
		hooks.IsPending(runtimehooksv1.AfterClusterUpgrade, s.cluster) ||
		s.blockingHook != ""
}

// upgradeProgress is the reason and the message of an upgrade in progress: ClusterUpgrading, unless
// deferred MachineDeployments (else MachinePools) alone keep it from going on.
func upgradeProgress(s *scope) (string, string) {
	u := s.desired.Upgrade
	kind, cpVersion := desiredControlPlane(s)
	cpMoving := u.ControlPlaneStartingUpgrade || u.ControlPlaneUpgrading
	reason := ClusterUpgradingReason

	var b strings.Builder
	fmt.Fprintf(&b, "Cluster is upgrading to %s", s.cluster.Spec.Topology.Version)
	if s.blockingHook != "" {
		fmt.Fprintf(&b, "\n  * %s", hookMessage(s, "upgrade"))
	}
	switch {
	case cpMoving:
		fmt.Fprintf(&b, "\n  * %s upgrading to version %s%s", kind, cpVersion, pendingVersions(u.ControlPlanePlan, cpVersion))
	case len(u.ControlPlanePlan) > 0:
		fmt.Fprintf(&b, "\n  * %s pending upgrade to version %s", kind, strings.Join(u.ControlPlanePlan, ", "))
	}

	workers := func(kind, kinds string, pendingCreate, pendingUpgrade, deferredNames, upgradingNames []string, deferredReason string) {
		upgradingSet, pendingSet, deferredSet := dedupNames(pendingUpgrade, deferredNames, upgradingNames)
		if len(upgradingSet) > 0 {
			fmt.Fprintf(&b, "\n  * %s upgrading to version %s%s", nameList(kind, kinds, upgradingSet), cpVersion, pendingVersions(u.WorkersPlan, cpVersion))
		}
		if len(pendingSet) > 0 && len(u.WorkersPlan) > 0 {
			fmt.Fprintf(&b, "\n  * %s pending upgrade to version %s", nameList(kind, kinds, pendingSet), strings.Join(u.WorkersPlan, ", "))
		}
		if len(deferredSet) > 0 {
			fmt.Fprintf(&b, "\n  * %s upgrade to version %s deferred using %s", nameList(kind, kinds, deferredSet), cpVersion, deferralAnnotations(kind))
			// The deferral holds the upgrade when nothing else moves or waits: a blocking hook comes first,
			// and MachineDeployments' deferral before MachinePools'.
			if s.blockingHook == "" && !cpMoving && len(upgradingNames) == 0 && len(pendingSet) == 0 &&
				reason != MachineDeploymentsUpgradeDeferredReason {
				reason = deferredReason
			}
		}
		if len(pendingCreate) > 0 {
			fmt.Fprintf(&b, "\n  * %s creation deferred while control plane upgrade is in progress", nameList(kind, kinds, pendingCreate))
		}
	}
	workers("MachineDeployment", "MachineDeployments", u.MachineDeploymentsPendingCreate, u.MachineDeploymentsPendingUpgrade,
		u.MachineDeploymentsDeferred, u.MachineDeploymentsUpgrading, MachineDeploymentsUpgradeDeferredReason)
	workers("MachinePool", "MachinePools", u.MachinePoolsPendingCreate, u.MachinePoolsPendingUpgrade,
		u.MachinePoolsDeferred, u.MachinePoolsUpgrading, MachinePoolsUpgradeDeferredReason)
	return reason, b.String()
}

// deferralAnnotations names the annotations that defer an upgrade, as upstream's messages do (which name
// them differently for MachineDeployments and MachinePools).
func deferralAnnotations(kind string) string {
	if kind == "MachinePool" {
		return "topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations"
	}
	return "defer-upgrade or hold-upgrade-sequence annotations"
}

// desiredControlPlane returns the kind and spec.version of the desired control plane: the version it
// runs or is moving to. Without a version there, spec.topology.version stands in.
func desiredControlPlane(s *scope) (kind, version string) {
	version = s.cluster.Spec.Topology.Version
	obj := s.desired.ControlPlane.Object
	if obj == nil {
		return "ControlPlane", version
	}
	if v, err := contract.ControlPlaneVersion(obj); err == nil && v != "" {
		version = v
	}
	return obj.GetKind(), version
}

// hookMessage is upstream's HookResponseTracker.AggregateMessage for the one hook that blocks.
func hookMessage(s *scope, action string) string {
	hook := s.blockingHook
	if s.hookMessage != "" {
		hook += ": " + s.hookMessage
	}
	return fmt.Sprintf("Following hooks are blocking %s: %s", action, hook)
}

// pendingVersions lists the versions of a plan other than version, as " (v1, v2 pending)"; empty when
// there are none.
func pendingVersions(plan []string, version string) string {
	var rest []string
	for _, v := range plan {
		if v != version {
			rest = append(rest, v)
		}
	}
	if len(rest) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s pending)", strings.Join(rest, ", "))
}

// dedupNames sorts the names of workers into one list each: an upgrading worker is neither deferred nor
// pending, and a deferred one is not pending.
func dedupNames(pendingUpgrade, deferredNames, upgradingNames []string) (upgradingSet, pendingSet, deferredSet []string) {
	up := sets.New(upgradingNames...)
	deferred := sets.New(deferredNames...).Difference(up)
	pending := sets.New(pendingUpgrade...).Difference(up).Difference(deferred)
	return sets.List(up), sets.List(pending), sets.List(deferred)
}

// nameList names workers in a condition message: one by kind and name, up to three by kinds and names,
// more by the first three in order and how many others.
func nameList(kind, kinds string, names []string) string {
	names = slices.Sorted(slices.Values(names))
	switch {
	case len(names) == 1:
		return fmt.Sprintf("%s %s", kind, names[0])
	case len(names) <= 3:
		return fmt.Sprintf("%s %s", kinds, strings.Join(names, ", "))
	default:
		return fmt.Sprintf("%s %s, ... (%d more)", kinds, strings.Join(names[:3], ", "), len(names)-3)
	}
}

// setUpgradePlan writes the upgrade plans of the control plane and the workers in the Cluster's v1beta2
// status when the reconcile computed them, and leaves them as they are otherwise (upstream's
// reconcileUpgradePlan). The other fields of those status blocks are the Cluster controller's.
func setUpgradePlan(cluster *clusterv1.Cluster, s *scope) {
	if s.desired == nil || !s.desired.Upgrade.PlanComputed {
		return
	}
	plan := func(versions []string) []clusterv1.StatusUpgradePlanVersion {
		var out []clusterv1.StatusUpgradePlanVersion
		for _, v := range versions {
			out = append(out, clusterv1.StatusUpgradePlanVersion{Version: v})
		}
		return out
	}
	cp, workers := plan(s.desired.Upgrade.ControlPlanePlan), plan(s.desired.Upgrade.WorkersPlan)
	st := cluster.Status.V1Beta2
	if st == nil {
		if cp == nil && workers == nil {
			return
		}
		st = &clusterv1.ClusterV1Beta2Status{}
		cluster.Status.V1Beta2 = st
	}
	if st.ControlPlane == nil && cp != nil {
		st.ControlPlane = &clusterv1.ClusterControlPlaneStatus{}
	}
	if st.ControlPlane != nil {
		st.ControlPlane.UpgradePlan = cp
	}
	if st.Workers == nil && workers != nil {
		st.Workers = &clusterv1.WorkersStatus{}
	}
	if st.Workers != nil {
		st.Workers.UpgradePlan = workers
	}
}

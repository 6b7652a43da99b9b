package topology

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// Reasons of the TopologyReconciled condition, as upstream's.
const (
	ReconcileSucceededReason                = "ReconcileSucceeded"
	ReconcileFailedReason                   = "ReconcileFailed"
	ClusterCreatingReason                   = "ClusterCreating"
	ClusterUpgradingReason                  = "ClusterUpgrading"
	ControlPlaneUpgradePendingReason        = "ControlPlaneUpgradePending"
	MachineDeploymentsCreatePendingReason   = "MachineDeploymentsCreatePending"
	MachineDeploymentsUpgradePendingReason  = "MachineDeploymentsUpgradePending"
	MachineDeploymentsUpgradeDeferredReason = "MachineDeploymentsUpgradeDeferred"
	MachinePoolsCreatePendingReason         = "MachinePoolsCreatePending"
	MachinePoolsUpgradePendingReason        = "MachinePoolsUpgradePending"
	MachinePoolsUpgradeDeferredReason       = "MachinePoolsUpgradeDeferred"
	LifecycleHookBlockingReason             = "LifecycleHookBlocking"
	ClusterClassNotReconciledReason         = "ClusterClassNotReconciled"

	// v1beta1 reasons of TopologyReconciled.
	topologyReconcileFailedV1Beta1Reason = "TopologyReconcileFailed"
	clusterClassOutdatedV1Beta1Reason    = "ClusterClassOutdated"
)

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
	switch c.Reason {
	case ReconcileFailedReason:
		reason = topologyReconcileFailedV1Beta1Reason
	case ClusterClassNotReconciledReason:
		reason = clusterClassOutdatedV1Beta1Reason
	}
	severity := clusterv1.ConditionSeverityInfo
	if c.Reason == ReconcileFailedReason {
		severity = clusterv1.ConditionSeverityError
	}
	conditions.MarkFalse(cluster, TopologyReconciledCondition, reason, severity, "%s", c.Message)
}

func topologyReconciled(s *scope) metav1.Condition {
	c := metav1.Condition{Type: clusterv1.ClusterTopologyReconciledV1Beta2Condition, Status: metav1.ConditionFalse}
	switch {
	case s.err != nil:
		c.Reason = ReconcileFailedReason
		c.Message = conditions.Capitalise(s.err.Error())
		return c
	case s.classNotReconciled:
		c.Reason = ClusterClassNotReconciledReason
		c.Message = "ClusterClass not reconciled. If this condition persists please check ClusterClass status. A ClusterClass is reconciled if .status.observedGeneration == .metadata.generation is true. If this is not the case either ClusterClass reconciliation failed or the ClusterClass is paused"
		return c
	case s.blockingHook != "":
		c.Reason = LifecycleHookBlockingReason
		// As upstream's HookResponseTracker.AggregateMessage, in both condition versions.
		c.Message = fmt.Sprintf("hook %q is blocking", s.blockingHook)
		if s.hookMessage != "" {
			c.Message += ": " + s.hookMessage
		}
		return c
	case s.desired == nil:
		c.Status, c.Reason = metav1.ConditionUnknown, ReconcileFailedReason
		return c
	}
	u := s.desired.Upgrade
	version := s.cluster.Spec.Topology.Version
	var msgs []string
	reason := ""
	switch {
	case u.ControlPlanePendingUpgrade:
		reason = ControlPlaneUpgradePendingReason
		msg := fmt.Sprintf("Control plane rollout and upgrade to version %s on hold", version)
		if u.ControlPlaneWaitingFor != "" {
			msg += ": " + u.ControlPlaneWaitingFor
		}
		msgs = append(msgs, msg)
	case u.ControlPlaneStartingUpgrade || u.ControlPlaneUpgrading:
		reason = ClusterUpgradingReason
		msgs = append(msgs, fmt.Sprintf("Control plane upgrading to version %s", version))
	}
	workers := func(kind string, pendingCreate, pendingUpgrade, deferred, upgrading []string, createReason, pendingReason, deferredReason string) {
		if len(pendingCreate) > 0 {
			if reason == "" {
				reason = createReason
			}
			msgs = append(msgs, fmt.Sprintf("%s(s) %s creation on hold", kind, strings.Join(pendingCreate, ", ")))
		}
		if len(pendingUpgrade) > 0 {
			if reason == "" {
				reason = pendingReason
				if len(deferred) == len(pendingUpgrade) {
					reason = deferredReason
				}
			}
			msgs = append(msgs, fmt.Sprintf("%s(s) %s rollout and upgrade to version %s on hold", kind, strings.Join(pendingUpgrade, ", "), version))
		}
		if len(upgrading) > 0 {
			if reason == "" {
				reason = ClusterUpgradingReason
			}
			msgs = append(msgs, fmt.Sprintf("%s(s) %s upgrading to version %s", kind, strings.Join(upgrading, ", "), version))
		}
	}
	workers("MachineDeployment", u.MachineDeploymentsPendingCreate, u.MachineDeploymentsPendingUpgrade, u.MachineDeploymentsDeferred,
		u.MachineDeploymentsUpgrading, MachineDeploymentsCreatePendingReason, MachineDeploymentsUpgradePendingReason, MachineDeploymentsUpgradeDeferredReason)
	workers("MachinePool", u.MachinePoolsPendingCreate, u.MachinePoolsPendingUpgrade, u.MachinePoolsDeferred,
		u.MachinePoolsUpgrading, MachinePoolsCreatePendingReason, MachinePoolsUpgradePendingReason, MachinePoolsUpgradeDeferredReason)
	if reason == "" && s.creating {
		reason = ClusterCreatingReason
		msgs = append(msgs, "Cluster is creating")
	}
	if reason != "" {
		c.Reason = reason
		c.Message = strings.Join(msgs, "\n")
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, ReconcileSucceededReason
	return c
}

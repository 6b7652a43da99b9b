package machinehealthcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// target is one Machine a MachineHealthCheck checks, with what was found of its Node.
type target struct {
	// machine is the Machine whose conditions the reconcile sets; original is the Machine as listed.
	machine, original *clusterv1.Machine
	// node is the Machine's Node; nil when it has none yet, or when the workload cluster was not looked at.
	node *corev1.Node
	// nodeMissing is true when the Machine has a nodeRef but the Node is gone.
	nodeMissing bool
}

func (t *target) nodeName() string {
	if t.node != nil {
		return t.node.Name
	}
	return ""
}

// verdict is the outcome of a health check of one target.
type verdict struct {
	// unhealthy is true when the Machine needs remediation; v1beta1 and v1beta2 are then the
	// HealthCheckSucceeded conditions to set.
	unhealthy bool
	v1beta1   clusterv1.Condition
	v1beta2   metav1.Condition
	// nextCheck, when not zero, is when the Machine may become unhealthy if nothing changes (a Node
	// condition held for less than its timeout, a Node that has not appeared yet).
	nextCheck time.Duration
}

func unhealthy(reason string, message string, v1beta2Reason, v1beta2Message string) verdict {
	return verdict{
		unhealthy: true,
		v1beta1: clusterv1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition, Status: corev1.ConditionFalse,
			Severity: clusterv1.ConditionSeverityWarning, Reason: reason, Message: message},
		v1beta2: metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: v1beta2Reason, Message: v1beta2Message},
	}
}

// check decides whether a target needs remediation, by upstream's rules in upstream's order: the
// remediate-machine annotation, a terminal failure, a deleted Node; then, once the Cluster's control plane
// is initialized (except for control plane Machines) and its infrastructure ready, a Node that did not
// appear within nodeStartupTimeout (0 disables this check) and Node conditions held for their timeout.
func check(t *target, cluster *clusterv1.Cluster, spec *clusterv1.MachineHealthCheckSpec, nodeStartupTimeout time.Duration, now time.Time) verdict {
	v := checkNode(t, cluster, spec.UnhealthyConditions, nodeStartupTimeout, now)
	if v.unhealthy || !evaluated(t, cluster) {
		return v
	}
	// The Machine's own conditions, whatever its Node's state (upstream v1.14's machine checks).
	machine := checkMachine(t.machine, spec.UnhealthyMachineConditions, now)
	if machine.unhealthy {
		return machine
	}
	if machine.nextCheck > 0 && (v.nextCheck == 0 || machine.nextCheck < v.nextCheck) {
		v.nextCheck = machine.nextCheck
	}
	return v
}

// evaluated reports whether a Machine's health is evaluated yet: once its Cluster's control plane is
// initialized (control plane Machines excepted, so that the first one can be remediated) and the Cluster's
// infrastructure is ready.
func evaluated(t *target, cluster *clusterv1.Cluster) bool {
	_, controlPlane := t.machine.Labels[clusterv1.MachineControlPlaneLabel]
	return (controlPlaneInitialized(cluster) || controlPlane) && infrastructureReady(cluster)
}

// checkMachine checks the Machine's v1beta2 conditions against unhealthyMachineConditions: a condition
// held with the given status for its timeout makes the Machine unhealthy, with upstream v1.14's reasons and
// messages (every such condition is named).
func checkMachine(m *clusterv1.Machine, unhealthyMachineConditions []clusterv1.UnhealthyMachineCondition, now time.Time) verdict {
	var messages []string
	var next time.Duration
	for _, c := range unhealthyMachineConditions {
		mc := conditions.GetV1Beta2(m, c.Type)
		if mc == nil || mc.Status != c.Status {
			continue
		}
		if mc.LastTransitionTime.Add(c.Timeout.Duration).Before(now) {
			messages = append(messages, fmt.Sprintf("Condition %s on Machine is reporting status %s with reason %s for more than %s", c.Type, c.Status, mc.Reason, c.Timeout.Duration))
			continue
		}
		if n := c.Timeout.Duration - now.Sub(mc.LastTransitionTime.Time) + time.Second; n > 0 && (next == 0 || n < next) {
			next = n
		}
	}
	if len(messages) == 0 {
		return verdict{nextCheck: next}
	}
	return unhealthy(clusterv1.UnhealthyMachineConditionReason, strings.Join(messages, "; "),
		clusterv1.MachineHealthCheckUnhealthyMachineV1Beta2Reason, "Health check failed:\n  * "+strings.Join(messages, "\n  * "))
}

// checkNode decides on everything but the Machine's own conditions.
func checkNode(t *target, cluster *clusterv1.Cluster, unhealthyConditions []clusterv1.UnhealthyCondition, nodeStartupTimeout time.Duration, now time.Time) verdict {
	m := t.machine
	if _, ok := m.Annotations[clusterv1.RemediateMachineAnnotation]; ok {
		return unhealthy(clusterv1.HasRemediateMachineAnnotationReason, "Marked for remediation via remediate-machine annotation",
			clusterv1.MachineHealthCheckHasRemediateAnnotationV1Beta2Reason,
			"Health check failed: marked for remediation via cluster.x-k8s.io/remediate-machine annotation")
	}
	if m.Status.FailureReason != nil {
		msg := fmt.Sprintf("FailureReason: %v", *m.Status.FailureReason)
		return unhealthy(clusterv1.MachineHasFailureReason, msg, clusterv1.MachineHasFailureReason, "Health check failed: "+msg)
	}
	if m.Status.FailureMessage != nil {
		msg := fmt.Sprintf("FailureMessage: %v", *m.Status.FailureMessage)
		return unhealthy(clusterv1.MachineHasFailureReason, msg, clusterv1.MachineHasFailureReason, "Health check failed: "+msg)
	}
	if t.nodeMissing {
		return unhealthy(clusterv1.NodeNotFoundReason, "", clusterv1.MachineHealthCheckNodeDeletedV1Beta2Reason,
			fmt.Sprintf("Health check failed: Node %s has been deleted", m.Status.NodeRef.Name))
	}

	// Nothing is held against a Machine before its Cluster can have Nodes, except against control plane
	// Machines, so that the first one can be remediated.
	if !evaluated(t, cluster) {
		return verdict{}
	}

	if t.node == nil {
		if nodeStartupTimeout == 0 {
			return verdict{}
		}
		// The clock starts at the latest of the Machine's creation, the control plane's initialization, the
		// Cluster's and the Machine's infrastructure readiness.
		start := m.CreationTimestamp.Time
		for _, ts := range []*metav1.Time{
			trueSince(cluster, clusterv1.ControlPlaneInitializedCondition),
			trueSince(cluster, clusterv1.InfrastructureReadyCondition),
			trueSince(m, clusterv1.InfrastructureReadyCondition),
		} {
			if ts != nil && ts.After(start) {
				start = ts.Time
			}
		}
		if start.Add(nodeStartupTimeout).Before(now) {
			return unhealthy(clusterv1.NodeStartupTimeoutReason, fmt.Sprintf("Node failed to report startup in %s", nodeStartupTimeout),
				clusterv1.MachineHealthCheckNodeStartupTimeoutV1Beta2Reason,
				fmt.Sprintf("Health check failed: Node failed to report startup in %s", nodeStartupTimeout))
		}
		return verdict{nextCheck: nodeStartupTimeout - now.Sub(start) + time.Second}
	}

	var next time.Duration
	for _, c := range unhealthyConditions {
		nc := nodeCondition(t.node, c.Type)
		if nc == nil || nc.Status != c.Status {
			continue
		}
		if nc.LastTransitionTime.Add(c.Timeout.Duration).Before(now) {
			return unhealthy(clusterv1.UnhealthyNodeConditionReason,
				fmt.Sprintf("Condition %s on node is reporting status %s for more than %s", c.Type, c.Status, c.Timeout.Duration),
				clusterv1.MachineHealthCheckUnhealthyNodeV1Beta2Reason,
				fmt.Sprintf("Health check failed: Condition %s on Node is reporting status %s for more than %s", c.Type, c.Status, c.Timeout.Duration))
		}
		if n := c.Timeout.Duration - now.Sub(nc.LastTransitionTime.Time) + time.Second; n > 0 && (next == 0 || n < next) {
			next = n
		}
	}
	return verdict{nextCheck: next}
}

// controlPlaneInitialized reports whether a Cluster's control plane accepts requests (v1beta1
// status.controlPlaneReady or the ControlPlaneInitialized condition).
func controlPlaneInitialized(c *clusterv1.Cluster) bool {
	return c.Status.ControlPlaneReady || conditions.IsTrue(c, clusterv1.ControlPlaneInitializedCondition)
}

func infrastructureReady(c *clusterv1.Cluster) bool {
	return c.Status.InfrastructureReady || conditions.IsTrue(c, clusterv1.InfrastructureReadyCondition)
}

// trueSince returns when a True condition became True, or nil.
func trueSince(obj conditions.Getter, t clusterv1.ConditionType) *metav1.Time {
	c := conditions.Get(obj, t)
	if c == nil || c.Status != corev1.ConditionTrue {
		return nil
	}
	return &c.LastTransitionTime
}

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// skipReason says why a selected Machine is not checked at all: it is paused or opted out of remediation.
func skipReason(m *clusterv1.Machine) string {
	if _, ok := m.Annotations[clusterv1.PausedAnnotation]; ok {
		return fmt.Sprintf("Machine has the %s annotation", clusterv1.PausedAnnotation)
	}
	if _, ok := m.Annotations[clusterv1.MachineSkipRemediationAnnotation]; ok {
		return fmt.Sprintf("Machine has the %s annotation", clusterv1.MachineSkipRemediationAnnotation)
	}
	return ""
}

// getTargets lists the Machines of the MachineHealthCheck's Cluster that its selector matches, and, when
// remote is not nil, their Nodes. indexed says that c lists Machines through reconciler.ClusterNameIndex.
func getTargets(ctx context.Context, c client.Reader, remote client.Reader, mhc *clusterv1.MachineHealthCheck, indexed bool) ([]*target, []string, error) {
	selector, err := metav1.LabelSelectorAsSelector(metav1.CloneSelectorAndAddLabel(&mhc.Spec.Selector, clusterv1.ClusterNameLabel, mhc.Spec.ClusterName))
	if err != nil {
		return nil, nil, fmt.Errorf("spec.selector is invalid: %w", err)
	}
	machines := &clusterv1.MachineList{}
	opts := []client.ListOption{client.InNamespace(mhc.Namespace), client.MatchingLabelsSelector{Selector: selector}}
	if indexed {
		opts = append(opts, client.MatchingFields{reconciler.ClusterNameIndex: mhc.Spec.ClusterName})
	}
	if err := c.List(ctx, machines, opts...); err != nil {
		return nil, nil, fmt.Errorf("listing Machines: %w", err)
	}
	var targets []*target
	var skipped []string
	for i := range machines.Items {
		m := &machines.Items[i]
		if why := skipReason(m); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", m.Name, why))
			continue
		}
		t := &target{machine: m, original: m.DeepCopy()}
		if remote != nil && m.Status.NodeRef != nil {
			node := &corev1.Node{}
			err := remote.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)
			switch {
			case apierrors.IsNotFound(err):
				t.nodeMissing = true
			case err != nil:
				return nil, nil, fmt.Errorf("getting Node %s: %w", m.Status.NodeRef.Name, err)
			default:
				t.node = node
			}
		}
		targets = append(targets, t)
	}
	return targets, skipped, nil
}

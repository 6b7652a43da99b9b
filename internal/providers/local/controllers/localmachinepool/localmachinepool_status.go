package localmachinepool

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// facts are what a reconcile observed, from which the status is computed.
type facts struct {
	paused   bool
	deleting bool
	// waiting is the reason the instances are not all registered yet.
	waiting string
	// notLocal: the Cluster's infrastructure is not a LocalCluster.
	notLocal bool
	// bootstrapInvalid says why the bootstrap data cannot be used.
	bootstrapInvalid string
	// registrationFailed: the backend failed to run or remove an instance.
	registrationFailed bool
	// registered and desired count the instances with a registered Node and those wanted; set once the
	// instances were looked at.
	registered, desired int
	counted             bool
}

// setStatus computes the status of a LocalMachinePool.
func setStatus(pool *infrav1.LocalMachinePool, f facts) {
	conditions.SetV1Beta2(pool, reconciler.ProviderPausedCondition(f.paused))
	if f.paused {
		return
	}
	pool.Status.Replicas = int32(len(pool.Spec.ProviderIDList))
	// Once every instance was registered, the pool is provisioned from then on; a pool of 0 replicas is
	// provisioned as soon as its instances were looked at.
	if f.counted && f.waiting == "" && f.registered == f.desired && !f.registrationFailed {
		pool.Status.Ready = true
		pool.Status.Initialization = &infrav1.LocalMachinePoolInitializationStatus{Provisioned: ptr.To(true)}
	}
	c := registeredCondition(f)
	if c == nil {
		return
	}
	conditions.Set(pool, *c)
	conditions.SetSummary(pool, infrav1.NodesRegisteredCondition)
	for _, t := range []clusterv1.ConditionType{infrav1.NodesRegisteredCondition, clusterv1.ReadyCondition} {
		v1 := conditions.Get(pool, t)
		reason := v1.Reason
		if reason == "" {
			reason = string(t)
			if t == infrav1.NodesRegisteredCondition {
				reason = infrav1.NodesRegisteredReason
			}
		}
		conditions.SetV1Beta2(pool, metav1.Condition{Type: string(t), Status: metav1.ConditionStatus(v1.Status), Reason: reason,
			Message: v1.Message, ObservedGeneration: pool.Generation})
	}
}

// registeredCondition returns the NodesRegistered condition the facts call for, nil when they say nothing.
func registeredCondition(f facts) *clusterv1.Condition {
	notRegistered := func(reason string, severity clusterv1.ConditionSeverity, message string) *clusterv1.Condition {
		return &clusterv1.Condition{Type: infrav1.NodesRegisteredCondition, Status: corev1.ConditionFalse, Reason: reason, Severity: severity, Message: message}
	}
	switch {
	case f.deleting:
		return notRegistered(clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, "Removing the pool's Nodes")
	case f.notLocal:
		return notRegistered(infrav1.InvalidConfigurationReason, clusterv1.ConditionSeverityError,
			"The Cluster's infrastructure is not a LocalCluster: a LocalMachinePool runs in a LocalCluster's workload cluster")
	case f.bootstrapInvalid != "":
		return notRegistered(infrav1.BootstrapDataInvalidReason, clusterv1.ConditionSeverityError, f.bootstrapInvalid)
	case f.registrationFailed:
		return notRegistered(infrav1.NodeRegistrationFailedReason, clusterv1.ConditionSeverityWarning, "Running the pool's instances failed; see the provider's logs")
	case f.waiting == infrav1.WaitingForClusterInfrastructureReason:
		return notRegistered(f.waiting, clusterv1.ConditionSeverityInfo, "Waiting for the Cluster's infrastructure to be ready")
	case f.waiting == infrav1.WaitingForBootstrapDataReason:
		return notRegistered(f.waiting, clusterv1.ConditionSeverityInfo, "Waiting for the MachinePool's bootstrap data secret")
	case !f.counted:
		return nil
	case f.registered < f.desired:
		return notRegistered(infrav1.WaitingForControlPlaneReason, clusterv1.ConditionSeverityInfo,
			fmt.Sprintf("%d of %d Nodes registered", f.registered, f.desired))
	default:
		return &clusterv1.Condition{Type: infrav1.NodesRegisteredCondition, Status: corev1.ConditionTrue}
	}
}

package localcluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// facts are what a reconcile found; setStatus derives the status from them.
type facts struct {
	// paused: the Cluster or the LocalCluster is paused; nothing else was looked at.
	paused bool
	// deleting: the LocalCluster is being deleted; deleteFailed: stopping or cleaning up failed.
	deleting, deleteFailed bool
	// failure is a terminal problem of the spec.
	failure *failure
	// caError: the `<cluster>-ca` Secret could not be read or created.
	caError bool
	// backendError: the backend could not start the cluster (see the provider's log).
	backendError bool
	// backend is the state of the workload control plane, when the backend was asked.
	backend *backend.ClusterStatus
}

// failure is a terminal failure, for status.failureReason and failureMessage.
type failure struct {
	reason  clusterv1.ClusterStatusError
	message string
}

// setStatus computes the LocalCluster's status from the facts of a reconcile: the Paused condition always;
// the rest only when not paused. status.ready and status.initialization.provisioned, once true, stay true.
func setStatus(lc *infrav1.LocalCluster, f facts) {
	conditions.SetV1Beta2(lc, reconciler.ProviderPausedCondition(f.paused))
	if f.paused {
		return
	}

	running := processesRunning(f)
	if running == nil {
		return // nothing was looked at: keep the conditions as they are
	}
	conditions.Set(lc, *running)
	conditions.SetSummary(lc, infrav1.ProcessesRunningCondition)
	conditions.MirrorOwnV1Beta2(lc, infrav1.ProcessesRunningCondition, infrav1.ProcessesRunningReason)
	conditions.MirrorOwnV1Beta2(lc, clusterv1.ReadyCondition, "Ready")

	if f.failure != nil {
		lc.Status.FailureReason = ptr.To(f.failure.reason)
		lc.Status.FailureMessage = ptr.To(f.failure.message)
	}
	if f.backend != nil && f.backend.Ready {
		lc.Status.Ready = true
		lc.Status.Initialization = &infrav1.LocalClusterInitializationStatus{Provisioned: ptr.To(true)}
	}
	if lc.Status.Ready {
		lc.Status.FailureDomains = lc.Spec.FailureDomains
	}
}

// processesRunning returns the ProcessesRunning condition the facts call for, or nil when they say
// nothing about it.
func processesRunning(f facts) *clusterv1.Condition {
	notRunning := func(reason string, severity clusterv1.ConditionSeverity, message string) *clusterv1.Condition {
		return &clusterv1.Condition{Type: infrav1.ProcessesRunningCondition, Status: corev1.ConditionFalse, Reason: reason, Severity: severity, Message: message}
	}
	switch {
	case f.deleting && f.deleteFailed:
		return notRunning(clusterv1.DeletionFailedReason, clusterv1.ConditionSeverityWarning, "Stopping the processes or removing their data failed; see the provider's logs")
	case f.deleting:
		return notRunning(clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, "Stopping the cluster's processes and removing their data")
	case f.failure != nil:
		return notRunning(infrav1.InvalidConfigurationReason, clusterv1.ConditionSeverityError, conditions.Capitalise(f.failure.message))
	case f.caError:
		return notRunning(infrav1.WaitingForCertificateAuthorityReason, clusterv1.ConditionSeverityWarning, "Cannot read or create the cluster's certificate Secrets; see the provider's logs")
	case f.backendError:
		return notRunning(infrav1.ProcessesFailedReason, clusterv1.ConditionSeverityError, "Cannot start the cluster's endpoint; see the provider's logs")
	case f.backend == nil:
		return nil
	case f.backend.Ready:
		return &clusterv1.Condition{Type: infrav1.ProcessesRunningCondition, Status: corev1.ConditionTrue}
	case f.backend.Reason == infrav1.ProcessesFailedReason:
		return notRunning(f.backend.Reason, clusterv1.ConditionSeverityWarning, f.backend.Message)
	default:
		return notRunning(f.backend.Reason, clusterv1.ConditionSeverityInfo, f.backend.Message)
	}
}

package localmachine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// facts are what a reconcile found; setStatus derives the status from them.
type facts struct {
	// paused: the Cluster or the LocalMachine is paused; nothing else was looked at.
	paused bool
	// deleting: the LocalMachine is being deleted; deleteFailed: removing the Node failed.
	deleting, deleteFailed bool
	// failure is a terminal problem of the spec.
	failure *failure
	// waiting is the reason the Node is not registered yet (a *Reason constant of the API).
	waiting string
	// notLocal: the Cluster's infrastructure is not a LocalCluster, so there is nowhere to register.
	notLocal bool
	// registrationFailed: registering the Node failed; the reconcile is retried.
	registrationFailed bool
	// registered: the Node is registered, with these addresses.
	registered bool
	addresses  []clusterv1.MachineAddress
	// failureDomain is the failure domain the Node was registered in, if any.
	failureDomain string
	// startupStart is when the simulated start-up began, once it has.
	startupStart *metav1.Time
	// bootstrapInvalid says why the Machine's bootstrap data cannot be used.
	bootstrapInvalid string
	// controlPlane: the machine is a control plane machine; machine is what the backend reported of it.
	controlPlane bool
	machine      *backend.MachineStatus
}

// failure is a terminal failure, for status.failureReason and failureMessage.
type failure struct {
	reason  clusterv1.MachineStatusError
	message string
}

// waitingMessages are the NodeRegistered messages of each waiting reason.
var waitingMessages = map[string]string{
	infrav1.WaitingForClusterInfrastructureReason: "Waiting for the Cluster's infrastructure to be ready",
	infrav1.WaitingForBootstrapDataReason:         "Waiting for the Machine's bootstrap data secret",
	infrav1.StartingUpReason:                      "Waiting for spec.startupDelay to elapse",
	infrav1.WaitingForControlPlaneReason:          "Waiting for a control plane machine's kube-apiserver to be ready",
}

// setStatus computes the LocalMachine's status from the facts of a reconcile: the Paused condition always;
// the rest only when not paused. status.ready and status.initialization.provisioned, once true, stay true.
func setStatus(lm *infrav1.LocalMachine, f facts) {
	conditions.SetV1Beta2(lm, reconciler.ProviderPausedCondition(f.paused))
	if f.paused {
		return
	}
	if f.startupStart != nil && lm.Status.StartupStartTime == nil {
		lm.Status.StartupStartTime = f.startupStart
	}
	if f.failure != nil {
		lm.Status.FailureReason = ptr.To(f.failure.reason)
		lm.Status.FailureMessage = ptr.To(f.failure.message)
	}
	if f.registered {
		lm.Status.Ready = true
		lm.Status.Initialization = &infrav1.LocalMachineInitializationStatus{Provisioned: ptr.To(true)}
		lm.Status.Addresses = f.addresses
		lm.Status.FailureDomain = nil
		if f.failureDomain != "" {
			lm.Status.FailureDomain = ptr.To(f.failureDomain)
		}
	}
	registered := nodeRegistered(f)
	if registered == nil {
		return
	}
	conditions.Set(lm, *registered)
	summary := []clusterv1.ConditionType{infrav1.NodeRegisteredCondition}
	if cp, version := controlPlaneConditions(f); cp != nil {
		conditions.Set(lm, *cp)
		conditions.Set(lm, *version)
		conditions.MirrorOwnV1Beta2(lm, infrav1.ControlPlaneRunningCondition, infrav1.ControlPlaneRunningReason)
		conditions.MirrorOwnV1Beta2(lm, infrav1.KubernetesVersionAvailableCondition, infrav1.KubernetesVersionAvailableReason)
		summary = append(summary, infrav1.ControlPlaneRunningCondition)
	}
	conditions.SetSummary(lm, summary...)
	conditions.MirrorOwnV1Beta2(lm, infrav1.NodeRegisteredCondition, infrav1.NodeRegisteredReason)
	conditions.MirrorOwnV1Beta2(lm, clusterv1.ReadyCondition, "Ready")
}

// controlPlaneConditions returns the ControlPlaneRunning and KubernetesVersionAvailable conditions of a
// control plane machine the backend reported on, nil otherwise.
func controlPlaneConditions(f facts) (running, version *clusterv1.Condition) {
	if !f.controlPlane || f.machine == nil || f.deleting {
		return nil, nil
	}
	m := f.machine
	running = &clusterv1.Condition{Type: infrav1.ControlPlaneRunningCondition, Status: corev1.ConditionTrue}
	if !m.ControlPlaneReady {
		severity := clusterv1.ConditionSeverityInfo
		if m.Reason == infrav1.ProcessesFailedReason {
			severity = clusterv1.ConditionSeverityWarning
		}
		running = &clusterv1.Condition{Type: infrav1.ControlPlaneRunningCondition, Status: corev1.ConditionFalse,
			Reason: m.Reason, Severity: severity, Message: m.Message}
	}
	version = &clusterv1.Condition{Type: infrav1.KubernetesVersionAvailableCondition, Status: corev1.ConditionTrue}
	if m.VersionFallback != "" {
		version = &clusterv1.Condition{Type: infrav1.KubernetesVersionAvailableCondition, Status: corev1.ConditionFalse,
			Reason: infrav1.KubernetesVersionFallbackReason, Severity: clusterv1.ConditionSeverityWarning, Message: m.VersionFallback}
	}
	return running, version
}

// nodeRegistered returns the NodeRegistered condition the facts call for, or nil when they say nothing
// about it.
func nodeRegistered(f facts) *clusterv1.Condition {
	notRegistered := func(reason string, severity clusterv1.ConditionSeverity, message string) *clusterv1.Condition {
		return &clusterv1.Condition{Type: infrav1.NodeRegisteredCondition, Status: corev1.ConditionFalse, Reason: reason, Severity: severity, Message: message}
	}
	switch {
	case f.deleting && f.deleteFailed:
		return notRegistered(clusterv1.DeletionFailedReason, clusterv1.ConditionSeverityWarning, "Deleting the Node failed; see the provider's logs")
	case f.deleting && f.waiting != "":
		return notRegistered(clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, "Waiting for the LocalCluster's kube-apiserver to delete the Node")
	case f.deleting:
		return notRegistered(clusterv1.DeletingReason, clusterv1.ConditionSeverityInfo, "Deleting the Node")
	case f.failure != nil:
		return notRegistered(infrav1.InvalidConfigurationReason, clusterv1.ConditionSeverityError, conditions.Capitalise(f.failure.message))
	case f.bootstrapInvalid != "":
		return notRegistered(infrav1.BootstrapDataInvalidReason, clusterv1.ConditionSeverityError, f.bootstrapInvalid)
	case f.notLocal:
		return notRegistered(infrav1.WaitingForClusterInfrastructureReason, clusterv1.ConditionSeverityError, "The Cluster's infrastructure is not a LocalCluster")
	case f.registrationFailed:
		return notRegistered(infrav1.NodeRegistrationFailedReason, clusterv1.ConditionSeverityWarning, "Registering the Node failed; see the provider's logs")
	case f.waiting == infrav1.WaitingForControlPlaneReason && f.controlPlane && f.machine != nil && !f.machine.ControlPlaneReady && f.machine.Message != "":
		// A control plane machine waits for its own kube-apiserver: say what that waits for.
		return notRegistered(f.waiting, clusterv1.ConditionSeverityInfo, f.machine.Message)
	case f.waiting != "":
		return notRegistered(f.waiting, clusterv1.ConditionSeverityInfo, waitingMessages[f.waiting])
	case f.registered:
		return &clusterv1.Condition{Type: infrav1.NodeRegisteredCondition, Status: corev1.ConditionTrue}
	default:
		return nil
	}
}

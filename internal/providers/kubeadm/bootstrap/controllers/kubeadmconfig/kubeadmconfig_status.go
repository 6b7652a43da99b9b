package kubeadmconfig

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

// dataState is what a reconcile found about the bootstrap data.
type dataState int

const (
	// dataNotLooked leaves DataSecretAvailable as it is.
	dataNotLooked dataState = iota
	dataWaitingInfrastructure
	dataWaitingControlPlane
	// dataWaitingConnection: a join needs a bootstrap token and waits for the on-demand connection to the
	// workload cluster.
	dataWaitingConnection
	dataFailed
	dataAvailable
)

// certsState is what a reconcile found about the cluster certificates.
type certsState int

const (
	// certsNotLooked leaves CertificatesAvailable as it is.
	certsNotLooked certsState = iota
	certsAvailable
	certsGenerationFailed
	certsCorrupted
)

// facts are what a reconcile found; setStatus derives the status from them.
type facts struct {
	paused bool
	data   dataState
	// dataMessage says why the data cannot be generated (dataFailed).
	dataMessage string
	// dataSecretName names the data Secret (dataAvailable).
	dataSecretName string
	certs          certsState
	certsMessage   string
}

// setStatus computes the KubeadmConfig's status from the facts of a reconcile, as upstream's: the Paused
// condition always; DataSecretAvailable and CertificatesAvailable when looked at; Ready summarising both.
func setStatus(c *bootstrapv1.KubeadmConfig, f facts) {
	conditions.SetV1Beta2(c, reconciler.ProviderPausedCondition(f.paused))
	if f.paused {
		return
	}

	dataV1Beta2 := metav1.Condition{Type: bootstrapv1.KubeadmConfigDataSecretAvailableV1Beta2Condition, Status: metav1.ConditionFalse,
		Reason: bootstrapv1.KubeadmConfigDataSecretNotAvailableV1Beta2Reason}
	switch f.data {
	case dataWaitingInfrastructure:
		conditions.MarkFalse(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForClusterInfrastructureReason, clusterv1.ConditionSeverityInfo, "")
		dataV1Beta2.Message = "Waiting for Cluster status.infrastructureReady to be true"
		conditions.SetV1Beta2(c, dataV1Beta2)
	case dataWaitingControlPlane:
		conditions.MarkFalse(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForControlPlaneAvailableReason, clusterv1.ConditionSeverityInfo, "")
		dataV1Beta2.Message = "Waiting for Cluster control plane to be initialized"
		conditions.SetV1Beta2(c, dataV1Beta2)
	case dataWaitingConnection:
		conditions.MarkFalse(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForWorkloadClusterConnectionReason, clusterv1.ConditionSeverityInfo, "")
		dataV1Beta2.Message = "Waiting for the connection to the workload cluster to create a bootstrap token"
		conditions.SetV1Beta2(c, dataV1Beta2)
	case dataFailed:
		conditions.MarkFalse(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.DataSecretGenerationFailedReason, clusterv1.ConditionSeverityWarning, "%s", f.dataMessage)
		dataV1Beta2.Message = f.dataMessage
		conditions.SetV1Beta2(c, dataV1Beta2)
	case dataAvailable:
		c.Status.Ready = true
		c.Status.DataSecretName = ptr.To(f.dataSecretName)
		c.Status.Initialization = &bootstrapv1.KubeadmConfigInitializationStatus{DataSecretCreated: ptr.To(true)}
		conditions.MarkTrue(c, bootstrapv1.DataSecretAvailableCondition)
		conditions.SetV1Beta2(c, metav1.Condition{Type: bootstrapv1.KubeadmConfigDataSecretAvailableV1Beta2Condition, Status: metav1.ConditionTrue,
			Reason: bootstrapv1.KubeadmConfigDataSecretAvailableV1Beta2Reason})
	}

	switch f.certs {
	case certsAvailable:
		conditions.MarkTrue(c, bootstrapv1.CertificatesAvailableCondition)
		conditions.SetV1Beta2(c, metav1.Condition{Type: bootstrapv1.KubeadmConfigCertificatesAvailableV1Beta2Condition, Status: metav1.ConditionTrue,
			Reason: bootstrapv1.KubeadmConfigCertificatesAvailableV1Beta2Reason})
	case certsGenerationFailed, certsCorrupted:
		reason, severity := bootstrapv1.CertificatesGenerationFailedReason, clusterv1.ConditionSeverityWarning
		if f.certs == certsCorrupted {
			reason, severity = bootstrapv1.CertificatesCorruptedReason, clusterv1.ConditionSeverityError
		}
		conditions.MarkFalse(c, bootstrapv1.CertificatesAvailableCondition, reason, severity, "%s", f.certsMessage)
		conditions.SetV1Beta2(c, conditions.InternalError(bootstrapv1.KubeadmConfigCertificatesAvailableV1Beta2Condition,
			bootstrapv1.KubeadmConfigCertificatesAvailableInternalErrorV1Beta2Reason))
	}

	conditions.SetSummary(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CertificatesAvailableCondition)
	conditions.SetV1Beta2(c, readyCondition(c))
}

// readyCondition summarises DataSecretAvailable and CertificatesAvailable: True when both are True, False
// when one is False, Unknown otherwise (one is Unknown or not reported yet).
func readyCondition(c *bootstrapv1.KubeadmConfig) metav1.Condition {
	ready := metav1.Condition{Type: bootstrapv1.KubeadmConfigReadyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: bootstrapv1.KubeadmConfigReadyV1Beta2Reason}
	var notReady, unknown []string
	for _, t := range []string{bootstrapv1.KubeadmConfigDataSecretAvailableV1Beta2Condition, bootstrapv1.KubeadmConfigCertificatesAvailableV1Beta2Condition} {
		cond := conditions.GetV1Beta2(c, t)
		switch {
		case cond == nil:
			unknown = append(unknown, fmt.Sprintf("* %s: Condition not yet reported", t))
		case cond.Status == metav1.ConditionFalse:
			notReady = append(notReady, summaryLine(cond))
		case cond.Status == metav1.ConditionUnknown:
			unknown = append(unknown, summaryLine(cond))
		}
	}
	switch {
	case len(notReady) > 0:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, bootstrapv1.KubeadmConfigNotReadyV1Beta2Reason, joinLines(notReady)
	case len(unknown) > 0:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionUnknown, bootstrapv1.KubeadmConfigReadyUnknownV1Beta2Reason, joinLines(unknown)
	}
	return ready
}

func summaryLine(c *metav1.Condition) string {
	if c.Message == "" {
		return fmt.Sprintf("* %s: %s", c.Type, c.Reason)
	}
	return fmt.Sprintf("* %s: %s", c.Type, c.Message)
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }

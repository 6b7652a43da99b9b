package localmachine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

func TestSetStatus(t *testing.T) {
	addresses := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "127.0.0.1"}, {Type: clusterv1.MachineHostName, Address: "m1"}}
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name       string
		before     infrav1.LocalMachineStatus
		facts      facts
		registered corev1.ConditionStatus // "" when the condition must not be set
		reason     string
		severity   clusterv1.ConditionSeverity
		message    string
		ready      bool
		paused     metav1.ConditionStatus
		failure    bool
	}{
		{name: "paused", facts: facts{paused: true}, paused: metav1.ConditionTrue},
		{name: "nothing looked at", facts: facts{}, paused: metav1.ConditionFalse},
		{
			name: "waiting for the cluster infrastructure", facts: facts{waiting: infrav1.WaitingForClusterInfrastructureReason},
			registered: corev1.ConditionFalse, reason: infrav1.WaitingForClusterInfrastructureReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for the Cluster's infrastructure to be ready", paused: metav1.ConditionFalse,
		},
		{
			name: "waiting for bootstrap data", facts: facts{waiting: infrav1.WaitingForBootstrapDataReason},
			registered: corev1.ConditionFalse, reason: infrav1.WaitingForBootstrapDataReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for the Machine's bootstrap data secret", paused: metav1.ConditionFalse,
		},
		{
			name: "starting up", facts: facts{waiting: infrav1.StartingUpReason, startupStart: &start},
			registered: corev1.ConditionFalse, reason: infrav1.StartingUpReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for spec.startupDelay to elapse", paused: metav1.ConditionFalse,
		},
		{
			name: "waiting for the control plane", facts: facts{waiting: infrav1.WaitingForControlPlaneReason},
			registered: corev1.ConditionFalse, reason: infrav1.WaitingForControlPlaneReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for a control plane machine's kube-apiserver to be ready", paused: metav1.ConditionFalse,
		},
		{
			name: "a control plane machine waiting for its own kube-apiserver says what that waits for",
			facts: facts{waiting: infrav1.WaitingForControlPlaneReason, controlPlane: true, machine: &backend.MachineStatus{
				Reason: infrav1.WaitingForEtcdReason, Message: "Waiting for etcd quorum: 1 of 3 members run, 2 needed; waiting for the members of machines b, c to start"}},
			registered: corev1.ConditionFalse, reason: infrav1.WaitingForControlPlaneReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for etcd quorum: 1 of 3 members run, 2 needed; waiting for the members of machines b, c to start", paused: metav1.ConditionFalse,
		},
		{
			name: "registered", facts: facts{registered: true, addresses: addresses, startupStart: &start},
			registered: corev1.ConditionTrue, ready: true, paused: metav1.ConditionFalse,
		},
		{
			name: "registration failed after being ready keeps ready", before: infrav1.LocalMachineStatus{Ready: true},
			facts:      facts{registrationFailed: true},
			registered: corev1.ConditionFalse, reason: infrav1.NodeRegistrationFailedReason, severity: clusterv1.ConditionSeverityWarning,
			message: "Registering the Node failed; see the provider's logs", ready: true, paused: metav1.ConditionFalse,
		},
		{
			name: "not a LocalCluster", facts: facts{notLocal: true},
			registered: corev1.ConditionFalse, reason: infrav1.WaitingForClusterInfrastructureReason, severity: clusterv1.ConditionSeverityError,
			message: "The Cluster's infrastructure is not a LocalCluster", paused: metav1.ConditionFalse,
		},
		{
			name: "terminal failure", facts: facts{failure: &failure{reason: clusterv1.InvalidConfigurationMachineError, message: "spec.providerID x is not y"}},
			registered: corev1.ConditionFalse, reason: infrav1.InvalidConfigurationReason, severity: clusterv1.ConditionSeverityError,
			message: "Spec.providerID x is not y", paused: metav1.ConditionFalse, failure: true,
		},
		{
			name: "deleting", facts: facts{deleting: true},
			registered: corev1.ConditionFalse, reason: clusterv1.DeletingReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Deleting the Node", paused: metav1.ConditionFalse,
		},
		{
			name: "deleting, waiting for the control plane", facts: facts{deleting: true, waiting: infrav1.WaitingForControlPlaneReason},
			registered: corev1.ConditionFalse, reason: clusterv1.DeletingReason, severity: clusterv1.ConditionSeverityInfo,
			message: "Waiting for the LocalCluster's kube-apiserver to delete the Node", paused: metav1.ConditionFalse,
		},
		{
			name: "deletion failed", facts: facts{deleting: true, deleteFailed: true},
			registered: corev1.ConditionFalse, reason: clusterv1.DeletionFailedReason, severity: clusterv1.ConditionSeverityWarning,
			message: "Deleting the Node failed; see the provider's logs", paused: metav1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			lm := &infrav1.LocalMachine{Status: tt.before}
			setStatus(lm, tt.facts)
			g.Expect(lm.Status.Ready).To(Equal(tt.ready))
			g.Expect(lm.Status.FailureReason != nil).To(Equal(tt.failure))
			g.Expect(conditions.GetV1Beta2(lm, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", tt.paused))
			if tt.facts.startupStart != nil {
				g.Expect(lm.Status.StartupStartTime).To(Equal(tt.facts.startupStart))
			}
			if tt.facts.registered {
				g.Expect(lm.Status.Addresses).To(Equal(addresses), cmp.Diff(addresses, lm.Status.Addresses))
				g.Expect(lm.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
			}
			c := conditions.Get(lm, infrav1.NodeRegisteredCondition)
			if tt.registered == "" {
				g.Expect(c).To(BeNil())
				return
			}
			g.Expect(c.Status).To(Equal(tt.registered))
			g.Expect(c.Reason).To(Equal(tt.reason))
			g.Expect(c.Severity).To(Equal(tt.severity))
			g.Expect(c.Message).To(Equal(tt.message))
			ready := conditions.Get(lm, clusterv1.ReadyCondition)
			g.Expect(ready.Status).To(Equal(tt.registered))
			g.Expect(conditions.GetV1Beta2(lm, string(infrav1.NodeRegisteredCondition))).To(HaveField("Status", metav1.ConditionStatus(tt.registered)))
		})
	}
}

// The start-up time, once recorded, is never moved: a reconcile after a provider restart does not restart
// the delay.
func TestStartupStartTimeIsKept(t *testing.T) {
	g := NewWithT(t)
	first := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(first.Add(time.Hour))
	lm := &infrav1.LocalMachine{Status: infrav1.LocalMachineStatus{StartupStartTime: &first}}
	setStatus(lm, facts{waiting: infrav1.StartingUpReason, startupStart: &later})
	g.Expect(lm.Status.StartupStartTime).To(Equal(&first))
}

func TestProviderID(t *testing.T) {
	g := NewWithT(t)
	id := ProviderID("ns", "c1", "m-1")
	g.Expect(id).To(Equal("local://ns/c1/m-1"))
}

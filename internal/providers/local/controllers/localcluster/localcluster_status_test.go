package localcluster

import (
	"testing"

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
	fds := clusterv1.FailureDomains{"fd1": {ControlPlane: true}}
	type want struct {
		ready        bool
		running      corev1.ConditionStatus // "" when the condition must not be set
		reason       string
		severity     clusterv1.ConditionSeverity
		paused       metav1.ConditionStatus
		failure      bool
		failureDoms  clusterv1.FailureDomains
		provisioned  bool
		readyV1Beta2 metav1.ConditionStatus
	}
	tests := []struct {
		name    string
		before  infrav1.LocalClusterStatus
		facts   facts
		want    want
		message string
	}{
		{
			name:  "paused: only the Paused condition",
			facts: facts{paused: true},
			want:  want{paused: metav1.ConditionTrue},
		},
		{
			name:  "nothing looked at: conditions left alone",
			facts: facts{},
			want:  want{paused: metav1.ConditionFalse},
		},
		{
			name:  "starting",
			facts: facts{backend: &backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Starting etcd and kube-apiserver"}},
			want: want{running: corev1.ConditionFalse, reason: infrav1.ProcessesStartingReason, severity: clusterv1.ConditionSeverityInfo,
				paused: metav1.ConditionFalse, readyV1Beta2: metav1.ConditionFalse},
			message: "Starting etcd and kube-apiserver",
		},
		{
			name: "waiting for another instance of the provider to release the data (a move)",
			facts: facts{backend: &backend.ClusterStatus{Reason: infrav1.DataInUseReason,
				Message: "Waiting for another instance of the provider to stop running this cluster from /data/ns/c1"}},
			want: want{running: corev1.ConditionFalse, reason: infrav1.DataInUseReason, severity: clusterv1.ConditionSeverityInfo,
				paused: metav1.ConditionFalse, readyV1Beta2: metav1.ConditionFalse},
			message: "Waiting for another instance of the provider to stop running this cluster from /data/ns/c1",
		},
		{
			name:  "ready: status.ready, provisioned and failure domains",
			facts: facts{backend: &backend.ClusterStatus{Ready: true}},
			want: want{ready: true, running: corev1.ConditionTrue, paused: metav1.ConditionFalse, failureDoms: fds, provisioned: true,
				readyV1Beta2: metav1.ConditionTrue},
		},
		{
			name:   "a crash after provisioning keeps status.ready",
			before: infrav1.LocalClusterStatus{Ready: true, Initialization: &infrav1.LocalClusterInitializationStatus{Provisioned: ptr.To(true)}},
			facts:  facts{backend: &backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "kube-apiserver exited (signal: killed); restarting it"}},
			want: want{ready: true, running: corev1.ConditionFalse, reason: infrav1.ProcessesFailedReason, severity: clusterv1.ConditionSeverityWarning,
				paused: metav1.ConditionFalse, failureDoms: fds, provisioned: true, readyV1Beta2: metav1.ConditionFalse},
			message: "kube-apiserver exited (signal: killed); restarting it",
		},
		{
			name:  "terminal failure",
			facts: facts{failure: &failure{reason: clusterv1.InvalidConfigurationClusterError, message: "spec.controlPlaneEndpoint.host is wrong"}},
			want: want{running: corev1.ConditionFalse, reason: infrav1.InvalidConfigurationReason, severity: clusterv1.ConditionSeverityError,
				paused: metav1.ConditionFalse, failure: true, readyV1Beta2: metav1.ConditionFalse},
			message: "Spec.controlPlaneEndpoint.host is wrong",
		},
		{
			name:  "CA Secret problem",
			facts: facts{caError: true},
			want: want{running: corev1.ConditionFalse, reason: infrav1.WaitingForCertificateAuthorityReason, severity: clusterv1.ConditionSeverityWarning,
				paused: metav1.ConditionFalse, readyV1Beta2: metav1.ConditionFalse},
		},
		{
			name:  "deleting",
			facts: facts{deleting: true},
			want: want{running: corev1.ConditionFalse, reason: clusterv1.DeletingReason, severity: clusterv1.ConditionSeverityInfo,
				paused: metav1.ConditionFalse, readyV1Beta2: metav1.ConditionFalse},
		},
		{
			name:  "deletion failed",
			facts: facts{deleting: true, deleteFailed: true},
			want: want{running: corev1.ConditionFalse, reason: clusterv1.DeletionFailedReason, severity: clusterv1.ConditionSeverityWarning,
				paused: metav1.ConditionFalse, readyV1Beta2: metav1.ConditionFalse},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			lc := &infrav1.LocalCluster{Spec: infrav1.LocalClusterSpec{FailureDomains: fds}, Status: tt.before}
			setStatus(lc, tt.facts)
			g.Expect(lc.Status.Ready).To(Equal(tt.want.ready))
			g.Expect(lc.Status.Initialization != nil && ptr.Deref(lc.Status.Initialization.Provisioned, false)).To(Equal(tt.want.provisioned))
			g.Expect(lc.Status.FailureDomains).To(Equal(tt.want.failureDoms), cmp.Diff(tt.want.failureDoms, lc.Status.FailureDomains))
			g.Expect(lc.Status.FailureReason != nil).To(Equal(tt.want.failure))
			g.Expect(conditions.GetV1Beta2(lc, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", tt.want.paused))
			running := conditions.Get(lc, infrav1.ProcessesRunningCondition)
			if tt.want.running == "" {
				g.Expect(running).To(BeNil())
				g.Expect(conditions.Get(lc, clusterv1.ReadyCondition)).To(BeNil())
				return
			}
			g.Expect(running.Status).To(Equal(tt.want.running))
			g.Expect(running.Reason).To(Equal(tt.want.reason))
			g.Expect(running.Severity).To(Equal(tt.want.severity))
			if tt.message != "" {
				g.Expect(running.Message).To(Equal(tt.message))
			}
			ready := conditions.Get(lc, clusterv1.ReadyCondition)
			g.Expect(ready.Status).To(Equal(tt.want.running), "Ready summarises ProcessesRunning")
			g.Expect(ready.Reason).To(Equal(tt.want.reason))
			g.Expect(conditions.GetV1Beta2(lc, string(clusterv1.ReadyCondition))).To(HaveField("Status", tt.want.readyV1Beta2))
			if running.Message != "" {
				g.Expect(running.Message[0]).To(BeNumerically(">=", 'A'), "messages are capitalised")
				g.Expect(running.Message).NotTo(HaveSuffix("."))
			}
		})
	}
}

func TestSetStatusIsStable(t *testing.T) {
	g := NewWithT(t)
	lc := &infrav1.LocalCluster{}
	f := facts{backend: &backend.ClusterStatus{Ready: true}}
	setStatus(lc, f)
	first := lc.DeepCopy()
	setStatus(lc, f)
	g.Expect(lc).To(Equal(first), cmp.Diff(first, lc))
}

func TestValidate(t *testing.T) {
	tests := []struct {
		host     string
		terminal bool
	}{
		{host: "", terminal: false},
		{host: "127.0.0.1", terminal: false},
		{host: "localhost", terminal: false},
		{host: "10.0.0.1", terminal: true},
		{host: "127.0.0.2", terminal: true},
		{host: "example.com", terminal: true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			g := NewWithT(t)
			f := validate(&infrav1.LocalCluster{Spec: infrav1.LocalClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: tt.host, Port: 6443}}})
			g.Expect(f != nil).To(Equal(tt.terminal))
			if f != nil {
				g.Expect(f.reason).To(Equal(clusterv1.InvalidConfigurationClusterError))
			}
		})
	}
}

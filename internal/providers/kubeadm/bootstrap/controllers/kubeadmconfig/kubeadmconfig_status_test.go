package kubeadmconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

func TestSetStatus(t *testing.T) {
	type want struct {
		ready          bool
		dataReason     string
		readyV1Beta2   metav1.ConditionStatus
		readyMessage   string
		dataSecretName *string
	}
	tests := []struct {
		name  string
		facts facts
		want  want
	}{
		{
			name:  "waiting for the infrastructure",
			facts: facts{data: dataWaitingInfrastructure},
			want: want{dataReason: bootstrapv1.WaitingForClusterInfrastructureReason, readyV1Beta2: metav1.ConditionFalse,
				readyMessage: "* DataSecretAvailable: Waiting for Cluster status.infrastructureReady to be true"},
		},
		{
			name:  "waiting for the control plane, certificates found",
			facts: facts{data: dataWaitingControlPlane, certs: certsAvailable},
			want: want{dataReason: bootstrapv1.WaitingForControlPlaneAvailableReason, readyV1Beta2: metav1.ConditionFalse,
				readyMessage: "* DataSecretAvailable: Waiting for Cluster control plane to be initialized"},
		},
		{
			name:  "a join waiting for the connection to the workload cluster",
			facts: facts{data: dataWaitingConnection, certs: certsAvailable},
			want: want{dataReason: bootstrapv1.WaitingForWorkloadClusterConnectionReason, readyV1Beta2: metav1.ConditionFalse,
				readyMessage: "* DataSecretAvailable: Waiting for the connection to the workload cluster to create a bootstrap token"},
		},
		{
			name:  "a configuration problem",
			facts: facts{data: dataFailed, dataMessage: "Secret ns/s referenced by spec.files[0].contentFrom (path /a) is not found", certs: certsAvailable},
			want: want{dataReason: bootstrapv1.DataSecretGenerationFailedReason, readyV1Beta2: metav1.ConditionFalse,
				readyMessage: "* DataSecretAvailable: Secret ns/s referenced by spec.files[0].contentFrom (path /a) is not found"},
		},
		{
			name:  "data available but certificates not reported: Ready is unknown",
			facts: facts{data: dataAvailable, dataSecretName: "c"},
			want: want{ready: true, readyV1Beta2: metav1.ConditionUnknown, dataSecretName: ptr.To("c"),
				readyMessage: "* CertificatesAvailable: Condition not yet reported"},
		},
		{
			name:  "everything available",
			facts: facts{data: dataAvailable, dataSecretName: "c", certs: certsAvailable},
			want:  want{ready: true, readyV1Beta2: metav1.ConditionTrue, dataSecretName: ptr.To("c")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &bootstrapv1.KubeadmConfig{}
			setStatus(c, tt.facts)
			g.Expect(c.Status.Ready).To(Equal(tt.want.ready))
			g.Expect(c.Status.DataSecretName).To(Equal(tt.want.dataSecretName))
			if tt.want.dataReason != "" {
				g.Expect(conditions.Get(c, bootstrapv1.DataSecretAvailableCondition).Reason).To(Equal(tt.want.dataReason))
				g.Expect(conditions.IsFalse(c, clusterv1.ReadyCondition)).To(BeTrue())
			}
			ready := conditions.GetV1Beta2(c, bootstrapv1.KubeadmConfigReadyV1Beta2Condition)
			g.Expect(ready.Status).To(Equal(tt.want.readyV1Beta2))
			g.Expect(ready.Message).To(Equal(tt.want.readyMessage))
			g.Expect(conditions.IsV1Beta2True(c, clusterv1.PausedV1Beta2Condition)).To(BeFalse())
		})
	}

	t.Run("paused: only the Paused condition", func(t *testing.T) {
		g := NewWithT(t)
		c := &bootstrapv1.KubeadmConfig{}
		setStatus(c, facts{paused: true, data: dataAvailable})
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.PausedV1Beta2Condition)).To(BeTrue())
		g.Expect(c.Status.Ready).To(BeFalse())
		g.Expect(c.Status.Conditions).To(BeEmpty())
	})
}

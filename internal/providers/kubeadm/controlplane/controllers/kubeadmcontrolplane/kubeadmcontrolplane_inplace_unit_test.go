package kubeadmcontrolplane

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
)

// Which outdated Machines may be updated in place, as upstream's EligibleForInPlaceUpdate.
func TestEligibleForInPlaceUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*scope, *clusterv1.Machine)
		want   bool
	}{
		{name: "a version change", mutate: func(s *scope, _ *clusterv1.Machine) { s.kcp.Spec.Version = "v1.36.1" }, want: true},
		{name: "up to date", mutate: func(*scope, *clusterv1.Machine) {}},
		{name: "marked for deletion", mutate: func(s *scope, m *clusterv1.Machine) {
			s.kcp.Spec.Version = "v1.36.1"
			m.Annotations[clusterv1.DeleteMachineAnnotation] = ""
		}},
		{name: "marked for remediation", mutate: func(s *scope, m *clusterv1.Machine) {
			s.kcp.Spec.Version = "v1.36.1"
			m.Annotations[clusterv1.RemediateMachineAnnotation] = ""
		}},
		{name: "rolloutAfter passed", mutate: func(s *scope, _ *clusterv1.Machine) {
			s.kcp.Spec.Version = "v1.36.1"
			s.kcp.Spec.RolloutAfter = &metav1.Time{Time: epoch.Add(-time.Minute)}
		}},
		{name: "certificates expiring", mutate: func(s *scope, m *clusterv1.Machine) {
			s.kcp.Spec.RolloutBefore = &controlplanev1.RolloutBefore{CertificatesExpiryDays: ptr.To[int32](7)}
			m.Status.CertificatesExpiryDate = &metav1.Time{Time: epoch.Add(24 * time.Hour)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machine("m", time.Hour, "")
			s := testScope(nil, m)
			tt.mutate(s, m)
			s.kubeadmConfigs, s.infraMachines = map[string]*bootstrapv1.KubeadmConfig{}, map[string]*unstructured.Unstructured{}
			s.computeUpToDate()
			NewWithT(t).Expect(s.eligibleForInPlaceUpdate(m)).To(Equal(tt.want))
		})
	}
}

func TestInPlaceUpdateInProgress(t *testing.T) {
	g := NewWithT(t)
	m := machine("m", time.Hour, "")
	g.Expect(inPlaceUpdateInProgress(m)).To(BeFalse())
	m.Annotations[clusterv1.UpdateInProgressAnnotation] = ""
	g.Expect(inPlaceUpdateInProgress(m)).To(BeTrue())
	g.Expect(inPlaceTriggerIncomplete(m)).To(BeTrue())
	hooks.MarkPending(m, runtimehooksv1.UpdateMachine)
	g.Expect(inPlaceTriggerIncomplete(m)).To(BeFalse())
	delete(m.Annotations, clusterv1.UpdateInProgressAnnotation)
	g.Expect(inPlaceUpdateInProgress(m)).To(BeTrue(), "pending alone counts")
	g.Expect(inPlaceUpdatingMessage(m)).To(Equal("* In-place update in progress"))
}

// The desired Machine and KubeadmConfig of an in-place update, and the KubeadmConfigs as the request
// compares them: the first Machine's init configuration reads as a join configuration, the discovery and DNS
// are left out, so that only the version change is left.
func TestInPlaceDesiredObjects(t *testing.T) {
	g := NewWithT(t)
	cc := &bootstrapv1.ClusterConfiguration{ClusterName: "c", DNS: bootstrapv1.DNS{ImageMeta: bootstrapv1.ImageMeta{ImageTag: "v2"}}}
	m := machine("m", time.Hour, "fd")
	old, _ := json.Marshal(&bootstrapv1.ClusterConfiguration{ClusterName: "c"})
	m.Annotations[controlplanev1.KubeadmClusterConfigurationAnnotation] = string(old)
	s := testScope(nil, m)
	s.cluster.Name = "c"
	s.kcp.Spec.Version = "v1.36.1"
	nr := bootstrapv1.NodeRegistrationOptions{Name: "n", KubeletExtraArgs: map[string]string{"a": "b"}}
	s.kcp.Spec.KubeadmConfigSpec = bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: cc,
		InitConfiguration: &bootstrapv1.InitConfiguration{NodeRegistration: nr},
		JoinConfiguration: &bootstrapv1.JoinConfiguration{NodeRegistration: nr}}

	want, err := desiredInPlaceMachine(s, m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(want.Spec.Version).To(Equal(ptr.To("v1.36.1")))
	g.Expect(want.Spec.FailureDomain).To(Equal(ptr.To("fd")))
	g.Expect(want.Annotations[controlplanev1.KubeadmClusterConfigurationAnnotation]).To(ContainSubstring(`"imageTag":"v2"`))
	diff, ok := matchesClusterConfiguration(s.kcp, want)
	g.Expect(ok).To(BeTrue(), diff)
	g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.36.0")), "the current Machine is left alone")

	// The first Machine: init configuration, an older DNS.
	cur := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: bootstrapv1.KubeadmConfigSpec{
		ClusterConfiguration: &bootstrapv1.ClusterConfiguration{ClusterName: "c"},
		InitConfiguration:    &bootstrapv1.InitConfiguration{NodeRegistration: nr}}}
	wantCfg := desiredInPlaceKubeadmConfig(s.kcp, cur)
	g.Expect(wantCfg.Spec.InitConfiguration).To(BeNil())
	g.Expect(wantCfg.Spec.JoinConfiguration).NotTo(BeNil())
	diff, ok = matchesKubeadmConfig(s.kcp, wantCfg)
	g.Expect(ok).To(BeTrue(), "no rollout once written: %s", diff)

	// A joined Machine keeps the discovery the bootstrap provider filled in.
	joined := cur.DeepCopy()
	joined.Spec.InitConfiguration = nil
	joined.Spec.JoinConfiguration = &bootstrapv1.JoinConfiguration{NodeRegistration: nr,
		Discovery: bootstrapv1.Discovery{BootstrapToken: &bootstrapv1.BootstrapTokenDiscovery{APIServerEndpoint: "1.2.3.4:6443"}}}
	g.Expect(desiredInPlaceKubeadmConfig(s.kcp, joined).Spec.JoinConfiguration.Discovery.BootstrapToken.APIServerEndpoint).To(Equal("1.2.3.4:6443"))

	for _, c := range []*bootstrapv1.KubeadmConfig{cur, joined} {
		curU, err := toUnstructured(c)
		g.Expect(err).NotTo(HaveOccurred())
		wantU, err := toUnstructured(desiredInPlaceKubeadmConfig(s.kcp, c))
		g.Expect(err).NotTo(HaveOccurred())
		current := inplace.Objects{Machine: m, Bootstrap: curU}
		desired := canUpdateForDiff(current, inplace.Objects{Machine: want, Bootstrap: wantU})
		g.Expect(current.Bootstrap.Object["spec"]).To(Equal(desired.Bootstrap.Object["spec"]), "%s", c.Name)
		back := &bootstrapv1.KubeadmConfig{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(wantU.Object, back)).To(Succeed())
		g.Expect(back.Spec.JoinConfiguration).NotTo(BeNil(), "the desired object itself is not changed")
	}
}

// A Machine with an update in progress is not up to date (Updating) with the gate; without it, its marks are
// not looked at.
func TestMachineUpToDateWhileUpdating(t *testing.T) {
	for _, gate := range []bool{true, false} {
		g := NewWithT(t)
		m := machine("m", time.Hour, "")
		m.Annotations[clusterv1.UpdateInProgressAnnotation] = ""
		s := testScope(nil, m)
		s.inPlaceUpdates = gate
		setMachineUpToDate(s, m)
		c := conditions.GetV1Beta2(m, clusterv1.MachineUpToDateV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		if gate {
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(clusterv1.MachineUpToDateUpdatingV1Beta2Reason))
			g.Expect(c.Message).To(Equal("* In-place update in progress"))
			g.Expect(s.inPlaceUpdatesInProgress()).To(HaveLen(1))
		} else {
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(s.inPlaceUpdatesInProgress()).To(BeEmpty())
		}
	}
	// The Machine's Updating message, when it has one.
	m := machine("m", time.Hour, "")
	conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineUpdatingV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: clusterv1.MachineInPlaceUpdatingV1Beta2Reason, Message: "In-place update in progress: restarting the kubelet"})
	NewWithT(t).Expect(inPlaceUpdatingMessage(m)).To(Equal("* In-place update in progress: restarting the kubelet"))
}

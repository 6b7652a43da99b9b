package kubeadmcontrolplane

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// TestSetScalingV1Beta2: ScalingUp and ScalingDown say which way the KubeadmControlPlane scales and what
// blocks it, and neither is True while it is being deleted.
func TestSetScalingV1Beta2(t *testing.T) {
	type condition struct {
		Status  metav1.ConditionStatus
		Reason  string
		Message string
	}
	notUp := condition{metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotScalingUpV1Beta2Reason, ""}
	notDown := condition{metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotScalingDownV1Beta2Reason, ""}
	tests := []struct {
		name           string
		replicas       int32
		machines       int
		deleting       bool
		preflight      preflightResults
		infraNotFound  bool
		wantUp, wantDn condition
	}{
		{name: "at the desired replicas", replicas: 3, machines: 3, wantUp: notUp, wantDn: notDown},
		{name: "scaling up", replicas: 3, machines: 1, wantDn: notDown,
			wantUp: condition{metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneScalingUpV1Beta2Reason, "Scaling up from 1 to 3 replicas"}},
		{name: "scaling up, blocked", replicas: 3, machines: 1, infraNotFound: true,
			preflight: preflightResults{hasDeletingMachine: true, etcdClusterNotHealthy: true}, wantDn: notDown,
			wantUp: condition{metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneScalingUpV1Beta2Reason,
				"Scaling up from 1 to 3 replicas is blocked because:\n* DockerMachineTemplate does not exist\n* Waiting for Machines being deleted\n* Waiting for etcd cluster to become healthy"}},
		{name: "scaling down, blocked", replicas: 1, machines: 3,
			preflight: preflightResults{controlPlaneComponentsNotHealthy: true, topologyVersionMismatch: true}, wantUp: notUp,
			wantDn: condition{metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneScalingDownV1Beta2Reason,
				"Scaling down from 3 to 1 replicas is blocked because:\n* Waiting for the version upgrade of Cluster.spec.topology to be propagated\n* Waiting for control plane components to become healthy"}},
		{name: "being deleted", replicas: 1, machines: 3, deleting: true, wantUp: notUp, wantDn: notDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			kcp := &controlplanev1.KubeadmControlPlane{Spec: controlplanev1.KubeadmControlPlaneSpec{
				Replicas:        ptr.To(tt.replicas),
				MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{InfrastructureRef: corev1.ObjectReference{Kind: "DockerMachineTemplate"}},
			}}
			if tt.deleting {
				kcp.DeletionTimestamp = ptr.To(metav1.Now())
			}
			s := &scope{kcp: kcp, machines: map[string]*clusterv1.Machine{}, infraTemplateNotFound: tt.infraNotFound, preflight: tt.preflight}
			for i := range tt.machines {
				s.machines[string(rune('a'+i))] = &clusterv1.Machine{}
			}
			setScalingV1Beta2(s)
			for _, c := range []struct {
				t    string
				want condition
			}{
				{controlplanev1.KubeadmControlPlaneScalingUpV1Beta2Condition, tt.wantUp},
				{controlplanev1.KubeadmControlPlaneScalingDownV1Beta2Condition, tt.wantDn},
			} {
				got := conditions.GetV1Beta2(kcp, c.t)
				g.Expect(got).NotTo(BeNil(), c.t)
				gotC := condition{got.Status, got.Reason, got.Message}
				g.Expect(gotC).To(Equal(c.want), "%s: %s", c.t, cmp.Diff(c.want, gotC))
			}
		})
	}
}

// TestStatusVersions: status.versions counts the control plane Machines' Kubernetes versions, oldest
// first, the kubelet's once the Node reports it (as upstream v1.14); status.version stays the lowest
// spec.version.
func TestStatusVersions(t *testing.T) {
	machine := func(version, kubelet string) *clusterv1.Machine {
		m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: ptr.To(version)}}
		if kubelet != "" {
			m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: kubelet}
		}
		return m
	}
	tests := []struct {
		name        string
		machines    map[string]*clusterv1.Machine
		want        []clusterv1.StatusVersion
		wantVersion *string
	}{
		{name: "no Machines", want: nil},
		{
			name: "during an upgrade",
			machines: map[string]*clusterv1.Machine{
				"a": machine("v1.32.4", "v1.32.4"),
				"b": machine("v1.32.4", "v1.32.4"),
				"c": machine("v1.33.1", ""),
			},
			want:        []clusterv1.StatusVersion{{Version: "v1.32.4", Replicas: 2}, {Version: "v1.33.1", Replicas: 1}},
			wantVersion: ptr.To("v1.32.4"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			kcp := &controlplanev1.KubeadmControlPlane{Spec: controlplanev1.KubeadmControlPlaneSpec{Replicas: ptr.To[int32](3), Version: "v1.33.1"}}
			machines := tt.machines
			if machines == nil {
				machines = map[string]*clusterv1.Machine{}
			}
			for name, m := range machines {
				m.Name = name
			}
			s := &scope{kcp: kcp, cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, machines: machines}
			setStatus(s)
			g.Expect(kcp.Status.Versions).To(Equal(tt.want), cmp.Diff(tt.want, kcp.Status.Versions))
			g.Expect(kcp.Status.Version).To(Equal(tt.wantVersion))
		})
	}
}

package kubeadmcontrolplane

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestPendingTopologyVersion: a control plane behind spec.topology.version waits for it (no scaling,
// rollout or remediation), unless it has the version of the Cluster's current upgrade step (upstream v1.12's
// chained upgrades).
func TestPendingTopologyVersion(t *testing.T) {
	tests := []struct {
		name, topology, step, kcp string
		want                      string
		waiting                   bool
	}{
		{name: "no topology", kcp: "v1.36.3"},
		{name: "at the topology's version", topology: "v1.37.1", kcp: "v1.37.1"},
		{name: "behind, no upgrade step", topology: "v1.37.1", kcp: "v1.36.3", want: "v1.37.1", waiting: true},
		{name: "at the current step", topology: "v1.37.1", step: "v1.36.3", kcp: "v1.36.3"},
		{name: "behind the current step", topology: "v1.37.1", step: "v1.36.3", kcp: "v1.35.4", want: "v1.36.3", waiting: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := &clusterv1.Cluster{}
			if tt.topology != "" {
				cluster.Spec.Topology = &clusterv1.Topology{Version: tt.topology}
			}
			if tt.step != "" {
				cluster.Annotations = map[string]string{clusterv1.ClusterTopologyUpgradeStepAnnotation: tt.step}
			}
			s := &scope{cluster: cluster, kcp: &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"},
				Spec: controlplanev1.KubeadmControlPlaneSpec{Version: tt.kcp}}}
			v, waiting := s.pendingTopologyVersion()
			g.Expect(waiting).To(Equal(tt.waiting))
			g.Expect(v).To(Equal(tt.want))
		})
	}
}

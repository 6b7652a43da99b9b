package contract

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestCalculateCRDName(t *testing.T) {
	tests := []struct {
		group, kind, want string
	}{
		{"cluster.x-k8s.io", "Cluster", "clusters.cluster.x-k8s.io"},
		{"cluster.x-k8s.io", "ClusterClass", "clusterclasses.cluster.x-k8s.io"},
		{"cluster.x-k8s.io", "MachineHealthCheck", "machinehealthchecks.cluster.x-k8s.io"},
		{"infrastructure.cluster.x-k8s.io", "LocalMachineTemplate", "localmachinetemplates.infrastructure.cluster.x-k8s.io"},
		{"bootstrap.cluster.x-k8s.io", "KubeadmConfig", "kubeadmconfigs.bootstrap.cluster.x-k8s.io"},
		{"infrastructure.cluster.x-k8s.io", "AWSManagedControlPlane", "awsmanagedcontrolplanes.infrastructure.cluster.x-k8s.io"},
		{"ipam.cluster.x-k8s.io", "IPAddress", "ipaddresses.ipam.cluster.x-k8s.io"},
		{"clusterctl.cluster.x-k8s.io", "Metadata", "metadata.clusterctl.cluster.x-k8s.io"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			NewWithT(t).Expect(CalculateCRDName(tt.group, tt.kind)).To(Equal(tt.want))
		})
	}
}

package releasecheck

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
)

// TestInitData checks the control plane Machine's `kubeadm init` data, rendered by the kubeadm bootstrap
// provider's renderer, as the local provider reads it: init, the Node's name, the Cluster's name and
// endpoint, the Kubernetes version.
func TestInitData(t *testing.T) {
	g := NewWithT(t)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 6443},
			ClusterNetwork:       &clusterv1.ClusterNetwork{Services: &clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}}},
		},
	}
	data, err := initData(cluster, "v1.37.1", "c1-control-plane")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(And(
		ContainSubstring("kubeadm init --config /run/kubeadm/kubeadm.yaml"),
		ContainSubstring("apiVersion: kubeadm.k8s.io/v1beta4"),
		ContainSubstring("controlPlaneEndpoint: 127.0.0.1:6443"),
		ContainSubstring("serviceSubnet: 10.128.0.0/12"),
	))

	d, err := nodeboot.Parse("cloud-config", data)
	g.Expect(err).NotTo(HaveOccurred(), string(data))
	g.Expect(d.Command).To(Equal(nodeboot.CommandInit))
	g.Expect(d.ControlPlane()).To(BeTrue())
	node, err := d.Node()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Name).To(Equal("c1-control-plane"))
	g.Expect(d.Kubeadm.Cluster.ClusterName).To(Equal("c1"))
	g.Expect(d.Kubeadm.Cluster.KubernetesVersion).To(Equal("v1.37.1"))

	_, err = initData(cluster, "latest", "c1-control-plane")
	g.Expect(err).To(MatchError(ContainSubstring("--kubernetes-version")))
}

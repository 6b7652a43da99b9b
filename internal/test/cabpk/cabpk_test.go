package cabpk

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
)

// TestRenderedDataParses checks the rendered data against the local provider's reader: what the tests
// craft is what the reader accepts.
func TestRenderedDataParses(t *testing.T) {
	g := NewWithT(t)
	init := CloudConfig(Data{Init: true, Kubeadm: InitConfiguration("c1", "v1.37.1", "  extraArgs:\n  - name: v\n    value: \"2\"\n", "", "cp-0"),
		Files: []File{{Path: "/etc/a", Content: "a: b\n", Permissions: "0600"}}})
	d, err := nodeboot.Parse("cloud-config", init)
	g.Expect(err).NotTo(HaveOccurred(), string(init))
	g.Expect(d.Command).To(Equal(nodeboot.CommandInit))
	g.Expect(d.Kubeadm.Cluster.APIServer.ExtraArgs).To(Equal(nodeboot.Args{{Name: "v", Value: "2"}}))
	node, err := d.Node()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Name).To(Equal("cp-0"))
	f, ok := d.File("/etc/a")
	g.Expect(ok).To(BeTrue())
	g.Expect(string(f.Content)).To(Equal("a: b\n"))

	join := CloudConfig(Data{Kubeadm: JoinConfiguration("127.0.0.1:6443", "cp-1", true, "  taints: []\n")})
	d, err = nodeboot.Parse("cloud-config", join)
	g.Expect(err).NotTo(HaveOccurred(), string(join))
	g.Expect(d.Command).To(Equal(nodeboot.CommandJoin))
	g.Expect(d.ControlPlane()).To(BeTrue())
	node, err = d.Node()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Name).To(Equal("cp-1"))
	g.Expect(node.DefaultTaints).To(BeFalse())
}

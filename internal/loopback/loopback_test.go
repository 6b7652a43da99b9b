package loopback

import (
	"net"
	"testing"

	. "github.com/onsi/gomega"
)

func TestPorts(t *testing.T) {
	g := NewWithT(t)
	port, err := FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).To(BeNumerically(">", 0))
	g.Expect(PortFree(port)).To(BeTrue())

	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	g.Expect(PortFree(l.Addr().(*net.TCPAddr).Port)).To(BeFalse(), "a port something listens on is not free")
}

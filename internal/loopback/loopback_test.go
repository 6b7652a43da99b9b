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

// TestPortsAreNotEphemeral: a chosen port is outside the range the kernel gives to outgoing connections.
// A workload cluster's etcd member records its peer port in the membership before it starts; chosen from
// the ephemeral range, the port could become the local end of another process's connection meanwhile, and
// the member could not start for as long as that connection lasted (a control plane rollout waited 6
// minutes for a learner that never ran, in CI).
func TestPortsAreNotEphemeral(t *testing.T) {
	g := NewWithT(t)
	start := ephemeralStart()
	if start-lowestPort < 1000 {
		t.Skipf("the ephemeral range of this machine starts at %d: no room below it", start)
	}
	for range 50 {
		port, err := FreePort()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(port).To(And(BeNumerically(">=", lowestPort), BeNumerically("<", start)), "port %d", port)
	}
}

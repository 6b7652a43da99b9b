package process

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/loopback"
)

// A connection to an API server that stops being ready is closed, so that clients reconnect to a ready
// one instead of waiting on a server that answers nothing.
func TestLoadBalancerClosesConnectionsToDroppedBackends(t *testing.T) {
	g := NewWithT(t)
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = backend.Close() }()
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c) }() // echo, never closes on its own
		}
	}()
	port, err := loopback.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	lb, err := listenLoadBalancer(port, logr.Discard())
	g.Expect(err).NotTo(HaveOccurred())
	defer lb.close()
	lb.setBackends([]int{backend.Addr().(*net.TCPAddr).Port})

	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	_, err = conn.Write([]byte("ping"))
	g.Expect(err).NotTo(HaveOccurred())
	buf := make([]byte, 4)
	_, err = io.ReadFull(conn, buf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(buf)).To(Equal("ping"))

	lb.setBackends(nil)
	g.Expect(conn.SetReadDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	_, err = conn.Read(buf)
	g.Expect(err).To(MatchError(io.EOF), "the connection is closed, not left hanging")
}

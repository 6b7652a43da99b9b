// Package loopback chooses TCP ports of 127.0.0.1 for the servers capstan runs on this machine (the
// embedded management cluster's, the local provider's workload clusters').
package loopback

import (
	"fmt"
	"net"
	"strconv"
)

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// PortFree reports whether nothing listens on a TCP port of 127.0.0.1.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

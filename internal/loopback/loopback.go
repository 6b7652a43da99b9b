// Package loopback chooses TCP ports of 127.0.0.1 for the servers capstan runs on this machine (the
// embedded management cluster's, the local provider's workload clusters').
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowestPort is the lowest port FreePort chooses: below it are the well-known and most of the commonly
// registered ports.
const lowestPort = 10000

// ephemeralRangeFile holds the range of ports the kernel gives to outgoing connections and to servers
// that listen on port 0.
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// defaultEphemeralStart is the start of Linux's default ephemeral range, used when the file cannot be read.
const defaultEphemeralStart = 32768

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on now, chosen below the kernel's
// ephemeral range. A port is chosen some time before its server listens on it (an etcd member's peer port
// is recorded in the cluster's membership before the member starts, and kept across restarts); a port of
// the ephemeral range may meanwhile become the local end of any process's outgoing connection, and the
// server then cannot listen on it for as long as that connection lasts. When the range leaves no room
// below it, the kernel chooses.
func FreePort() (int, error) {
	if end := ephemeralStart(); end-lowestPort >= 1000 {
		for range 200 {
			port := lowestPort + rand.IntN(end-lowestPort) //nolint:gosec // not a secret
			if PortFree(port) {
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// ephemeralStart returns the first port of the kernel's ephemeral range.
func ephemeralStart() int {
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return defaultEphemeralStart
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return defaultEphemeralStart
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil {
		return defaultEphemeralStart
	}
	return start
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

package localnet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// PodNetwork is the range of the addresses the runtime gives its processes; it is outside the embedded
// cluster's Service range (10.96.0.0/12).
var PodNetwork = netip.MustParsePrefix("10.244.0.0/16")

// Loopback returns the loopback address a "host:port" of PodNetwork stands for.
func Loopback(hostPort string) (string, bool) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !PodNetwork.Contains(addr) {
		return "", false
	}
	return net.JoinHostPort("127.0.0.1", port), true
}

// Allocator hands out addresses of PodNetwork, one per replica, cycling through the range.
type Allocator struct {
	mu   sync.Mutex
	next uint32
}

// Next returns the next address.
func (a *Allocator) Next() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	size := uint32(1) << (32 - PodNetwork.Bits())
	// Skip the network address and the broadcast address.
	a.next = a.next%(size-2) + 1
	base := PodNetwork.Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3]) + a.next
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
}

// EgressSelectorConfiguration returns kube-apiserver's --egress-selector-config-file content that sends
// the connections to the cluster's network (webhooks, aggregated APIs) through the proxy listening on the
// Unix socket at path (kube-apiserver speaks plain HTTP CONNECT only over a Unix socket: over TCP it
// requires client certificates).
func EgressSelectorConfiguration(path string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, strconv.Quote(path)))
}

// maxSocketPath is the longest path of a Unix socket (sun_path holds 108 bytes with the final NUL).
const maxSocketPath = 107

// SocketPath returns path when it fits in a Unix socket address, or a path of the same identity in the
// temporary directory otherwise.
func SocketPath(path string) string {
	if len(path) <= maxSocketPath {
		return path
	}
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(os.TempDir(), "capstan-"+hex.EncodeToString(sum[:6])+".sock")
}

package embedded

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan/internal/localnet"
)

// EgressSocket is the Unix socket of kube-apiserver's egress proxy to the local runtime's pod network.
func (s State) EgressSocket() string { return localnet.SocketPath(filepath.Join(s.Dir, "egress.sock")) }

// startEgressProxy serves the proxy through which kube-apiserver reaches webhooks, conversion webhooks
// and aggregated APIs (see package localnet) until ctx is done or stop is called, and returns the
// --egress-selector-config-file that uses it.
func startEgressProxy(ctx context.Context, state State) (configFile string, stop func(), err error) {
	socket := state.EgressSocket()
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		return "", nil, err
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		return "", nil, fmt.Errorf("listening on the egress proxy socket %s: %w", socket, err)
	}
	configFile = filepath.Join(state.PKIDir(), "egress-selector.yaml")
	if err := os.WriteFile(configFile, localnet.EgressSelectorConfiguration(socket), 0o600); err != nil {
		_ = l.Close()
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = localnet.ServeProxy(ctx, l)
	}()
	return configFile, func() { cancel(); <-done; _ = os.Remove(socket) }, nil
}

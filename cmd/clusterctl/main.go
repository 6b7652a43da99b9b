// Command clusterctl is capstan's drop-in for upstream's clusterctl: it initializes and manages a Cluster
// API management cluster and generates workload cluster templates. The version is set at build time with
// -ldflags "-X github.com/capstan-dev/capstan/internal/version.version=v0.1.0 ...".
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/capstan-dev/capstan/internal/cborclient"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/root"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

func main() {
	cborclient.Enable()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := root.Main(ctx, os.Args[1:], iostreams.Standard(), clusterctlcli.DefaultDeps())
	stop()
	os.Exit(code)
}

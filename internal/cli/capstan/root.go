// Package capstan is the `capstan` command: one binary whose subcommands are capstan's controller managers
// (`capstan manager` for the core, later the providers) and the embedded management cluster.
package capstan

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/internal/cli/capstan/adopt"
	"github.com/capstan-dev/capstan/internal/cli/capstan/bootstrapkubeadm"
	"github.com/capstan-dev/capstan/internal/cli/capstan/conformance"
	"github.com/capstan-dev/capstan/internal/cli/capstan/controlplanekubeadm"
	"github.com/capstan-dev/capstan/internal/cli/capstan/down"
	"github.com/capstan-dev/capstan/internal/cli/capstan/extensionsample"
	"github.com/capstan-dev/capstan/internal/cli/capstan/infralocal"
	"github.com/capstan-dev/capstan/internal/cli/capstan/kubeconfig"
	"github.com/capstan-dev/capstan/internal/cli/capstan/manager"
	"github.com/capstan-dev/capstan/internal/cli/capstan/operator"
	"github.com/capstan-dev/capstan/internal/cli/capstan/status"
	"github.com/capstan-dev/capstan/internal/cli/capstan/ui"
	"github.com/capstan-dev/capstan/internal/cli/capstan/up"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/version"
)

// NewCommand returns the capstan root command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:           "capstan",
		Short:         "capstan runs the Cluster API management plane",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(manager.NewCommand(streams))
	cmd.AddCommand(infralocal.NewCommand(streams))
	cmd.AddCommand(bootstrapkubeadm.NewCommand(streams))
	cmd.AddCommand(controlplanekubeadm.NewCommand(streams))
	cmd.AddCommand(operator.NewCommand(streams))
	cmd.AddCommand(extensionsample.NewCommand(streams))
	cmd.AddCommand(up.NewCommand(streams), down.NewCommand(streams), status.NewCommand(streams), kubeconfig.NewCommand(streams))
	cmd.AddCommand(conformance.NewCommand(streams))
	cmd.AddCommand(adopt.NewCommand(streams, clusterctlcli.DefaultDeps()))
	cmd.AddCommand(ui.NewCommand(streams))
	cmd.AddCommand(newVersionCommand(streams.Out))
	return cmd
}

func newVersionCommand(out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of capstan",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version.Get()
			_, err := fmt.Fprintf(out, "capstan version: %s (commit %s, %s, %s)\n", v.GitVersion, v.GitCommit, v.GoVersion, v.Platform)
			return err
		},
	}
}

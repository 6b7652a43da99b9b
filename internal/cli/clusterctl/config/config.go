// Package config implements `clusterctl config`, the parent of the commands that display clusterctl's
// configuration.
package config

import (
	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/config/repositories"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// NewCommand returns the `config` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return clusterctlcli.GroupCommand("config", "Display clusterctl configuration",
		"Display clusterctl configuration.",
		repositories.NewCommand(streams, deps))
}

// Package generate implements `clusterctl generate`, the parent of the commands that print YAML:
// `generate cluster`, `generate provider` and `generate yaml`.
package generate

import (
	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/generate/cluster"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/generate/provider"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/generate/yaml"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// NewCommand returns the `generate` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return clusterctlcli.GroupCommand("generate", "Generate yaml using clusterctl yaml processor",
		"Generate yaml using clusterctl yaml processor: workload cluster templates, provider components, or any yaml with clusterctl variables.",
		cluster.NewCommand(streams, deps), provider.NewCommand(streams, deps), yaml.NewCommand(streams, deps))
}

// Package root implements the clusterctl root command: global flags (--config, -v), the command tree, and
// kubectl-style plugins (an unknown command foo runs the executable clusterctl-foo found on PATH).
package root

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/alpha"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/completion"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/config"
	convertcmd "github.com/capstan-dev/capstan/internal/cli/clusterctl/convert"
	deletecmd "github.com/capstan-dev/capstan/internal/cli/clusterctl/delete"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/describe"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/generate"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/get"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/initialize"
	movecmd "github.com/capstan-dev/capstan/internal/cli/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/upgrade"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/version"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// Command groups, as in upstream's help.
const (
	groupManagement = "management"
	groupDebug      = "debug"
	groupOther      = "other"
)

// NewCommand returns the clusterctl root command. Commands that need a management cluster client (upgrade,
// delete, move, describe, get kubeconfig) are added to the management and debug groups when they exist.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clusterctl",
		Short: "clusterctl controls the lifecycle of a Cluster API management cluster",
		Long: `Get started with Cluster API using clusterctl to create a management cluster,
install providers, and create templates for your workload cluster.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})

	cmd.PersistentPreRun = clusterctlcli.AddGlobalFlags(cmd.PersistentFlags(), deps)

	used := map[string]bool{}
	add := func(group string, c *cobra.Command) {
		c.GroupID = group
		used[group] = true
		cmd.AddCommand(c)
	}
	add(groupManagement, initialize.NewCommand(streams, deps))
	add(groupManagement, generate.NewCommand(streams, deps))
	add(groupManagement, upgrade.NewCommand(streams, deps))
	add(groupManagement, deletecmd.NewCommand(streams, deps))
	add(groupManagement, movecmd.NewCommand(streams, deps))
	add(groupManagement, get.NewCommand(streams, deps))
	add(groupDebug, describe.NewCommand(streams, deps))
	add(groupOther, alpha.NewCommand(streams, deps))
	add(groupOther, config.NewCommand(streams, deps))
	add(groupOther, version.NewCommand(streams, deps))
	add(groupOther, completion.NewCommand(streams))
	// As upstream's, convert is in no group: help lists it under "Additional Commands".
	cmd.AddCommand(convertcmd.NewCommand(streams))
	cmd.SetHelpCommandGroupID(groupOther)

	// Groups are shown in this order; a group without commands is not shown.
	for _, g := range []*cobra.Group{
		{ID: groupManagement, Title: "Cluster Management Commands:"},
		{ID: groupDebug, Title: "Troubleshooting and Debugging Commands:"},
		{ID: groupOther, Title: "Other Commands:"},
	} {
		if used[g.ID] {
			cmd.AddGroup(g)
		}
	}
	return cmd
}

// Main runs clusterctl with args (without the program name) and returns the exit code. Errors are
// printed on one line to streams.ErrOut.
func Main(ctx context.Context, args []string, streams iostreams.Streams, deps *clusterctlcli.Deps) int {
	cmd := NewCommand(streams, deps)
	cmd.SetArgs(args)
	err := runPlugin(cmd, args, streams, deps)
	if errors.Is(err, errNoPlugin) {
		err = cmd.ExecuteContext(ctx)
	}
	if err == nil {
		return 0
	}
	var exit *clusterctlcli.ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	_, _ = fmt.Fprintln(streams.ErrOut, "Error:", strings.ReplaceAll(err.Error(), "\n", " "))
	return 1
}

var errNoPlugin = errors.New("no plugin")

// runPlugin runs the plugin that args name when they do not name a command of clusterctl.
func runPlugin(cmd *cobra.Command, args []string, streams iostreams.Streams, deps *clusterctlcli.Deps) error {
	if deps.Plugins == nil || len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errNoPlugin
	}
	switch args[0] {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return errNoPlugin
	}
	if found, _, err := cmd.Find(args); err == nil && found != cmd {
		return errNoPlugin
	}
	path, pluginArgs, ok := clusterctlcli.FindPlugin(deps.Plugins, args)
	if !ok {
		return errNoPlugin
	}
	return deps.Plugins.Execute(path, pluginArgs, streams)
}

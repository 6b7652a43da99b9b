// Package completion implements `clusterctl completion bash|zsh|fish`: it prints the shell completion
// code of clusterctl.
package completion

import (
	"fmt"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// NewCommand returns the `completion` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion [bash|zsh|fish]",
		Short: "Output shell completion code for the specified shell (bash, zsh or fish)",
		Long: `Output shell completion code for the specified shell (bash, zsh or fish).
The shell code must be evaluated to provide interactive completion of clusterctl commands.`,
		Example: `  # Load completion in the current bash session (needs the bash-completion package).
  source <(clusterctl completion bash)

  # Load completion for every new bash session.
  clusterctl completion bash > ~/.bash_completion.d/clusterctl

  # Load completion in zsh.
  source <(clusterctl completion zsh)

  # Load completion in fish.
  clusterctl completion fish | source`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args:      clusterctlcli.ExactlyOneArg("name the shell: bash, zsh or fish"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			}
			return fmt.Errorf("unsupported shell %q: use bash, zsh or fish", args[0])
		},
	}
}

// Package yaml implements `clusterctl generate yaml`: it runs clusterctl's YAML processor (variable
// substitution with defaults) on any YAML, read from a URL, a file or standard input.
package yaml

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
)

type options struct {
	url           string
	listVariables bool
}

// NewCommand returns the `generate yaml` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "yaml",
		Short: "Process yaml using clusterctl's yaml processor",
		Long: `Process yaml using clusterctl's yaml processor.

clusterctl ships with a simple yaml processor that performs variable substitution and takes into account
default values (${VAR:=default}).

Variable values are either sourced from the clusterctl config file or from environment variables.`,
		Example: `  # Generate a configuration file with variable values using a template from a
  # specific URL as well as a GitHub URL.
  clusterctl generate yaml --from https://github.com/foo-org/foo-repository/blob/main/cluster-template.yaml
  clusterctl generate yaml --from https://foo.bar/cluster-template.yaml

  # Generate a configuration file with variable values using a template stored locally.
  clusterctl generate yaml --from ~/workspace/cluster-template.yaml

  # Print the list of variables used in the local template.
  clusterctl generate yaml --from ~/workspace/cluster-template.yaml --list-variables

  # Print the list of variables of a template passed in via stdin.
  cat ~/workspace/cluster-template.yaml | clusterctl generate yaml --from - --list-variables

  # The default is to read from stdin.
  cat ~/workspace/cluster-template.yaml | clusterctl generate yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, c, err := deps.NewClient(cmd.Context(), streams, clusterctlcli.ClientOptions{})
			if err != nil {
				return err
			}
			// The documents are rendered as they are processed and printed one by one: the objects are never
			// all held at once, nor the whole output in one piece.
			tmpl, err := c.ProcessYAML(ctx, client.ProcessYAMLOptions{From: o.url, ListVariablesOnly: o.listVariables, RenderOnly: true})
			if err != nil {
				return err
			}
			if o.listVariables {
				return printVariables(streams.Out, tmpl.Variables())
			}
			return tmpl.WriteYAML(streams.Out)
		},
	}
	cmd.Flags().StringVar(&o.url, "from", "-", "The URL to read the template from. It defaults to '-' which reads from stdin.")
	cmd.Flags().BoolVar(&o.listVariables, "list-variables", false, "Returns the list of variables expected by the template instead of the template yaml")
	return cmd
}

func printVariables(w io.Writer, variables []string) error {
	if len(variables) == 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	var b strings.Builder
	b.WriteString("Variables:\n")
	for _, v := range variables {
		b.WriteString("  - " + v + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

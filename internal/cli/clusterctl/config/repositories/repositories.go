// Package repositories implements `clusterctl config repositories`: it lists the providers clusterctl knows,
// built-in and from the config file, with the repository each comes from.
package repositories

import (
	"fmt"
	"io"
	"path"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// Output formats.
const (
	outputText = "text"
	outputYAML = "yaml"
)

// info is one provider in the yaml output; the field names are upstream's.
type info struct {
	Name         string
	ProviderType string
	URL          string
	File         string
}

// NewCommand returns the `config repositories` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "repositories",
		Short: "Display the list of providers and their repository configurations",
		Long: `Display the list of providers and their repository configurations.

clusterctl ships with a list of known providers; if necessary, edit
$XDG_CONFIG_HOME/cluster-api/clusterctl.yaml to add new providers or to customize existing ones.`,
		Example: `  # Display the list of providers.
  clusterctl config repositories

  # Print the list of providers in yaml format.
  clusterctl config repositories -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != outputText && output != outputYAML {
				return fmt.Errorf("invalid output format %q: use %s or %s", output, outputText, outputYAML)
			}
			cfg, err := deps.Config(cmd.Context())
			if err != nil {
				return err
			}
			if output == outputYAML {
				return printYAML(streams.Out, cfg.Providers())
			}
			return printText(streams.Out, cfg.Providers())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", outputText, fmt.Sprintf("Output format. Valid values: [%s %s].", outputText, outputYAML))
	return cmd
}

func printText(w io.Writer, providers []config.Provider) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 10, 4, 3, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAME\tTYPE\tURL\tFILE")
	for _, p := range providers {
		dir, file := path.Split(p.URL)
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Type, dir, file)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func printYAML(w io.Writer, providers []config.Provider) error {
	infos := make([]info, 0, len(providers))
	for _, p := range providers {
		dir, file := path.Split(p.URL)
		infos = append(infos, info{Name: p.Name, ProviderType: string(p.Type), URL: dir, File: file})
	}
	out, err := yaml.Marshal(infos)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

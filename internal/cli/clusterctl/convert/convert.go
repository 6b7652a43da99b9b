// Package convert implements `clusterctl convert`: it converts the cluster.x-k8s.io objects of a YAML file
// (or standard input) from v1beta1 to v1beta2 (internal/clusterctl/convert).
package convert

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/convert"
)

type options struct {
	output    string
	toVersion string
}

// NewCommand returns the `convert` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "convert [SOURCE]",
		Short: "EXPERIMENTAL: Convert Cluster API resources between API versions",
		Long: `EXPERIMENTAL: Convert Cluster API resources between API versions.

This command is EXPERIMENTAL and may be removed in a future release!

Scope and limitations:
- Only cluster.x-k8s.io resources are converted
- Other CAPI API groups are passed through unchanged
- ClusterClass patches are not converted
- Field order may change and comments will be removed in output
- API version references are dropped during conversion (except ClusterClass and external
  remediation references)`,
		Example: `  # Convert from file to stdout
  clusterctl convert cluster.yaml

  # Convert from stdin to stdout
  cat cluster.yaml | clusterctl convert

  # Explicitly specify target <VERSION>
  clusterctl convert cluster.yaml --to-version <VERSION> --output converted-cluster.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, args)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output file path (default: stdout)")
	cmd.Flags().StringVar(&o.toVersion, "to-version", clusterv1.GroupVersion.Version,
		fmt.Sprintf("Target API version for conversion. (Supported versions are: %s)", strings.Join(convert.SupportedTargetVersions, ", ")))
	return cmd
}

func (o *options) run(cmd *cobra.Command, streams iostreams.Streams, args []string) error {
	if err := convert.ValidateVersion(o.toVersion); err != nil {
		return err
	}
	var input []byte
	var err error
	if len(args) == 0 {
		if input, err = io.ReadAll(streams.In); err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
	} else if input, err = os.ReadFile(args[0]); err != nil {
		return fmt.Errorf("reading the input file: %w", err)
	}
	fmt.Fprintln(streams.ErrOut, "WARNING: This command is EXPERIMENTAL and may be removed in a future release!")
	res, err := convert.Convert(cmd.Context(), input, o.toVersion)
	if err != nil {
		return fmt.Errorf("conversion failed: %w", err)
	}
	if o.output == "" {
		if _, err := streams.Out.Write(res.Output); err != nil {
			return err
		}
	} else if err := os.WriteFile(o.output, res.Output, 0o600); err != nil {
		return fmt.Errorf("writing the output file: %w", err)
	}
	fmt.Fprintf(streams.ErrOut, "Converted %d resource(s) to %s. %d resource(s) passed through unchanged.\n", res.Converted, o.toVersion, res.PassedThrough)
	return nil
}

// Package kubeconfig is the `capstan kubeconfig` command: it prints the administrator's kubeconfig of an
// embedded management cluster.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/embedded"
)

// NewCommand returns `capstan kubeconfig`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	var cluster embedded.StateFlags
	var path bool
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the administrator's kubeconfig of an embedded management cluster",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			state, err := cluster.State()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(state.Kubeconfig())
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("the management cluster %q has never been started: run `capstan up --name %s` first", cluster.Name, cluster.Name)
			}
			if err != nil {
				return err
			}
			if path {
				_, err = fmt.Fprintln(streams.Out, state.Kubeconfig())
				return err
			}
			_, err = streams.Out.Write(data)
			return err
		},
	}
	cluster.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&path, "path", false, "Print the path of the kubeconfig file instead of its content.")
	return cmd
}

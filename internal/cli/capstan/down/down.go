// Package down is the `capstan down` command: it stops an embedded management cluster.
package down

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/embedded"
)

// NewCommand returns `capstan down`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	var name, stateDir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop an embedded management cluster (its state is kept; `capstan up` resumes it)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			state, err := embedded.ResolveState(name, stateDir)
			if err != nil {
				return err
			}
			pid, err := embedded.Down(state, timeout)
			if errors.Is(err, embedded.ErrNotRunning) {
				fmt.Fprintf(streams.Out, "The management cluster %q is not running.\n", name)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Stopped the management cluster %q (pid %d); its state is kept in %s.\n", name, pid, state.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "default", "Name of the management cluster.")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "Directory of the cluster's state; ~/.capstan/<name> when empty.")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "How long to wait for a clean stop before killing it.")
	return cmd
}

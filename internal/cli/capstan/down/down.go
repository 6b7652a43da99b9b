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
	var cluster embedded.StateFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop an embedded management cluster (its state is kept; `capstan up` resumes it)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			state, err := cluster.State()
			if err != nil {
				return err
			}
			pid, err := embedded.Down(state, timeout)
			if errors.Is(err, embedded.ErrNotRunning) {
				fmt.Fprintf(streams.Out, "The management cluster %q is not running.\n", cluster.Name)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Stopped the management cluster %q (pid %d); its state is kept in %s.\n", cluster.Name, pid, state.Dir)
			return nil
		},
	}
	cluster.AddFlags(cmd.Flags())
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "How long to wait for a clean stop before killing it.")
	return cmd
}

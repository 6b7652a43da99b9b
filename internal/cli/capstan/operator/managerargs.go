package operator

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/internal/cli/capstan/bootstrapkubeadm"
	"github.com/capstan-dev/capstan/internal/cli/capstan/controlplanekubeadm"
	"github.com/capstan-dev/capstan/internal/cli/capstan/extensionsample"
	"github.com/capstan-dev/capstan/internal/cli/capstan/infralocal"
	"github.com/capstan-dev/capstan/internal/cli/capstan/manager"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

// managers are the capstan subcommands a provider's Deployment runs, by name.
func managers() map[string]func(iostreams.Streams) *cobra.Command {
	return map[string]func(iostreams.Streams) *cobra.Command{
		"manager":              manager.NewCommand,
		"infra-local":          infralocal.NewCommand,
		"bootstrap-kubeadm":    bootstrapkubeadm.NewCommand,
		"controlplane-kubeadm": controlplanekubeadm.NewCommand,
		"operator":             NewCommand,
		"extension-sample":     extensionsample.NewCommand,
	}
}

// CheckManagerArgs checks the arguments of a container of capstan's image as the capstan subcommand they
// name (the first argument) would parse them: an unknown flag, a bad value (an unknown feature gate, a
// malformed duration) or a stray argument is an error that names it, so that the operator refuses a
// setting that would make the provider's manager exit at start. Arguments of other programs are not
// checked.
func CheckManagerArgs(args []string) error {
	if len(args) == 0 {
		return nil
	}
	newCommand, ok := managers()[args[0]]
	if !ok {
		return nil
	}
	discard := iostreams.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	cmd := newCommand(discard)
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return fmt.Errorf("capstan %s: %w", args[0], err)
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			return fmt.Errorf("capstan %s: %w", args[0], err)
		}
	}
	return nil
}

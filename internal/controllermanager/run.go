package controllermanager

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Command makes cmd the command of a controller manager: it takes no arguments, has the manager's flags,
// and runs run, with logging set up on errOut, until SIGTERM or SIGINT. The caller adds its own flags.
func (o *Options) Command(cmd *cobra.Command, errOut io.Writer, run func(context.Context) error) *cobra.Command {
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(*cobra.Command, []string) error {
		o.SetupLogging(errOut)
		return run(ctrl.SetupSignalHandler())
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// Run runs the controller manager of a command until ctx is done: the REST config its flags name, a
// manager of the scheme newScheme returns, setup adding the controllers and webhooks. what names the
// manager in the log line that says it starts, with logValues.
func (o *Options) Run(ctx context.Context, what string, newScheme func() (*runtime.Scheme, error), setup func(ctrl.Manager) error, logValues ...any) error {
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	mgr, err := o.New(cfg, scheme)
	if err != nil {
		return err
	}
	if err := setup(mgr); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting the "+what, logValues...)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the controller manager: %w", err)
	}
	return nil
}

package controllermanager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
)

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

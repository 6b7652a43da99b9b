package conformance

import (
	"context"

	"k8s.io/client-go/rest"
)

// Running is a Provider.Start for a provider that already runs out of process, for example its
// Deployment installed from its components in the management cluster Options.Config reaches (what
// `capstan conformance` does). The kit then only plays Cluster API's core in the namespace of its scenario:
// the provider must watch every namespace, and no core controller may reconcile that namespace. Running
// waits until the kit is done and never returns an error: the provider's stopping or crashing shows as
// objects not being provisioned or deleted in time.
func Running(ctx context.Context, _ *rest.Config) error {
	<-ctx.Done()
	return nil
}

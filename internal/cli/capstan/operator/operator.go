// Package operator is the `capstan operator` command: the controller manager of the declarative provider
// operator, which installs, configures, upgrades, pauses and removes Cluster API providers from
// CoreProvider, InfrastructureProvider, ... objects (operator.cluster.x-k8s.io/v1alpha2).
package operator

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/operator/validation"
	"github.com/capstan-dev/capstan/internal/webhooks"
	operatorwebhooks "github.com/capstan-dev/capstan/internal/webhooks/operator"
)

// ManagerName names the operator's manager (and its leader election lease), as its Deployment is named.
const ManagerName = "capi-operator-controller-manager"

// Options are the flags of `capstan operator`.
type Options struct {
	Manager     *controllermanager.Options
	Concurrency int
	// Webhooks are the flags of the webhook server, which refuses to delete providers in use.
	Webhooks webhooks.Options
	// Fetch bounds the downloads of provider releases (--fetch-connect-timeout, --fetch-timeout,
	// --fetch-max-size).
	Fetch httpclient.Limits
	// ReferenceNamespaces are --allowed-reference-namespaces.
	ReferenceNamespaces []string
}

// NewCommand returns `capstan operator`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Manager: controllermanager.DefaultOptions(ManagerName), Concurrency: 1, Webhooks: webhooks.DefaultOptions(), Fetch: source.DefaultHTTPLimits}
	cmd := o.Manager.Command(&cobra.Command{
		Use:   "operator",
		Short: "Run the declarative provider operator (CoreProvider, InfrastructureProvider, ...)",
		Long: `Run the controllers of the declarative provider operator: each CoreProvider, BootstrapProvider,
ControlPlaneProvider, InfrastructureProvider, AddonProvider, IPAMProvider and RuntimeExtensionProvider
(operator.cluster.x-k8s.io/v1alpha2) installs, configures, upgrades, pauses and removes one Cluster API
provider, as clusterctl would, and records it in clusterctl's inventory. Its validating webhook refuses
to delete a provider that Clusters still use (and the core while other providers exist), with
certificates it creates and rotates itself.`,
	}, streams.ErrOut, o.Run)
	fs := cmd.Flags()
	o.Webhooks.AddFlags(fs)
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "Number of providers of each kind reconciled at once.")
	fs.DurationVar(&o.Fetch.ConnectTimeout, "fetch-connect-timeout", o.Fetch.ConnectTimeout,
		"How long connecting to a release server (dial and TLS handshake) may take.")
	fs.DurationVar(&o.Fetch.Timeout, "fetch-timeout", o.Fetch.Timeout,
		"How long each call to a release server (GitHub, GitLab, an http(s) folder, an OCI registry) may take in all, reading the response included.")
	httpclient.SizeVar(fs, &o.Fetch.MaxResponseBytes, "fetch-max-size",
		"The largest response of a release server that is read, in bytes or with a suffix (Ki, Mi, Gi, k, M, G).")
	fs.StringSliceVar(&o.ReferenceNamespaces, "allowed-reference-namespaces", nil, "Namespaces whose ConfigMaps and Secrets providers of other namespaces may use (spec.configSecret, spec.additionalManifests); \"*\" allows every namespace. A provider may always use those of its own namespace.")
	return cmd
}

// Run starts the operator and blocks until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	if o.Fetch.ConnectTimeout <= 0 || o.Fetch.Timeout <= 0 || o.Fetch.MaxResponseBytes <= 0 {
		return fmt.Errorf("--fetch-connect-timeout (%s), --fetch-timeout (%s) and --fetch-max-size (%d bytes) must be positive: a release server that stalls would hold a worker forever",
			o.Fetch.ConnectTimeout, o.Fetch.Timeout, o.Fetch.MaxResponseBytes)
	}
	return o.Manager.Run(ctx, "provider operator", operator.NewScheme, func(mgr ctrl.Manager) error {
		if err := operator.Setup(mgr, operator.Options{Concurrency: o.Concurrency, HTTP: o.Fetch, Validation: o.validation(), CheckManagerArgs: CheckManagerArgs}); err != nil {
			return err
		}
		// Deletions are rare: the check reads the API server, so the operator caches no Clusters or provider objects for it.
		return o.Manager.SetupWebhooks(mgr, operatorwebhooks.Webhooks(mgr.GetAPIReader(), o.validation()), o.Webhooks)
	})
}

func (o *Options) validation() validation.Options {
	return validation.Options{ReferenceNamespaces: o.ReferenceNamespaces}
}

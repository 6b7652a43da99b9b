// Package operator is capstan's declarative provider operator (`capstan operator`): it wires one
// controller per provider kind of operator.cluster.x-k8s.io/v1alpha2 (see package provider), and one per
// kind of the operator proposal's management.cluster.x-k8s.io/v1alpha1, which translates them into
// v1alpha2 objects (see package proposal), into a controller manager. Providers are fetched by package source, customised by package customize, and
// protected from deletion while in use by package deletion.
package operator

import (
	"fmt"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/operator/proposal"
	"github.com/capstan-dev/capstan/internal/operator/provider"
	"github.com/capstan-dev/capstan/internal/operator/source"
	"github.com/capstan-dev/capstan/internal/operator/validation"
)

// Options configure the operator.
type Options struct {
	// Concurrency is how many providers of each kind are reconciled at once.
	Concurrency int
	// HTTP bounds every download (connect and total timeouts, size limit); zero fields take those of
	// source.DefaultHTTPLimits.
	HTTP httpclient.Limits
	// Transport makes the downloads (tests reach servers on loopback with it), within HTTP's total
	// timeout and size limit; when nil, a clone of the default transport with HTTP's connect timeout.
	Transport http.RoundTripper
	// Retry is the retry policy of downloads; provider.FetchRetry when zero.
	Retry repository.Retry
	// Validation are the settings of the rules a provider's spec must follow.
	Validation validation.Options
	// CheckManagerArgs checks the arguments of containers of capstan's image (see
	// provider.Reconciler.CheckManagerArgs); nil checks nothing.
	CheckManagerArgs func(args []string) error
	// LookupEnv reads the environment whose variables the providers' components may use (a configSecret's
	// variables win); os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
}

// NewScheme returns the scheme of the operator: Kubernetes' kinds, CRDs, the provider kinds, clusterctl's
// inventory and Clusters (which may block deletions).
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorv1.AddToScheme, managementv1.AddToScheme, clusterctlv1.AddToScheme, clusterv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Setup registers the operator's controllers with mgr.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	mc := cluster.NewForConfig(mgr.GetConfig())
	hc := o.httpClient()
	for _, k := range operatorv1.Kinds() {
		r := &provider.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cluster: mc, Kind: k,
			HTTPClient: hc, Retry: o.Retry, Validation: o.Validation, CheckManagerArgs: o.CheckManagerArgs, LookupEnv: o.LookupEnv,
		}
		if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency}); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", k.Name, err)
		}
	}
	for _, k := range managementv1.Kinds() {
		r := &proposal.Reconciler{Client: mgr.GetClient(), Kind: k}
		if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: o.Concurrency}); err != nil {
			return fmt.Errorf("setting up the %s.%s controller: %w", k.Name, managementv1.GroupVersion.Group, err)
		}
	}
	return nil
}

// httpClient returns the client of every download: within o.HTTP, whose zero fields take the defaults.
func (o Options) httpClient() *http.Client {
	l, d := o.HTTP, source.DefaultHTTPLimits
	if l.ConnectTimeout <= 0 {
		l.ConnectTimeout = d.ConnectTimeout
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = d.MaxResponseBytes
	}
	if o.Transport == nil {
		return httpclient.New(l)
	}
	return httpclient.Bound(&http.Client{Transport: o.Transport}, l)
}

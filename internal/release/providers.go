package release

import (
	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/config/core"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/config/local"
	"github.com/capstan-dev/capstan/internal/version"
)

// DefaultVersion is the release version of development builds, whose own version is not a release.
const DefaultVersion = "v0.1.0"

// Version returns the release version of this build's providers: the build's version when it is a
// release (set with -ldflags), DefaultVersion otherwise.
func Version() string {
	v := version.Get().GitVersion
	if len(v) > 1 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9' {
		return v
	}
	return DefaultVersion
}

// Core returns capstan's core provider, "cluster-api".
func Core() (Provider, error) {
	crds, err := crd.Core()
	if err != nil {
		return Provider{}, err
	}
	return Provider{Name: "cluster-api", Type: clusterctlv1.CoreProviderType, CRDs: crds, Manifests: core.Files}, nil
}

// Local returns capstan's local infrastructure provider, "local" (label infrastructure-local).
func Local() (Provider, error) {
	crds, err := crd.Local()
	if err != nil {
		return Provider{}, err
	}
	return Provider{Name: "local", Type: clusterctlv1.InfrastructureProviderType, CRDs: crds, Manifests: local.Files}, nil
}

// all lists capstan's providers, the core first. Adding a provider to every release — the GitHub
// release directory of `make release`, the local repository of `capstan up`, the tests' repositories —
// is one entry here (a function like Core that returns its Provider).
var all = []func() (Provider, error){
	Core,
	Local,
}

// Providers returns every provider of capstan.
func Providers() ([]Provider, error) {
	out := make([]Provider, 0, len(all))
	for _, get := range all {
		p, err := get()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

package client

import (
	"context"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/go-logr/logr"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// NoProvider as a provider name opts out of a provider that init adds by default.
const NoProvider = "-"

// firstRunProviders returns the providers init adds on a first run (no core provider in the management
// cluster) unless they are given or opted out of with "-", by type: the core provider and, as upstream, the
// kubeadm bootstrap and control plane providers.
func firstRunProviders() map[clusterctlv1.ProviderType]string {
	return map[clusterctlv1.ProviderType]string{
		clusterctlv1.CoreProviderType:         config.CoreProviderName,
		clusterctlv1.BootstrapProviderType:    config.KubeadmProviderName,
		clusterctlv1.ControlPlaneProviderType: config.KubeadmProviderName,
	}
}

// InitOptions say what init installs: providers as "name[:version]" each, and how.
type InitOptions struct {
	// Providers names the providers to install.
	Providers

	// TargetNamespace installs the providers in this namespace instead of their components' own.
	TargetNamespace string
	// WaitProviders waits until the Deployments of the installed providers are available.
	WaitProviders bool
	// WaitProviderTimeout bounds the wait for each provider.
	WaitProviderTimeout time.Duration
	// SkipValidation skips the checks of contracts and CRD names (--validate=false); the checks that
	// keep the inventory consistent (one instance per provider) always run.
	SkipValidation bool
	// Operator hands the providers to the provider operator, installing it first when needed, instead of
	// installing them (--operator).
	Operator bool
}

// providers returns the providers to install by type, in install order. On a first run (no core provider
// in the management cluster, or no management cluster) the providers of firstRunProviders are added
// unless given or opted out of with "-".
func (o InitOptions) providers(firstRun bool) []typedProvider {
	var out []typedProvider
	defaults := firstRunProviders()
	for _, group := range o.list() {
		names := group.names
		if len(names) == 0 && firstRun && defaults[group.t] != "" {
			names = []string{defaults[group.t]}
		}
		for _, n := range names {
			if n != NoProvider && n != "" {
				out = append(out, typedProvider{group.t, n})
			}
		}
	}
	return out
}

type typedProvider struct {
	t    clusterctlv1.ProviderType
	name string
}

// certManagerReader is implemented by management clusters that can tell whether cert-manager is
// installed (*cluster.Client).
type certManagerReader interface {
	CertManager(ctx context.Context) (cluster.CertManagerState, error)
}

// InitImages returns the images an init with these options needs: cert-manager's first (when a provider
// needs cert-manager, unless it is externally provisioned or already installed), then the providers',
// each list sorted. Providers already installed in the management cluster are left out, as init leaves
// them alone.
func (c *Client) InitImages(ctx context.Context, o InitOptions) ([]string, error) {
	firstRun := true
	var installed []clusterctlv1.Provider
	certManagerInstalled := false
	if c.clusterAvailable(ctx) == nil {
		var err error
		if installed, err = c.cluster.InstalledProviders(ctx); err != nil {
			return nil, err
		}
		firstRun = !hasCore(installed)
		if r, ok := c.cluster.(certManagerReader); ok {
			state, err := r.CertManager(ctx)
			if err != nil {
				return nil, err
			}
			certManagerInstalled = state.Installed
		}
	}
	var providerImages []string
	needsCertManager := false
	for _, p := range o.providers(firstRun) {
		name, _, err := ParseProviderName(p.name)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(installed, func(ip clusterctlv1.Provider) bool {
			return ip.ProviderName == name && ip.GetProviderType() == p.t
		}); i >= 0 {
			logr.FromContextOrDiscard(ctx).V(1).Info("Not listing the images of an installed provider", "provider", installed[i].ManifestLabel(), "version", installed[i].Version)
			continue
		}
		r, err := c.resolve(ctx, p.t, p.name, false)
		if err != nil {
			return nil, err
		}
		raw, err := r.repo.File(ctx, r.version, r.repo.ComponentsPath())
		if err != nil {
			return nil, err
		}
		images, err := components.Images(raw, r.provider.ManifestLabel(), c.cfg.Get, c.cfg.ImageOverrides())
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", r.repo.ComponentsPath(), r, err)
		}
		providerImages = append(providerImages, images...)
		if objs, err := manifest.Parse(raw); err == nil && components.NeedsCertManager(objs) {
			needsCertManager = true
		}
	}
	slices.Sort(providerImages)
	providerImages = slices.Compact(providerImages)
	cm := c.cfg.CertManager()
	if !needsCertManager || cm.ExternallyProvisioned || certManagerInstalled {
		logr.FromContextOrDiscard(ctx).V(1).Info("Not listing cert-manager's images", "needed", needsCertManager,
			"externallyProvisioned", cm.ExternallyProvisioned, "installed", certManagerInstalled)
		return providerImages, nil
	}
	certManagerImages, err := c.certManagerImages(ctx, cm)
	if err != nil {
		return nil, err
	}
	return append(certManagerImages, providerImages...), nil
}

// hasCore reports whether providers include a core provider.
func hasCore(providers []clusterctlv1.Provider) bool {
	return slices.ContainsFunc(providers, func(p clusterctlv1.Provider) bool { return p.GetProviderType() == clusterctlv1.CoreProviderType })
}

// certManagerImages returns the images of the cert-manager manifest of the configured version.
func (c *Client) certManagerImages(ctx context.Context, cm config.CertManager) ([]string, error) {
	repo, err := c.repos.Repository(config.Provider{Name: config.CertManagerName, URL: cm.URL})
	if err != nil {
		return nil, fmt.Errorf("cert-manager: %w: check cert-manager.url in the clusterctl config file", err)
	}
	raw, err := repo.File(ctx, cm.Version, path.Base(repo.ComponentsPath()))
	if err != nil {
		return nil, err
	}
	images, err := components.Images(raw, config.CertManagerName, c.cfg.Get, c.cfg.ImageOverrides())
	if err != nil {
		return nil, fmt.Errorf("cert-manager %s manifest: %w", cm.Version, err)
	}
	return images, nil
}

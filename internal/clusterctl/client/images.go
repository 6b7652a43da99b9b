package client

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/go-logr/logr"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// NoProvider as a provider name opts out of a provider that init adds by default.
const NoProvider = "-"

// InitOptions name the providers of an init: "name[:version]" each.
type InitOptions struct {
	CoreProvider              string
	BootstrapProviders        []string
	ControlPlaneProviders     []string
	InfrastructureProviders   []string
	IPAMProviders             []string
	RuntimeExtensionProviders []string
	AddonProviders            []string
}

// providers returns the providers to install by type, in install order. On a first run (no core provider
// in the management cluster, or no management cluster) the core provider, the kubeadm bootstrap provider
// and the kubeadm control plane provider are added unless given or opted out of with "-".
func (o InitOptions) providers(firstRun bool) []typedProvider {
	var out []typedProvider
	add := func(t clusterctlv1.ProviderType, names []string, def string) {
		if len(names) == 0 && firstRun && def != "" {
			names = []string{def}
		}
		for _, n := range names {
			if n != NoProvider && n != "" {
				out = append(out, typedProvider{t, n})
			}
		}
	}
	var core []string
	if o.CoreProvider != "" {
		core = []string{o.CoreProvider}
	}
	add(clusterctlv1.CoreProviderType, core, config.CoreProviderName)
	add(clusterctlv1.BootstrapProviderType, o.BootstrapProviders, "kubeadm")
	add(clusterctlv1.ControlPlaneProviderType, o.ControlPlaneProviders, "kubeadm")
	add(clusterctlv1.InfrastructureProviderType, o.InfrastructureProviders, "")
	add(clusterctlv1.IPAMProviderType, o.IPAMProviders, "")
	add(clusterctlv1.RuntimeExtensionProviderType, o.RuntimeExtensionProviders, "")
	add(clusterctlv1.AddonProviderType, o.AddonProviders, "")
	return out
}

type typedProvider struct {
	t    clusterctlv1.ProviderType
	name string
}

// InitImages returns the images an init with these options needs: cert-manager's first (unless it is
// externally provisioned or already installed), then the providers', each list sorted.
func (c *Client) InitImages(ctx context.Context, o InitOptions) ([]string, error) {
	firstRun, certManagerInstalled := true, false
	if c.clusterAvailable(ctx) == nil {
		installed, err := c.cluster.InstalledProviders(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range installed {
			if p.GetProviderType() == clusterctlv1.CoreProviderType {
				firstRun, certManagerInstalled = false, true
			}
		}
	}

	var providerImages []string
	for _, p := range o.providers(firstRun) {
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
	}
	slices.Sort(providerImages)
	providerImages = slices.Compact(providerImages)

	cm := c.cfg.CertManager()
	if cm.ExternallyProvisioned || certManagerInstalled {
		logr.FromContextOrDiscard(ctx).V(1).Info("Not listing cert-manager's images", "externallyProvisioned", cm.ExternallyProvisioned)
		return providerImages, nil
	}
	certManagerImages, err := c.certManagerImages(ctx, cm)
	if err != nil {
		return nil, err
	}
	return append(certManagerImages, providerImages...), nil
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

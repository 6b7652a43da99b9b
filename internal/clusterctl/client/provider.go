package client

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/components"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// ParseProviderName splits "name[:version]"; the version, when given, must be a semantic version.
func ParseProviderName(s string) (name, version string, err error) {
	name, version, _ = strings.Cut(strings.TrimSpace(s), ":")
	name = strings.ToLower(name)
	if name == "" {
		return "", "", fmt.Errorf("invalid provider %q: use name[:version], for example aws or aws:v2.8.0", s)
	}
	if version != "" {
		if _, err := repository.ParseVersion(version); err != nil {
			return "", "", fmt.Errorf("invalid provider %q: use name[:version] with a semantic version, for example aws:v2.8.0", s)
		}
	}
	return name, version, nil
}

// release is a provider at a version, with its repository and metadata.
type release struct {
	provider config.Provider
	repo     repository.Repository
	version  string
	metadata *clusterctlv1.Metadata
}

func (r *release) String() string { return r.provider.ManifestLabel() + " " + r.version }

// resolve finds the provider's repository and version: the given version, else the version installed in
// the management cluster (when asked to look there), else the repository's default. The release's
// metadata.yaml is read and validated.
func (c *Client) resolve(ctx context.Context, t clusterctlv1.ProviderType, nameVersion string, preferInstalled bool) (*release, error) {
	name, version, err := ParseProviderName(nameVersion)
	if err != nil {
		return nil, err
	}
	p, err := c.cfg.Provider(name, t)
	if err != nil {
		return nil, err
	}
	repo, err := c.repos.Repository(p)
	if err != nil {
		return nil, err
	}
	if version == "" && preferInstalled {
		version = c.installedVersion(ctx, name, t)
	}
	if version == "" {
		if version, err = repo.DefaultVersion(ctx); err != nil {
			return nil, fmt.Errorf("finding the latest version of %s: %w", p.ManifestLabel(), err)
		}
	}
	meta, err := repository.GetMetadata(ctx, repo, version)
	if err != nil {
		return nil, err
	}
	return &release{provider: p, repo: repo, version: version, metadata: meta}, nil
}

// installedVersion returns the version of a provider installed in the management cluster, "" when
// there is no management cluster, the provider is not installed or its instances differ.
func (c *Client) installedVersion(ctx context.Context, name string, t clusterctlv1.ProviderType) string {
	if c.clusterAvailable(ctx) != nil {
		return ""
	}
	installed, err := c.cluster.InstalledProviders(ctx)
	if err != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("Cannot read the provider inventory", "error", err.Error())
		return ""
	}
	var versions []string
	for _, p := range installed {
		if p.ProviderName == name && p.GetProviderType() == t {
			versions = append(versions, p.Version)
		}
	}
	slices.Sort(versions)
	if versions = slices.Compact(versions); len(versions) == 1 {
		return versions[0]
	}
	return ""
}

// ComponentsOptions say which provider components to get.
type ComponentsOptions struct {
	// Type is the provider type.
	Type clusterctlv1.ProviderType
	// Provider is "name[:version]"; without a version, the latest release that follows the contract.
	Provider string
	// TargetNamespace overrides the components' namespace.
	TargetNamespace string
	// SkipVariables leaves variables unsubstituted.
	SkipVariables bool
}

// ProviderComponents returns a provider's components with the contract's transformations applied. The
// release's metadata.yaml must map its version to a contract.
func (c *Client) ProviderComponents(ctx context.Context, o ComponentsOptions) (*components.Components, error) {
	r, err := c.resolve(ctx, o.Type, o.Provider, false)
	if err != nil {
		return nil, err
	}
	comps, _, err := c.releaseComponents(ctx, r, o.TargetNamespace, o.SkipVariables)
	return comps, err
}

// releaseComponents returns the components of a release with the contract's transformations applied,
// and the contract the release follows (from its metadata.yaml, which must map its version).
func (c *Client) releaseComponents(ctx context.Context, r *release, targetNamespace string, skipVariables bool) (*components.Components, string, error) {
	series, err := repository.ReleaseSeriesFor(r.metadata, r.provider.ManifestLabel(), r.version)
	if err != nil {
		return nil, "", err
	}
	raw, err := r.repo.File(ctx, r.version, r.repo.ComponentsPath())
	if err != nil {
		return nil, "", err
	}
	comps, err := components.New(components.Input{
		Provider:        r.provider,
		Version:         r.version,
		Raw:             raw,
		Variables:       c.cfg.Get,
		Images:          c.cfg.ImageOverrides(),
		TargetNamespace: targetNamespace,
		SkipVariables:   skipVariables,
	})
	if err != nil {
		return nil, "", fmt.Errorf("%s of %s: %w", r.repo.ComponentsPath(), r, err)
	}
	return comps, series.Contract, nil
}

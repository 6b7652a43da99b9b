package source

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// Repository reads releases from a clusterctl repository.
type Repository struct {
	repo repository.Repository
}

// NewRepository returns the source of a clusterctl provider configuration (a built-in provider, or one
// made by ProviderForURL).
func NewRepository(f *repository.Factory, p config.Provider) (*Repository, error) {
	repo, err := f.Repository(p)
	if err != nil {
		return nil, err
	}
	return &Repository{repo: repo}, nil
}

func (r *Repository) String() string { return r.repo.URL() }

// Remote is true: repositories are read over the network.
func (r *Repository) Remote() bool { return true }

// Versions lists the repository's versions.
func (r *Repository) Versions(ctx context.Context) ([]string, error) { return r.repo.Versions(ctx) }

// Release reads the metadata.yaml and the components of a version.
func (r *Repository) Release(ctx context.Context, version string) (*Release, error) {
	meta, err := r.repo.File(ctx, version, repository.MetadataFile)
	if err != nil {
		return nil, err
	}
	comps, err := r.repo.File(ctx, version, r.repo.ComponentsPath())
	if err != nil {
		return nil, err
	}
	return &Release{Version: version, Metadata: meta, Components: comps}, nil
}

// ProviderForURL turns a fetchConfig.url into the clusterctl provider configuration of the provider
// named name of type t:
//   - https://github.com/{owner}/{repository}/releases[/...]: the repository's releases, with the components
//     file of the built-in provider of that repository, else the type's usual file;
//   - https://{gitlab host}/api/v4/projects/{project}/packages/generic/{package}: that package, at version
//     (GitLab packages cannot be listed, so a version is needed);
//   - any other http(s) URL: a folder in the local layout, either the provider label's folder
//     ({url}/{version}/{file}) or the folder above it ({url}/{label}/{version}/{file}).
func ProviderForURL(name string, t clusterctlv1.ProviderType, rawURL, version string) (config.Provider, error) {
	p := config.Provider{Name: name, Type: t}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return p, fmt.Errorf("fetchConfig.url %q is not an http(s) URL", rawURL)
	}
	file := ComponentsFile(t)
	path := strings.Trim(u.Path, "/")
	parts := strings.Split(path, "/")
	switch {
	case u.Host == "github.com":
		if len(parts) < 2 || parts[0] == "" {
			return p, fmt.Errorf("fetchConfig.url %q: use https://github.com/{owner}/{repository}/releases", rawURL)
		}
		prefix := "https://github.com/" + parts[0] + "/" + parts[1] + "/releases/"
		for _, b := range config.BuiltinProviders() {
			if b.Type == t && strings.HasPrefix(b.URL, prefix) {
				file = b.URL[strings.LastIndex(b.URL, "/")+1:]
				break
			}
		}
		p.URL = prefix + repository.LatestVersion + "/" + file
	case strings.HasPrefix(u.Host, "gitlab."):
		if len(parts) != 7 || parts[0] != "api" || parts[1] != "v4" || parts[2] != "projects" || parts[4] != "packages" || parts[5] != "generic" {
			return p, fmt.Errorf("fetchConfig.url %q: use https://%s/api/v4/projects/{project}/packages/generic/{package}", rawURL, u.Host)
		}
		if version == "" {
			return p, fmt.Errorf("fetchConfig.url %q is a GitLab package, whose versions cannot be listed: set spec.version", rawURL)
		}
		p.URL = strings.TrimSuffix(rawURL, "/") + "/" + version + "/" + file
	default:
		base := strings.TrimSuffix(u.Scheme+"://"+u.Host+"/"+path, "/")
		label := clusterctlv1.ManifestLabel(name, t)
		if parts[len(parts)-1] != label {
			base += "/" + label
		}
		p.URL = base + "/" + repository.LatestVersion + "/" + file
	}
	return p, config.ValidateProvider(p)
}

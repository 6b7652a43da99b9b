// Package repository reads the release assets of providers from their repositories: GitHub releases
// (versions listed through the Go module proxy, falling back to the GitHub API; assets downloaded plainly,
// falling back to the API), GitLab generic packages, and folders laid out as
// {base}/{provider-label}/{version}/{file}, local or on any other http(s) server. Files in the overrides
// folder replace those of any repository, and everything fetched is remembered for the life of the process.
//
// It also knows what a release holds: metadata.yaml (parsed strictly and validated) and how to pick the
// latest release that follows a contract.
package repository

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-github/v75/github"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/httpclient"
)

// LatestVersion is the version that stands for the default version of a repository.
const LatestVersion = "latest"

// Repository is a provider repository.
type Repository interface {
	// URL returns the provider URL the repository was made from.
	URL() string
	// ComponentsPath returns the name of the components file, for example "infrastructure-components.yaml".
	ComponentsPath() string
	// DefaultVersion returns the version in the provider URL or, when the URL says "latest", the latest
	// release that follows the contract of the factory.
	DefaultVersion(ctx context.Context) (string, error)
	// Versions returns the versions the repository holds, as tags ("v1.2.3").
	Versions(ctx context.Context) ([]string, error)
	// File returns a file of a release. An empty version or "latest" is the default version.
	File(ctx context.Context, version, path string) ([]byte, error)
}

// FileLister is implemented by repositories that can list the files of a release.
type FileLister interface {
	// Files returns the names of the files of a release.
	Files(ctx context.Context, version string) ([]string, error)
}

// Factory makes repositories and holds what they share: the configuration, the HTTP client, the retry
// policy and the cache.
type Factory struct {
	cfg      *config.Config
	contract string
	fetch    *fetcher

	mu    sync.Mutex
	repos map[string]Repository

	ghOnce sync.Once
	gh     *github.Client
}

// Option configures a Factory.
type Option func(*factoryOptions)

type factoryOptions struct {
	client   *http.Client
	retry    Retry
	contract string
}

// DefaultHTTPLimits bound the downloads and API calls of a Factory made without WithHTTPClient: 15
// seconds to connect, 5 minutes in all for each call, responses of up to 100 MiB (the largest provider
// components are a few MiB).
var DefaultHTTPLimits = httpclient.Limits{ConnectTimeout: 15 * time.Second, Timeout: 5 * time.Minute, MaxResponseBytes: 100 << 20}

// WithHTTPClient sets the HTTP client of every download and API call; it should bound its calls (see
// package httpclient).
func WithHTTPClient(c *http.Client) Option { return func(o *factoryOptions) { o.client = c } }

// WithRetry sets the retry policy.
func WithRetry(r Retry) Option { return func(o *factoryOptions) { o.retry = r } }

// WithContract sets the contract that "latest" versions must follow; the default is the contract of the
// Cluster API version capstan serves.
func WithContract(contract string) Option { return func(o *factoryOptions) { o.contract = contract } }

// NewFactory returns a Factory for the given configuration.
func NewFactory(cfg *config.Config, opts ...Option) *Factory {
	o := factoryOptions{client: httpclient.New(DefaultHTTPLimits), retry: DefaultRetry, contract: clusterv1.GroupVersion.Version}
	for _, opt := range opts {
		opt(&o)
	}
	return &Factory{cfg: cfg, contract: o.contract, fetch: newFetcher(o.client, o.retry), repos: map[string]Repository{}}
}

// HTTPClient returns the client the factory's repositories download with.
func (f *Factory) HTTPClient() *http.Client { return f.fetch.client }

// Repository returns the repository of a provider, chosen by the form of its URL: GitHub release URLs,
// GitLab package URLs (on a host whose name starts with "gitlab."), other http(s) URLs of folders in the
// layout of local repositories, and local paths (or file:// URLs).
func (f *Factory) Repository(p config.Provider) (Repository, error) {
	key := p.ManifestLabel() + " " + p.URL
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.repos[key]; ok {
		return r, nil
	}
	r, err := f.newRepository(p)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.ManifestLabel(), err)
	}
	f.repos[key] = r
	return r, nil
}

func (f *Factory) newRepository(p config.Provider) (Repository, error) {
	src, err := f.newSource(p)
	if err != nil {
		return nil, err
	}
	return &repository{source: src, factory: f, label: p.ManifestLabel(), overrides: f.cfg.OverridesFolder()}, nil
}

// source is one kind of repository: it lists versions and reads files of concrete versions.
type source interface {
	// url returns the provider URL.
	url() string
	// componentsPath returns the name of the components file.
	componentsPath() string
	// urlVersion returns the version in the URL, LatestVersion when the URL names none.
	urlVersion() string
	// versions lists the versions.
	versions(ctx context.Context) ([]string, error)
	// file reads a file of a concrete version.
	file(ctx context.Context, version, path string) ([]byte, error)
}

// fileLister is implemented by sources that can list the files of a release.
type fileLister interface {
	files(ctx context.Context, version string) ([]string, error)
}

func (f *Factory) newSource(p config.Provider) (source, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %w", p.URL, err)
	}
	switch u.Scheme {
	case "http", "https":
		switch {
		case u.Host == "github.com":
			return newGitHub(f, u)
		case strings.HasPrefix(u.Host, "gitlab."):
			return newGitLab(f, u)
		}
		return newHTTPFolder(f, p, u)
	case "file", "":
		path := u.Path
		if u.Scheme == "" {
			path = p.URL
		}
		return newLocal(f, p, path)
	}
	return nil, fmt.Errorf("unsupported url scheme %q in %q: use https or a local path", u.Scheme, p.URL)
}

// repository adds to a source what all repositories share: the default version, the overrides folder and
// helpful errors for versions and files that do not exist.
type repository struct {
	source
	factory   *Factory
	label     string
	overrides string
}

func (r *repository) URL() string            { return r.url() }
func (r *repository) ComponentsPath() string { return r.componentsPath() }

func (r *repository) DefaultVersion(ctx context.Context) (string, error) {
	if v := r.urlVersion(); v != LatestVersion {
		return v, nil
	}
	v, err := r.factory.fetch.memo("default version "+r.label+" "+r.url(), func() (any, error) {
		return LatestContractRelease(ctx, r, r.factory.contract)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (r *repository) Versions(ctx context.Context) ([]string, error) {
	v, err := r.factory.fetch.memo("versions "+r.label+" "+r.url(), func() (any, error) {
		return r.versions(ctx)
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

func (r *repository) File(ctx context.Context, version, path string) ([]byte, error) {
	if version == "" || version == LatestVersion {
		v, err := r.DefaultVersion(ctx)
		if err != nil {
			return nil, err
		}
		version = v
	}
	override := filepath.Join(r.overrides, r.label, version, path)
	data, err := os.ReadFile(override)
	switch {
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(1).Info("Using override", "file", override, "provider", r.label, "version", version)
		return data, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("reading override %s: %w", override, err)
	}
	data, err = r.file(ctx, version, path)
	if err != nil {
		return nil, r.explain(ctx, version, path, err)
	}
	return data, nil
}

// Files lists the files of a release: those of the source, when it can list them, and the overrides.
func (r *repository) Files(ctx context.Context, version string) ([]string, error) {
	var names []string
	if l, ok := r.source.(fileLister); ok {
		var err error
		if names, err = l.files(ctx, version); err != nil {
			return nil, err
		}
	}
	if entries, err := os.ReadDir(filepath.Join(r.overrides, r.label, version)); err == nil {
		for _, e := range entries {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// explain turns a not-found error into one that says whether the version or the file is missing.
func (r *repository) explain(ctx context.Context, version, path string, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("reading %s of %s %s from %s: %w", path, r.label, version, r.url(), err)
	}
	if _, gitlab := r.source.(*gitLab); !gitlab {
		if versions, verr := r.Versions(ctx); verr == nil && !slices.Contains(versions, version) {
			return &VersionNotFoundError{Label: r.label, Version: version, URL: r.url(), Available: versions}
		}
	}
	return &FileNotFoundError{Label: r.label, Version: version, Path: path, URL: r.url()}
}

// VersionNotFoundError says that a repository has no such version.
type VersionNotFoundError struct {
	Label     string
	Version   string
	URL       string
	Available []string
}

func (e *VersionNotFoundError) Error() string {
	rs := sortReleases(e.Available)
	var newest []string
	for i := 0; i < len(rs) && i < 5; i++ {
		newest = append(newest, rs[i].tag)
	}
	msg := fmt.Sprintf("version %s of %s not found in %s", e.Version, e.Label, e.URL)
	if len(newest) == 0 {
		return msg + ": the repository has no versions"
	}
	return msg + ": use one of " + strings.Join(newest, ", ")
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *VersionNotFoundError) Is(target error) bool { return target == ErrNotFound }

// FileNotFoundError says that a release has no such file.
type FileNotFoundError struct {
	Label   string
	Version string
	Path    string
	URL     string
}

func (e *FileNotFoundError) Error() string {
	return fmt.Sprintf("%s %s has no file %s (repository %s)", e.Label, e.Version, e.Path, e.URL)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *FileNotFoundError) Is(target error) bool { return target == ErrNotFound }

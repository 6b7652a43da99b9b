package releasecheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/manifest"
)

// componentsFile is the name of an infrastructure provider's components YAML.
const componentsFile = "infrastructure-components.yaml"

// Release is a provider's release in the layout of a clusterctl local repository:
// <Dir>/infrastructure-<Name>/<Version>/{metadata.yaml, infrastructure-components.yaml, cluster-template*.yaml, ...}.
type Release struct {
	Dir     string
	Name    string
	Version string
}

// Label is the provider's manifest label, infrastructure-<name>.
func (r Release) Label() string {
	return clusterctlv1.ManifestLabel(r.Name, clusterctlv1.InfrastructureProviderType)
}

// versionDir is the folder of the release's files.
func (r Release) versionDir() string { return filepath.Join(r.Dir, r.Label(), r.Version) }

// components is the path of the components YAML, the URL clusterctl installs it from.
func (r Release) components() string { return filepath.Join(r.versionDir(), componentsFile) }

// releaseFile says whether a file of a release directory is one the kit reads.
var releaseFile = regexp.MustCompile(`^(metadata\.yaml|infrastructure-components\.yaml|cluster-template(-[a-z0-9.-]+)?\.yaml|clusterclass-[a-z0-9.-]+\.yaml)$`)

// loadRelease finds the provider's release at source: a clusterctl local repository (a directory holding
// infrastructure-<name>/<version>/), a GitHub release directory (the flat assets `make release` writes,
// with infrastructure-components.yaml), or a clusterctl repository URL (GitHub release, GitLab, http(s)
// folder, file://). Anything but a local repository is copied into one under work.
func loadRelease(ctx context.Context, source, name, version, work string, client *http.Client) (Release, error) {
	if u, err := url.Parse(source); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file") {
		return fetchRelease(ctx, source, name, version, work, client)
	}
	info, err := os.Stat(source)
	if err != nil {
		return Release{}, fmt.Errorf("reading the provider's release: %w (give a release directory or a clusterctl repository URL)", err)
	}
	if !info.IsDir() {
		return Release{}, fmt.Errorf("%s is not a directory: give a clusterctl local repository, a release directory or a repository URL", source)
	}
	if _, err := os.Stat(filepath.Join(source, componentsFile)); err == nil {
		return copyGitHubRelease(source, name, version, work)
	}
	return localRepository(source, name, version)
}

// localRepository uses a clusterctl local repository in place: its infrastructure-<name> folder (the only
// one, or the one of name) and its newest version (or version).
func localRepository(dir, name, version string) (Release, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Release{}, err
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "infrastructure-"); ok && e.IsDir() {
			names = append(names, n)
		}
	}
	switch {
	case name != "" && !slices.Contains(names, name):
		return Release{}, fmt.Errorf("%s has no infrastructure-%s folder (it has %v)", dir, name, names)
	case name == "" && len(names) == 0:
		return Release{}, fmt.Errorf("%s is neither a clusterctl local repository (no infrastructure-<name> folder) nor a release directory (no %s)", dir, componentsFile)
	case name == "" && len(names) > 1:
		return Release{}, fmt.Errorf("%s holds several infrastructure providers (%v): choose one with --provider-name", dir, names)
	case name == "":
		name = names[0]
	}
	r := Release{Dir: dir, Name: name, Version: version}
	if version == "" {
		versions, err := os.ReadDir(filepath.Join(dir, r.Label()))
		if err != nil {
			return Release{}, err
		}
		found := false
		var newest semver.Version
		for _, v := range versions {
			parsed, err := repository.ParseVersion(v.Name())
			if err != nil || !v.IsDir() {
				continue
			}
			if !found || parsed.GT(newest) {
				found, newest, r.Version = true, parsed, v.Name()
			}
		}
		if !found {
			return Release{}, fmt.Errorf("%s has no version folder (v1.2.3)", filepath.Join(dir, r.Label()))
		}
	}
	if _, err := os.Stat(r.components()); err != nil {
		return Release{}, fmt.Errorf("the release has no components YAML: %w", err)
	}
	return r, nil
}

// copyGitHubRelease copies the assets of a GitHub release directory that belong to the infrastructure
// provider into a local repository under work.
func copyGitHubRelease(dir, name, version, work string) (Release, error) {
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Release{}, err
	}
	for _, e := range entries {
		if e.IsDir() || !releaseFile.MatchString(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return Release{}, err
		}
		files[e.Name()] = data
	}
	return writeRelease(files, name, version, work)
}

// fetchRelease downloads a release from a clusterctl repository URL into a local repository under work.
func fetchRelease(ctx context.Context, rawURL, name, version, work string, client *http.Client) (Release, error) {
	if name == "" {
		name = nameFromURL(rawURL)
	}
	if name == "" {
		return Release{}, fmt.Errorf("cannot tell the provider's name from %s: give it with --provider-name", rawURL)
	}
	cfg, err := config.New(nil, os.LookupEnv)
	if err != nil {
		return Release{}, err
	}
	var opts []repository.Option
	if client != nil {
		opts = append(opts, repository.WithHTTPClient(client))
	}
	repo, err := repository.NewFactory(cfg, opts...).Repository(config.Provider{
		Name: name, Type: clusterctlv1.InfrastructureProviderType, URL: rawURL,
	})
	if err != nil {
		return Release{}, err
	}
	if version == "" {
		if version, err = repo.DefaultVersion(ctx); err != nil {
			return Release{}, fmt.Errorf("finding the release of %s: %w", rawURL, err)
		}
	}
	files := map[string][]byte{}
	for _, f := range []string{"metadata.yaml", repo.ComponentsPath()} {
		data, err := repo.File(ctx, version, f)
		if err != nil {
			return Release{}, fmt.Errorf("fetching %s: %w", f, err)
		}
		files[path.Base(f)] = data
	}
	// The default cluster template is fetched even from repositories that cannot list their files (http
	// folders).
	listed := []string{"cluster-template.yaml"}
	if lister, ok := repo.(repository.FileLister); ok {
		if all, err := lister.Files(ctx, version); err == nil {
			listed = append(listed, all...)
		}
	}
	for _, f := range listed {
		if _, ok := files[f]; ok || !releaseFile.MatchString(f) {
			continue
		}
		data, err := repo.File(ctx, version, f)
		if errors.Is(err, repository.ErrNotFound) {
			continue
		}
		if err != nil {
			return Release{}, fmt.Errorf("fetching %s: %w", f, err)
		}
		files[f] = data
	}
	return writeRelease(files, name, version, work)
}

// nameFromURL returns the provider name of a URL whose path holds an infrastructure-<name> folder.
func nameFromURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	for _, part := range strings.Split(u.Path, "/") {
		if n, ok := strings.CutPrefix(part, "infrastructure-"); ok && n != "components.yaml" {
			return n
		}
	}
	return ""
}

// writeRelease writes a release's files into a local repository under work. The name comes from the
// components' cluster.x-k8s.io/provider label when not given; the version from metadata.yaml's newest
// release series (v<major>.<minor>.0) when not given.
func writeRelease(files map[string][]byte, name, version, work string) (Release, error) {
	comps, ok := files[componentsFile]
	if !ok {
		return Release{}, fmt.Errorf("the release has no %s", componentsFile)
	}
	if name == "" {
		var err error
		if name, err = nameFromComponents(comps); err != nil {
			return Release{}, err
		}
	}
	if version == "" {
		var err error
		if version, err = versionFromMetadata(files["metadata.yaml"]); err != nil {
			return Release{}, err
		}
	}
	r := Release{Dir: filepath.Join(work, "repository"), Name: name, Version: version}
	if err := os.MkdirAll(r.versionDir(), 0o700); err != nil {
		return Release{}, err
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(r.versionDir(), f), data, 0o600); err != nil {
			return Release{}, err
		}
	}
	return r, nil
}

// nameFromComponents reads the provider's name from the cluster.x-k8s.io/provider label of its components.
func nameFromComponents(data []byte) (string, error) {
	objs, err := manifest.Parse(data)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", componentsFile, err)
	}
	for _, o := range objs {
		if n, ok := strings.CutPrefix(o.GetLabels()[clusterv1.ProviderNameLabel], "infrastructure-"); ok && n != "" {
			return n, nil
		}
	}
	return "", fmt.Errorf("%s carries no cluster.x-k8s.io/provider: infrastructure-<name> label: give the provider's name with --provider-name", componentsFile)
}

// versionFromMetadata returns v<major>.<minor>.0 of the newest release series of a metadata.yaml.
func versionFromMetadata(data []byte) (string, error) {
	if data == nil {
		return "", errors.New("the release has no metadata.yaml: give the version with --version")
	}
	var md clusterctlv1.Metadata
	if err := yaml.Unmarshal(data, &md); err != nil {
		return "", fmt.Errorf("reading metadata.yaml: %w", err)
	}
	if len(md.ReleaseSeries) == 0 {
		return "", errors.New("metadata.yaml lists no release series: give the version with --version")
	}
	newest := md.ReleaseSeries[0]
	for _, s := range md.ReleaseSeries[1:] {
		if s.Major > newest.Major || (s.Major == newest.Major && s.Minor > newest.Minor) {
			newest = s
		}
	}
	return fmt.Sprintf("v%d.%d.0", newest.Major, newest.Minor), nil
}

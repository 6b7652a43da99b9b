package repository

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// httpFolder is a repository served over http(s) in the layout of local repositories:
// {base}/{provider-label}/{version|latest}/{file}, on any host that is neither github.com nor gitlab.*.
// Files are downloaded plainly. Versions are the semantic versions linked from the folder's index page
// ({base}/{provider-label}/), as web servers list folders (nginx, Apache, Go's http.FileServer, python's
// http.server), or listed one per line in {base}/{provider-label}/versions.txt when the server has no
// index pages.
type httpFolder struct {
	f           *Factory
	providerURL string
	base        string // {base}/{provider-label}, without a trailing slash
	version     string
	components  string
}

func newHTTPFolder(f *Factory, p config.Provider, u *url.URL) (*httpFolder, error) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 3 {
		return nil, fmt.Errorf("unsupported url %q: %s", p.URL, supportedURLs(p))
	}
	n := len(parts)
	if parts[n-3] != p.ManifestLabel() {
		return nil, fmt.Errorf("invalid http repository url %q: the folder above the version must be the provider label %q, found %q", p.URL, p.ManifestLabel(), parts[n-3])
	}
	h := &httpFolder{
		f:           f,
		providerURL: p.URL,
		base:        u.Scheme + "://" + u.Host + "/" + strings.Join(parts[:n-2], "/"),
		version:     parts[n-2],
		components:  parts[n-1],
	}
	if h.version != LatestVersion {
		if _, err := ParseVersion(h.version); err != nil {
			return nil, fmt.Errorf("invalid http repository url %q: the version folder must be %q or a semantic version: %w", p.URL, LatestVersion, err)
		}
	}
	return h, nil
}

func supportedURLs(p config.Provider) string {
	return "use a GitHub release (https://github.com/{owner}/{repository}/releases/{latest|version}/{file}), a GitLab package " +
		"(https://gitlab.{domain}/api/v4/projects/{project}/packages/generic/{package}/{version}/{file}), an http(s) folder laid out as " +
		"{base}/" + p.ManifestLabel() + "/{latest|version}/{file}, or a local path"
}

func (h *httpFolder) url() string            { return h.providerURL }
func (h *httpFolder) componentsPath() string { return h.components }
func (h *httpFolder) urlVersion() string     { return h.version }

// hrefPattern finds the targets of links in an HTML index page.
var hrefPattern = regexp.MustCompile(`(?i)href\s*=\s*["']([^"']+)["']`)

func (h *httpFolder) versions(ctx context.Context) ([]string, error) {
	var names []string
	index, err := h.f.fetch.get(ctx, h.base+"/", nil)
	if err == nil {
		for _, m := range hrefPattern.FindAllStringSubmatch(string(index), -1) {
			target := strings.TrimSuffix(m[1], "/")
			if i := strings.LastIndex(target, "/"); i >= 0 {
				target = target[i+1:]
			}
			names = append(names, target)
		}
	}
	if len(names) == 0 {
		list, lerr := h.f.fetch.get(ctx, h.base+"/versions.txt", nil)
		if lerr != nil {
			if err == nil {
				err = lerr
			}
			return nil, fmt.Errorf("cannot list the versions of %s: its folder %s/ has no index page linking the version folders and no versions.txt: give a version, or serve an index: %w", h.providerURL, h.base, err)
		}
		names = strings.Fields(string(list))
	}
	var out []string
	for _, n := range names {
		if unescaped, err := url.PathUnescape(n); err == nil {
			n = unescaped
		}
		if _, err := ParseVersion(n); err == nil && strings.HasPrefix(n, "v") && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (h *httpFolder) file(ctx context.Context, version, path string) ([]byte, error) {
	return h.f.fetch.get(ctx, h.base+"/"+url.PathEscape(version)+"/"+path, nil)
}

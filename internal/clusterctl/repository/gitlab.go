package repository

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// gitLabToken is the variable holding the GitLab access token.
const gitLabToken = "gitlab-access-token"

// gitLab is a repository made of GitLab generic packages:
// https://{host}/api/v4/projects/{projectSlug}/packages/generic/{packageName}/{version}/{components file},
// where the host starts with "gitlab." and projectSlug is a project ID or an escaped path (myorg%2Fmyrepo).
// GitLab packages cannot be listed: the only known version is the one in the URL.
type gitLab struct {
	f           *Factory
	providerURL string
	base        string
	version     string
	components  string
}

func newGitLab(f *Factory, u *url.URL) (*gitLab, error) {
	parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(parts) < 9 || parts[0] != "api" || parts[1] != "v4" || parts[2] != "projects" || parts[4] != "packages" || parts[5] != "generic" {
		return nil, fmt.Errorf("invalid GitLab url %q: use https://%s/api/v4/projects/{projectSlug}/packages/generic/{packageName}/{version}/{components file}", u.String(), u.Host)
	}
	g := &gitLab{
		f:           f,
		providerURL: u.String(),
		base:        u.Scheme + "://" + u.Host + "/" + strings.Join(parts[:7], "/"),
		version:     parts[7],
		components:  strings.Join(parts[8:], "/"),
	}
	if _, err := ParseVersion(g.version); err != nil {
		return nil, fmt.Errorf("invalid GitLab url %q: the package version must be a semantic version: %w", u.String(), err)
	}
	return g, nil
}

func (g *gitLab) url() string                                { return g.providerURL }
func (g *gitLab) componentsPath() string                     { return g.components }
func (g *gitLab) urlVersion() string                         { return g.version }
func (g *gitLab) versions(context.Context) ([]string, error) { return []string{g.version}, nil }

func (g *gitLab) file(ctx context.Context, version, path string) ([]byte, error) {
	var header http.Header
	if token, ok := g.f.cfg.Get(gitLabToken); ok && token != "" {
		header = http.Header{"Private-Token": []string{token}}
	}
	return g.f.fetch.get(ctx, g.base+"/"+url.PathEscape(version)+"/"+path, header)
}

package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-logr/logr"
	"github.com/google/go-github/v75/github"
)

// githubToken is the variable holding the GitHub token; "github-token" is accepted too.
const githubToken = "GITHUB_TOKEN"

// gitHub is a repository made of GitHub releases:
// https://github.com/{owner}/{repository}/releases/{latest|version}/{components file}.
type gitHub struct {
	f           *Factory
	providerURL string
	owner, repo string
	version     string
	components  string
}

func newGitHub(f *Factory, u *url.URL) (*gitHub, error) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 5 || parts[2] != "releases" {
		return nil, fmt.Errorf("invalid GitHub url %q: use https://github.com/{owner}/{repository}/releases/{latest|version}/{components file}", u.String())
	}
	g := &gitHub{f: f, providerURL: u.String(), owner: parts[0], repo: parts[1], version: parts[3], components: strings.Join(parts[4:], "/")}
	if g.version != LatestVersion {
		if _, err := ParseVersion(g.version); err != nil {
			return nil, fmt.Errorf("invalid GitHub url %q: the release must be %q or a semantic version: %w", u.String(), LatestVersion, err)
		}
	}
	return g, nil
}

func (g *gitHub) url() string            { return g.providerURL }
func (g *gitHub) componentsPath() string { return g.components }
func (g *gitHub) urlVersion() string     { return g.version }

// versions lists the versions through the Go module proxy, falling back to the GitHub API.
func (g *gitHub) versions(ctx context.Context) ([]string, error) {
	log := logr.FromContextOrDiscard(ctx)
	modulePath := "github.com/" + g.owner + "/" + g.repo
	if proxy := g.f.goProxyFor(modulePath); proxy != nil {
		versions, err := g.f.goProxyVersions(ctx, proxy, modulePath)
		if err == nil {
			return versions, nil
		}
		log.V(1).Info("Listing versions through the Go module proxy failed; asking the GitHub API", "proxy", proxy.String(), "module", modulePath, "error", err.Error())
	}
	return g.f.gitHubReleases(ctx, g.owner, g.repo)
}

func (g *gitHub) file(ctx context.Context, version, path string) ([]byte, error) {
	return g.f.releaseAsset(ctx, g.owner, g.repo, version, path)
}

func (g *gitHub) files(ctx context.Context, version string) ([]string, error) {
	rel, err := g.f.gitHubRelease(ctx, g.owner, g.repo, version)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range rel.Assets {
		names = append(names, a.GetName())
	}
	return names, nil
}

// releaseAsset downloads a release asset plainly and, when that finds nothing (private repositories),
// through the GitHub API.
func (f *Factory) releaseAsset(ctx context.Context, owner, repo, tag, name string) ([]byte, error) {
	plain := fmt.Sprintf("https://github.com/%s/%s/releases/download/%s/%s", owner, repo, tag, name)
	data, err := f.fetch.get(ctx, plain, nil)
	if !errors.Is(err, ErrNotFound) {
		return data, err
	}
	v, err := f.fetch.memo("asset "+owner+"/"+repo+"/"+tag+"/"+name, func() (any, error) {
		rel, err := f.gitHubRelease(ctx, owner, repo, tag)
		if err != nil {
			return nil, err
		}
		for _, a := range rel.Assets {
			if a.GetName() != name {
				continue
			}
			var data []byte
			err := f.fetch.retry.do(ctx, "download asset "+name, func(ctx context.Context) error {
				rc, _, err := f.gitHubClient().Repositories.DownloadReleaseAsset(ctx, owner, repo, a.GetID(), f.fetch.client)
				if err != nil {
					return f.gitHubError(err, fmt.Sprintf("asset %s of release %s of github.com/%s/%s", name, tag, owner, repo))
				}
				defer func() { _ = rc.Close() }()
				data, err = io.ReadAll(rc)
				return err
			})
			return data, err
		}
		return nil, &NotFoundError{What: fmt.Sprintf("asset %s of release %s of github.com/%s/%s", name, tag, owner, repo)}
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// gitHubRelease returns a release by tag.
func (f *Factory) gitHubRelease(ctx context.Context, owner, repo, tag string) (*github.RepositoryRelease, error) {
	v, err := f.fetch.memo("release "+owner+"/"+repo+"/"+tag, func() (any, error) {
		var rel *github.RepositoryRelease
		err := f.fetch.retry.do(ctx, "get release "+tag, func(ctx context.Context) error {
			var err error
			rel, _, err = f.gitHubClient().Repositories.GetReleaseByTag(ctx, owner, repo, tag)
			return f.gitHubError(err, fmt.Sprintf("release %s of github.com/%s/%s", tag, owner, repo))
		})
		return rel, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*github.RepositoryRelease), nil
}

// gitHubReleases lists the tags of the published releases that are semantic versions.
func (f *Factory) gitHubReleases(ctx context.Context, owner, repo string) ([]string, error) {
	v, err := f.fetch.memo("releases "+owner+"/"+repo, func() (any, error) {
		var tags []string
		opts := &github.ListOptions{PerPage: 100}
		for {
			var page []*github.RepositoryRelease
			var resp *github.Response
			err := f.fetch.retry.do(ctx, "list releases", func(ctx context.Context) error {
				var err error
				page, resp, err = f.gitHubClient().Repositories.ListReleases(ctx, owner, repo, opts)
				return f.gitHubError(err, "releases of github.com/"+owner+"/"+repo)
			})
			if err != nil {
				return nil, err
			}
			for _, r := range page {
				if r.GetDraft() {
					continue
				}
				if _, err := ParseVersion(r.GetTagName()); err == nil {
					tags = append(tags, r.GetTagName())
				}
			}
			if resp == nil || resp.NextPage == 0 {
				return tags, nil
			}
			opts.Page = resp.NextPage
		}
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// gitHubContents reads a file of a branch through the GitHub API.
func (f *Factory) gitHubContents(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	var content string
	err := f.fetch.retry.do(ctx, "get contents "+path, func(ctx context.Context) error {
		file, _, _, err := f.gitHubClient().Repositories.GetContents(ctx, owner, repo, path, &github.RepositoryContentGetOptions{Ref: ref})
		if err != nil {
			return f.gitHubError(err, fmt.Sprintf("%s at %s of github.com/%s/%s", path, ref, owner, repo))
		}
		if file == nil {
			return permanent(fmt.Errorf("%s at %s of github.com/%s/%s is a directory, not a file", path, ref, owner, repo))
		}
		c, err := file.GetContent()
		if err != nil {
			return permanent(fmt.Errorf("decoding %s of github.com/%s/%s: %w", path, owner, repo, err))
		}
		content = c
		return nil
	})
	return []byte(content), err
}

// gitHubClient returns the factory's GitHub API client, authenticated with GITHUB_TOKEN when it is set.
func (f *Factory) gitHubClient() *github.Client {
	f.ghOnce.Do(func() {
		f.gh = github.NewClient(f.fetch.client)
		if token := f.gitHubToken(); token != "" {
			f.gh = f.gh.WithAuthToken(token)
		}
	})
	return f.gh
}

func (f *Factory) gitHubToken() string {
	if t, ok := f.cfg.Get(githubToken); ok {
		return t
	}
	t, _ := f.cfg.Get("github-token")
	return t
}

// gitHubError classifies an error of the GitHub API: nil stays nil; missing things are not found; rate
// limits say how to raise them; neither is retried.
func (f *Factory) gitHubError(err error, what string) error {
	if err == nil {
		return nil
	}
	var rate *github.RateLimitError
	if errors.As(err, &rate) {
		return permanent(&RateLimitError{Reset: rate.Rate.Reset.Time, Authenticated: f.gitHubToken() != ""})
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return permanent(&RateLimitError{Authenticated: f.gitHubToken() != ""})
	}
	var resp *github.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		switch code := resp.Response.StatusCode; {
		case code == http.StatusNotFound:
			return permanent(&NotFoundError{What: what})
		case code == http.StatusUnauthorized:
			return permanent(fmt.Errorf("the GitHub API refused GITHUB_TOKEN (401 Unauthorized): check the token"))
		case code < 500:
			return permanent(fmt.Errorf("GitHub API: %s: %w", what, err))
		}
	}
	return fmt.Errorf("GitHub API: %s: %w", what, err)
}

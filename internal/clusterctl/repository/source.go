package repository

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ReadURL reads a file given by URL, for templates passed with --from: GitHub file URLs
// (https://github.com/{owner}/{repository}/blob/{branch}/{path}, read from raw.githubusercontent.com and
// then through the API), GitHub release asset URLs (https://github.com/{owner}/{repository}/releases/download/{tag}/{file})
// and any other http(s) URL, downloaded plainly.
func (f *Factory) ReadURL(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("invalid URL %q: use an http(s) URL", rawURL)
	}
	if u.Host != "github.com" {
		return f.fetch.get(ctx, rawURL, nil)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(parts) >= 5 && parts[2] == "blob":
		owner, repo, ref, path := parts[0], parts[1], parts[3], strings.Join(parts[4:], "/")
		raw := fmt.Sprintf("https://raw.githubusercontent.com/%s/%s/%s/%s", owner, repo, ref, path)
		data, err := f.fetch.get(ctx, raw, nil)
		if !errors.Is(err, ErrNotFound) {
			return data, err
		}
		return f.gitHubContents(ctx, owner, repo, ref, path)
	case len(parts) >= 6 && parts[2] == "releases" && parts[3] == "download":
		return f.releaseAsset(ctx, parts[0], parts[1], parts[4], strings.Join(parts[5:], "/"))
	}
	return nil, fmt.Errorf("unsupported GitHub URL %q: use https://github.com/{owner}/{repository}/blob/{branch}/{path} or https://github.com/{owner}/{repository}/releases/download/{tag}/{file}", rawURL)
}

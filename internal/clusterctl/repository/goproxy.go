package repository

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// DefaultGoProxy is the Go module proxy used when GOPROXY is not set.
const DefaultGoProxy = "https://proxy.golang.org"

// maxMajor bounds the major versions probed on the Go module proxy.
const maxMajor = 100

// goProxyFor returns the Go module proxy to list the versions of modulePath with, following the go
// command's rules: GOPROXY is a list separated by ',' or '|'; "off" and "direct" before any URL disable
// the proxy (clusterctl then asks the GitHub API); modules matching GONOPROXY (or GOPRIVATE when
// GONOPROXY is unset) do not use the proxy. It returns nil when the proxy is disabled.
func (f *Factory) goProxyFor(modulePath string) *url.URL {
	value, ok := f.cfg.Get("GOPROXY")
	if !ok {
		value = DefaultGoProxy
	}
	noProxy, ok := f.cfg.Get("GONOPROXY")
	if !ok {
		noProxy, _ = f.cfg.Get("GOPRIVATE")
	}
	if noProxy != "" && module.MatchPrefixPatterns(noProxy, modulePath) {
		return nil
	}
	for _, entry := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == '|' }) {
		entry = strings.TrimSpace(entry)
		switch entry {
		case "":
			continue
		case "off", "direct":
			return nil
		}
		if !strings.Contains(entry, "://") {
			entry = "https://" + entry
		}
		u, err := url.Parse(entry)
		if err != nil || u.Host == "" {
			continue
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		return u
	}
	return nil
}

// goProxyVersions lists the versions of a module on the proxy at base, walking the major versions
// (modulePath, modulePath/v2, modulePath/v3, ...) until the proxy knows no more. "+incompatible" is dropped.
func (f *Factory) goProxyVersions(ctx context.Context, base *url.URL, modulePath string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for major := 1; major <= maxMajor; major++ {
		path := modulePath
		if major > 1 {
			path += "/v" + strconv.Itoa(major)
		}
		escaped, err := module.EscapePath(path)
		if err != nil {
			return nil, fmt.Errorf("module path %q: %w", path, err)
		}
		u := *base
		u.Path += "/" + escaped + "/@v/list"
		data, err := f.fetch.get(ctx, u.String(), nil)
		if errors.Is(err, ErrNotFound) {
			if major == 1 {
				continue
			}
			break
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			v := strings.TrimSuffix(strings.TrimSpace(sc.Text()), "+incompatible")
			if !semver.IsValid(v) || seen[v] {
				continue
			}
			if major > 1 && semver.Major(v) != "v"+strconv.Itoa(major) {
				continue
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, &NotFoundError{What: "versions of module " + modulePath + " on " + base.String()}
	}
	return out, nil
}

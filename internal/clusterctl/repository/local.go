package repository

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/capstan-dev/capstan/internal/clusterctl/config"
)

// local is a repository on the local filesystem: {base}/{provider-label}/{version}/{file}.
type local struct {
	providerURL string
	base        string
	label       string
	version     string
	components  string
}

func newLocal(f *Factory, p config.Provider, path string) (*local, error) {
	path = filepath.Clean(filepath.FromSlash(path))
	parts := strings.Split(path, string(filepath.Separator))
	if len(parts) < 4 {
		return nil, fmt.Errorf("invalid local repository path %q: use {base path}/%s/{version|latest}/{components file}", path, p.ManifestLabel())
	}
	n := len(parts)
	l := &local{
		providerURL: p.URL,
		base:        strings.Join(parts[:n-3], string(filepath.Separator)),
		label:       parts[n-3],
		version:     parts[n-2],
		components:  parts[n-1],
	}
	if l.base == "" {
		l.base = string(filepath.Separator)
	}
	if l.label != p.ManifestLabel() {
		return nil, fmt.Errorf("invalid local repository path %q: the folder above the version must be the provider label %q, found %q", path, p.ManifestLabel(), l.label)
	}
	if l.version != LatestVersion {
		if _, err := ParseVersion(l.version); err != nil {
			return nil, fmt.Errorf("invalid local repository path %q: the version folder must be %q or a semantic version: %w", path, LatestVersion, err)
		}
	}
	return l, nil
}

func (l *local) url() string            { return l.providerURL }
func (l *local) componentsPath() string { return l.components }
func (l *local) urlVersion() string     { return l.version }

func (l *local) versions(context.Context) ([]string, error) {
	dir := filepath.Join(l.base, l.label)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot read local repository %s: the folder %s does not exist: check the provider url", l.providerURL, dir)
		}
		return nil, fmt.Errorf("cannot read local repository %s: %w", l.providerURL, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := ParseVersion(e.Name()); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (l *local) file(_ context.Context, version, path string) ([]byte, error) {
	p := filepath.Join(l.base, l.label, version, filepath.FromSlash(path))
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(filepath.Join(l.base, l.label)); serr != nil {
				return nil, fmt.Errorf("cannot read local repository %s: the folder %s does not exist: check the provider url", l.providerURL, filepath.Join(l.base, l.label))
			}
			return nil, &NotFoundError{What: p}
		}
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return data, nil
}

func (l *local) files(_ context.Context, version string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(l.base, l.label, version))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

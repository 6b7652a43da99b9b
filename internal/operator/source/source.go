// Package source reads the releases of a provider (its metadata.yaml and components YAML) from where the
// provider's fetchConfig says: clusterctl's built-in repositories and any repository URL clusterctl's
// library reads (GitHub, GitLab, http(s) folders in the local layout), ConfigMaps in the management
// cluster (the air-gapped path, compressed or not), and OCI artifacts. It also keeps the operator's cache
// of fetched releases in ConfigMaps, so that a provider whose release was fetched once is never fetched
// again.
package source

import (
	"context"
	"errors"
	"fmt"
	"slices"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
)

// Release is one version of a provider.
type Release struct {
	// Version is the version, for example v1.10.0.
	Version string
	// Metadata is the release's metadata.yaml.
	Metadata []byte
	// Components is the release's components YAML.
	Components []byte
}

// Source is where a provider's releases come from.
type Source interface {
	// String says where the source reads, for messages.
	String() string
	// Versions lists the versions the source holds.
	Versions(ctx context.Context) ([]string, error)
	// Release reads one version.
	Release(ctx context.Context, version string) (*Release, error)
	// Remote reports whether the source reads over the network, so that what it returns is worth caching.
	Remote() bool
}

// ErrNotFound is matched by errors about versions or files that do not exist.
var ErrNotFound = repository.ErrNotFound

// ContractOf returns the contract a release follows, from its metadata.yaml.
func ContractOf(label string, r *Release) (string, error) {
	meta, err := repository.ParseMetadata(r.Metadata)
	if err != nil {
		return "", fmt.Errorf("invalid %s of %s %s: %w", repository.MetadataFile, label, r.Version, err)
	}
	series, err := repository.ReleaseSeriesFor(meta, label, r.Version)
	if err != nil {
		return "", err
	}
	return series.Contract, nil
}

// Latest returns the newest version of src whose release follows contract (GA releases before
// pre-releases); the newest version when contract is empty.
func Latest(ctx context.Context, src Source, label, contract string) (string, error) {
	versions, err := src.Versions(ctx)
	if err != nil {
		return "", err
	}
	// The same version may come twice (two ConfigMaps, say): once is enough.
	sorted := slices.Compact(repository.SortVersions(versions))
	if len(sorted) == 0 {
		return "", fmt.Errorf("%s has no versions of %s", src, label)
	}
	if contract == "" {
		return sorted[0], nil
	}
	var seen []string
	for _, v := range sorted {
		r, err := src.Release(ctx, v)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return "", err
		}
		c, err := ContractOf(label, r)
		if err != nil {
			continue
		}
		if c == contract {
			return v, nil
		}
		seen = append(seen, v+" ("+c+")")
	}
	return "", fmt.Errorf("no version of %s in %s follows the %s contract of the core provider (found %s): add one, or set spec.version", label, src, contract, joinOrNone(seen))
}

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}

// ComponentsFile returns the usual name of the components file of a provider type, for example
// "infrastructure-components.yaml".
func ComponentsFile(t clusterctlv1.ProviderType) string {
	if t == clusterctlv1.CoreProviderType {
		return "core-components.yaml"
	}
	return clusterctlv1.ManifestLabel("components.yaml", t)
}

package repository

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/go-logr/logr"
)

// ParseVersion parses a release tag such as "v1.2.3" or "1.2.3".
func ParseVersion(tag string) (semver.Version, error) {
	v, err := semver.Parse(strings.TrimPrefix(tag, "v"))
	if err != nil {
		return semver.Version{}, fmt.Errorf("%q is not a semantic version (for example v1.2.3)", tag)
	}
	return v, nil
}

type release struct {
	tag     string
	version semver.Version
}

// sortReleases returns the tags that are semantic versions, newest first, GA releases before pre-releases.
func sortReleases(tags []string) []release {
	var out []release
	for _, t := range tags {
		if v, err := ParseVersion(t); err == nil {
			out = append(out, release{tag: t, version: v})
		}
	}
	slices.SortStableFunc(out, func(a, b release) int {
		aPre, bPre := len(a.version.Pre) > 0, len(b.version.Pre) > 0
		if aPre != bPre {
			if aPre {
				return 1
			}
			return -1
		}
		return b.version.Compare(a.version)
	})
	return out
}

// SortVersions returns the tags that are semantic versions, newest first, GA releases before pre-releases.
func SortVersions(tags []string) []string {
	rs := sortReleases(tags)
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.tag)
	}
	return out
}

// LatestPatchRelease returns the newest release of the major.minor series, GA releases first.
func LatestPatchRelease(tags []string, major, minor uint64) (string, error) {
	for _, r := range sortReleases(tags) {
		if r.version.Major == major && r.version.Minor == minor {
			return r.tag, nil
		}
	}
	return "", &NotFoundError{What: fmt.Sprintf("release of the v%d.%d series", major, minor)}
}

// maxReleasesWithoutAssets bounds how many tags without release assets (tags pushed before their release
// is published) are skipped while looking for the latest release.
const maxReleasesWithoutAssets = 3

// LatestContractRelease returns the latest release of repo that follows contract: the latest release
// when its series follows the contract, else the latest release of the newest series that does (read from
// the latest release's metadata.yaml). A repository whose metadata.yaml names no series for the contract
// yields its latest release, which later checks then reject with a clear error.
func LatestContractRelease(ctx context.Context, repo Repository, contract string) (string, error) {
	tags, err := repo.Versions(ctx)
	if err != nil {
		return "", err
	}
	rs := sortReleases(tags)
	if len(rs) == 0 {
		return "", fmt.Errorf("no release found in %s: check the provider url", repo.URL())
	}
	log := logr.FromContextOrDiscard(ctx)
	for i, latest := range rs {
		meta, err := GetMetadata(ctx, repo, latest.tag)
		if errors.Is(err, ErrNotFound) && i < maxReleasesWithoutAssets && i+1 < len(rs) {
			log.V(1).Info("Skipping a version without release assets", "version", latest.tag, "repository", repo.URL())
			continue
		}
		if err != nil {
			return "", err
		}
		var best *struct{ major, minor int32 }
		for _, s := range meta.ReleaseSeries {
			if s.Contract != contract {
				continue
			}
			if best == nil || s.Major > best.major || (s.Major == best.major && s.Minor > best.minor) {
				best = &struct{ major, minor int32 }{s.Major, s.Minor}
			}
		}
		if best == nil || (latest.version.Major == uint64(best.major) && latest.version.Minor == uint64(best.minor)) {
			return latest.tag, nil
		}
		log.V(1).Info("The latest release does not follow the contract; using the latest release of the newest series that does",
			"latest", latest.tag, "contract", contract, "series", fmt.Sprintf("v%d.%d", best.major, best.minor))
		tag, err := LatestPatchRelease(tags, uint64(best.major), uint64(best.minor))
		if err != nil {
			return "", fmt.Errorf("the %s of %s %s maps the contract %s to the v%d.%d series, but there is no v%d.%d release in %s: ask the provider's maintainers to add the v%d.%d series to %s, or give a version",
				MetadataFile, label(repo), latest.tag, contract, best.major, best.minor, best.major, best.minor, repo.URL(), latest.version.Major, latest.version.Minor, MetadataFile)
		}
		return tag, nil
	}
	return "", fmt.Errorf("no release of %s has release assets", repo.URL())
}

// label returns the provider label of a repository made by a Factory, else its URL.
func label(repo Repository) string {
	if r, ok := repo.(*repository); ok {
		return r.label
	}
	return repo.URL()
}

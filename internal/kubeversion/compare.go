package kubeversion

import (
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// Compare orders two versions as semantic versions and, when they are equal, by their build metadata,
// identifier by identifier: numbers numerically and before words; two different words cannot be ordered
// (build identifiers may be commit hashes), then the result is 2. It returns -1, 0, 1 or 2, as upstream's
// util/version.Compare with WithBuildTags.
func Compare(a, b semver.Version) int {
	if c := a.Compare(b); c != 0 {
		return c
	}
	for i := 0; i < len(a.Build) && i < len(b.Build); i++ {
		if c := compareBuildIdentifier(a.Build[i], b.Build[i]); c != 0 {
			return c
		}
	}
	// Equal so far: the longer build metadata is the greater.
	switch {
	case len(a.Build) == len(b.Build):
		return 0
	case len(a.Build) < len(b.Build):
		return -1
	default:
		return 1
	}
}

func compareBuildIdentifier(a, b string) int {
	an, aNum := buildNumber(a)
	bn, bNum := buildNumber(b)
	switch {
	case aNum && bNum:
		switch {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	case aNum:
		return -1
	case bNum:
		return 1
	case a == b:
		return 0
	default:
		return 2
	}
}

// buildNumber reads a build identifier made of digits only (the empty one included, as upstream).
func buildNumber(s string) (uint64, bool) {
	if strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return n, true
}

package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/capstan-dev/capstan/internal/kubeversion"
)

// This file holds the pure rules of chained upgrades (upstream Cluster API v1.12+): a Cluster's
// spec.topology.version may move several minors at once, the control plane steps through every minor and
// the workers skip the minors the version skew policy lets them skip. The plan comes from the
// ClusterClass's list of Kubernetes versions, from a GenerateUpgradePlan extension, or, without either,
// is the desired version alone. The engine's upgrade sequence (upgrade.go) does not use these functions
// yet; docs/dev/chained-upgrades.md describes the rest of the work.

// maxWorkersMinorSkew is how many minors a kubelet may be older than the API server (Kubernetes' version
// skew policy): a worker upgrade step may jump at most this many minors.
const maxWorkersMinorSkew = 3

// vString writes a parsed version the way upstream writes versions in the plans' messages: "v" and the
// semantic version.
func vString(v semver.Version) string { return "v" + v.String() }

// lowerThanMinVersion reports whether v is lower than the lowest workers' version found so far. When
// the two differ only by build metadata that cannot be ordered, the control plane's version decides: a
// worker runs either the control plane's version or an older one, so v is the lower unless it is the
// control plane's (upstream's isLowerThanMinVersion).
func lowerThanMinVersion(v, minVersion, controlPlane semver.Version) bool {
	switch kubeversion.Compare(v, minVersion) {
	case -1:
		return true
	case 2:
		return v.String() != controlPlane.String()
	default:
		return false
	}
}

// workerAt is the version of one topology MachineDeployment or MachinePool, for minWorkersVersion.
type workerAt struct {
	kind    string // MachineDeployment or MachinePool
	name    string
	version string // "" when unset: not counted
}

// minWorkersVersion is the lowest version the workers run ("" without a worker that has one), written
// "v" and the semantic version, as the GenerateUpgradePlan request's fromWorkersKubernetesVersion.
// Workers should come in a stable order (MachineDeployments, then MachinePools, each by name): among
// versions whose build metadata cannot be ordered, the one met last that is not the control plane's
// wins.
func minWorkersVersion(controlPlaneVersion string, workers []workerAt) (string, error) {
	cp, err := semver.ParseTolerant(controlPlaneVersion)
	if err != nil {
		return "", fmt.Errorf("failed to parse ControlPlane version %s: %w", controlPlaneVersion, err)
	}
	var lowest *semver.Version
	for _, w := range workers {
		if w.version == "" {
			continue
		}
		v, err := semver.ParseTolerant(w.version)
		if err != nil {
			return "", fmt.Errorf("failed to parse version %s of %s %s: %w", w.version, w.kind, w.name, err)
		}
		if lowest == nil || lowerThanMinVersion(v, *lowest, cp) {
			lowest = &v
		}
	}
	if lowest == nil {
		return "", nil
	}
	return vString(*lowest), nil
}

// parseUpgradeEnds parses the desired version and the control plane's, with upstream's messages.
func parseUpgradeEnds(desiredVersion, controlPlaneVersion string) (desired, controlPlane semver.Version, err error) {
	if desired, err = semver.ParseTolerant(desiredVersion); err != nil {
		return desired, controlPlane, fmt.Errorf("failed to parse desired version: %w", err)
	}
	if controlPlane, err = semver.ParseTolerant(controlPlaneVersion); err != nil {
		return desired, controlPlane, fmt.Errorf("failed to parse current ControlPlane version: %w", err)
	}
	return desired, controlPlane, nil
}

// upgradePlanOneMinor is the control plane's plan when the ClusterClass names neither Kubernetes
// versions nor an upgrade plan extension: the desired version, at most one minor above the control
// plane's (as before chained upgrades); nothing when the control plane runs it. The workers' plan is
// left to defaultAndValidateUpgradePlans (upstream's GetUpgradePlanOneMinor).
func upgradePlanOneMinor(desiredVersion, controlPlaneVersion string) ([]string, error) {
	desired, cp, err := parseUpgradeEnds(desiredVersion, controlPlaneVersion)
	if err != nil || cp.String() == desired.String() {
		return nil, err
	}
	if desired.Minor > cp.Minor+1 {
		return nil, fmt.Errorf("cannot compute an upgrade plan from %s to %s", controlPlaneVersion, desiredVersion)
	}
	return []string{desiredVersion}, nil
}

// upgradePlanFromVersions is the control plane's plan from the ClusterClass's list of Kubernetes
// versions (kept in ascending order by the ClusterClass's admission): of the listed versions above the
// control plane's and up to the desired one, the last listed of each minor; for an upgrade within a
// minor, the last listed of that minor. Versions of the control plane's minor are skipped when the
// upgrade goes to another minor. The plan may end short of the desired version or skip a minor when the
// list lacks one; defaultAndValidateUpgradePlans refuses such a plan. The workers' plan is left to
// defaultAndValidateUpgradePlans (upstream's GetUpgradePlanFromClusterClassVersions).
func upgradePlanFromVersions(classVersions []string, desiredVersion, controlPlaneVersion string) ([]string, error) {
	desired, cp, err := parseUpgradeEnds(desiredVersion, controlPlaneVersion)
	if err != nil || cp.String() == desired.String() {
		return nil, err
	}

	type candidate struct {
		raw   string
		minor uint64
	}
	var candidates []candidate
	for _, raw := range classVersions {
		v, err := semver.ParseTolerant(raw)
		if err != nil {
			return nil, fmt.Errorf("failed to parse version %s: %w", raw, err)
		}
		// Build metadata is ignored here: a version equal to the control plane's but for its build is of
		// the control plane's patch, which a plan to another minor never holds.
		if v.Compare(cp) <= 0 {
			continue
		}
		// Past the desired version (the admission keeps the desired version in the list, so this is a
		// safeguard); versions that differ from it only by unordered build metadata are kept.
		if kubeversion.Compare(v, desired) == 1 {
			break
		}
		candidates = append(candidates, candidate{raw, v.Minor})
		if v.String() == desired.String() {
			break
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}

	// One version per minor, the last listed. A version of the control plane's minor opens the plan only
	// when the upgrade stays within that minor.
	var plan []string
	minor := cp.Minor
	if minor == desired.Minor {
		plan = append(plan, candidates[0].raw)
	}
	for _, c := range candidates {
		switch {
		case c.minor > minor:
			plan = append(plan, c.raw)
		case c.minor == minor && len(plan) > 0:
			plan[len(plan)-1] = c.raw
		}
		minor = c.minor
	}
	return plan, nil
}

// versionKey writes a version for comparing plans' entries: "1.31.1" and "v1.31.1" are the same entry.
func versionKey(raw string) string {
	if v, err := semver.ParseTolerant(raw); err == nil {
		return vString(v)
	}
	return raw
}

// defaultAndValidateUpgradePlans checks the control plane's upgrade plan and the workers' one, and
// defaults the workers' plan when it is empty; it returns the workers' plan (upstream's
// DefaultAndValidateUpgradePlans, with its messages).
//
// The control plane's plan, when the control plane does not run desiredVersion, goes up at every step
// (versions that differ only by build metadata that cannot be ordered are taken in the plan's order),
// never skips a minor and ends at desiredVersion; it is empty when the control plane runs desiredVersion.
//
// The workers' plan, when the lowest workers' version (minWorkersVersion, "" without workers) is not
// desiredVersion, holds only versions of the control plane's plan or the control plane's version, goes
// up at every step (versions that differ only by unordered build metadata in the control plane plan's
// order), never moves the workers more than three minors at once (the version skew policy) and ends at
// desiredVersion. An empty workers' plan is defaulted to the fewest steps: every third minor from the
// workers' one, at the control plane plan's version of that minor, then desiredVersion. Without workers
// behind, the workers' plan must be empty.
func defaultAndValidateUpgradePlans(desiredVersion, controlPlaneVersion, minWorkersVersion string, controlPlanePlan, workersPlan []string) ([]string, error) {
	desired, err := semver.ParseTolerant(desiredVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to parse Cluster version %s: %w", desiredVersion, err)
	}
	cp, err := semver.ParseTolerant(controlPlaneVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to parse ControlPlane version %s: %w", controlPlaneVersion, err)
	}
	var minWorkers *semver.Version
	if minWorkersVersion != "" {
		v, err := semver.ParseTolerant(minWorkersVersion)
		if err != nil {
			return nil, fmt.Errorf("failed to parse min workers version %s: %w", minWorkersVersion, err)
		}
		minWorkers = &v
	}

	// The version the workers' defaulted plan takes for each minor: the control plane's own version
	// (the control plane may be ahead of the workers already), then the last of each minor in its plan.
	byMinor := map[uint64]string{cp.Minor: controlPlaneVersion}
	// The position of each version in the control plane's path, to order versions that differ only by
	// build metadata that cannot be ordered.
	order := map[string]int{versionKey(controlPlaneVersion): -1}

	if kubeversion.Compare(cp, desired) != 0 {
		current := cp
		for i, raw := range controlPlanePlan {
			order[versionKey(raw)] = i
			target, err := semver.ParseTolerant(raw)
			if err != nil {
				return nil, fmt.Errorf("invalid ControlPlane upgrade plan: item %d; failed to parse version %s: %w", i, raw, err)
			}
			// Equal but for unordered build metadata (2) is accepted: the plan gives the order.
			if kubeversion.Compare(target, current) <= 0 {
				return nil, fmt.Errorf("invalid ControlPlane upgrade plan: item %d; version %s must be greater than %s", i, raw, vString(current))
			}
			if target.Minor != current.Minor && target.Minor != current.Minor+1 {
				return nil, fmt.Errorf("invalid ControlPlane upgrade plan: item %d; expecting a version with minor %d or %d, found version %s", i, current.Minor, current.Minor+1, raw)
			}
			byMinor[target.Minor] = raw
			current = target
		}
		if kubeversion.Compare(current, desired) != 0 {
			return nil, fmt.Errorf("invalid ControlPlane upgrade plan: control plane upgrade plan must end with version %s, ends with %s instead", desiredVersion, vString(current))
		}
	} else if len(controlPlanePlan) > 0 {
		return nil, errors.New("invalid ControlPlane upgrade plan: control plane is already at the desired version")
	}

	if minWorkers == nil || kubeversion.Compare(*minWorkers, desired) == 0 {
		if len(workersPlan) > 0 {
			return nil, errors.New("invalid worker upgrade plan; there are no workers or workers already at the desired version")
		}
		return workersPlan, nil
	}

	if len(controlPlanePlan) > 0 {
		known := map[string]bool{versionKey(controlPlaneVersion): true}
		for _, raw := range controlPlanePlan {
			known[versionKey(raw)] = true
		}
		var unknown []string
		for _, raw := range workersPlan {
			if !known[versionKey(raw)] && !slices.Contains(unknown, raw) {
				unknown = append(unknown, raw)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("invalid workers upgrade plan: versions %s doesn't match any versions in the control plane upgrade plan nor the control plane version", strings.Join(unknown, ","))
		}
	}

	if len(workersPlan) == 0 {
		from := minWorkers.Minor
		// A step at every third minor keeps the workers within the skew policy of the control plane
		// stepping through the minors. A desired minor below the workers' one means no intermediate step.
		for i := uint64(maxWorkersMinorSkew); desired.Minor > from && i < desired.Minor-from; i += maxWorkersMinorSkew {
			raw, ok := byMinor[from+i]
			if !ok {
				// The control plane's version and plan cover every minor from the workers' one to the
				// desired one when the workers are within the skew policy of the control plane.
				return nil, fmt.Errorf("invalid upgrade plan; unable to identify version for minor %d", from+i)
			}
			workersPlan = append(workersPlan, raw)
		}
		if len(workersPlan) == 0 || workersPlan[len(workersPlan)-1] != desiredVersion {
			workersPlan = append(workersPlan, desiredVersion)
		}
	}

	current := *minWorkers
	for i, raw := range workersPlan {
		target, err := semver.ParseTolerant(raw)
		if err != nil {
			return nil, fmt.Errorf("invalid workers upgrade plan, item %d; failed to parse version %s: %w", i, raw, err)
		}
		switch kubeversion.Compare(target, current) {
		case -1, 0:
			return nil, fmt.Errorf("invalid workers upgrade plan, item %d; version %s must be greater than %s", i, raw, vString(current))
		case 2:
			// Unordered build metadata: the workers go the control plane's way.
			targetOrder, ok := order[versionKey(raw)]
			if !ok {
				// "failer" is upstream's spelling, kept with the rest of its messages.
				return nil, fmt.Errorf("invalid workers upgrade plan, item %d; failer to determine version %s order", i, raw)
			}
			currentOrder, ok := order[vString(current)]
			if !ok {
				return nil, fmt.Errorf("failer to determine version %s order", vString(current))
			}
			if targetOrder < currentOrder {
				return nil, fmt.Errorf("invalid workers upgrade plan, item %d; version %s must be before %s", i, raw, vString(current))
			}
		}
		if target.Minor > current.Minor && target.Minor-current.Minor > maxWorkersMinorSkew {
			return nil, fmt.Errorf("invalid workers upgrade plan, item %d; workers cannot go from minor %d (%s) to minor %d (%s), an intermediate step is required to comply with Kubernetes version skew rules",
				i, current.Minor, vString(current), target.Minor, raw)
		}
		current = target
	}
	if kubeversion.Compare(current, desired) != 0 {
		return nil, fmt.Errorf("invalid workers upgrade plan; workers upgrade plan must end with version %s, ends with %s instead", desiredVersion, vString(current))
	}
	return workersPlan, nil
}

package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
)

// VersionChangeError says why a change of spec.topology.version is refused.
type VersionChangeError struct{ msg string }

func (e *VersionChangeError) Error() string { return e.msg }

// VersionChange is a change of a Cluster's spec.topology.version, with what its admission depends on
// besides the state of the Cluster.
type VersionChange struct {
	// Old and New are spec.topology.version before and after the change.
	Old, New string
	// Class is the Cluster's ClusterClass; nil when it is not known, which is judged as a class without
	// chained upgrades.
	Class *clusterv1.ClusterClass
	// Cluster is the changed Cluster, whose runtime.cluster.x-k8s.io/pending-hooks annotation is read;
	// nil when it is not known.
	Cluster *clusterv1.Cluster
}

// ChainedUpgrades reports whether the Clusters of class may move spec.topology.version several minors at
// once, the upgrade going through every minor: the class lists kubernetesVersions (which the ClusterClass
// webhook keeps free of gaps, and a Cluster's version must be one of), or names a GenerateUpgradePlan
// extension (which upstream expects to come with a Cluster webhook of its own).
func ChainedUpgrades(class *clusterv1.ClusterClass) bool {
	return class != nil && (len(class.Spec.KubernetesVersions) > 0 || class.Spec.Upgrade.External.GenerateUpgradePlanExtension != "")
}

// CheckVersionChange is the admission check of a change of spec.topology.version, with upstream's rules
// and messages, against the current state of the Cluster: the version may not decrease, nor go up two
// minors unless the class does chained upgrades (ChainedUpgrades), nor change while the
// AfterClusterUpgrade hook of the previous upgrade is pending; and a new version is accepted only when
// the control plane runs the old version and is neither provisioning nor upgrading, and every topology
// MachineDeployment and MachinePool runs the old version and is not upgrading (deferred and held ones
// included: the control plane would otherwise move further from them than the version skew allows).
func CheckVersionChange(cur *Current, change VersionChange) error {
	oldVersion, newVersion := change.Old, change.New
	if oldVersion == newVersion {
		return nil
	}
	o, err1 := semver.ParseTolerant(oldVersion)
	n, err2 := semver.ParseTolerant(newVersion)
	if err1 != nil || err2 != nil {
		return nil // the CRD's pattern refuses versions that do not parse
	}
	if n.EQ(o) {
		return nil
	}
	if n.LT(o) {
		return &VersionChangeError{fmt.Sprintf("version cannot be decreased from %q to %q", oldVersion, newVersion)}
	}
	if !ChainedUpgrades(change.Class) && n.GTE(semver.Version{Major: o.Major, Minor: o.Minor + 2}) {
		return &VersionChangeError{fmt.Sprintf("version cannot be increased from %q to %q", oldVersion, newVersion)}
	}
	// The previous upgrade is not over until AfterClusterUpgrade has been called and let it go.
	if change.Cluster != nil && hooks.IsPending(runtimehooksv1.AfterClusterUpgrade, change.Cluster) {
		return &VersionChangeError{fmt.Sprintf("version cannot be changed when the %q hook is still blocking", runtimehooksv1.AfterClusterUpgrade)}
	}
	var errs []error
	if cp := cur.ControlPlane.Object; cp != nil {
		version, provisioning, upgrading, err := ReadControlPlane(cp)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to check if control plane is upgrading: %w", err))
		case !sameVersion(version, oldVersion):
			errs = append(errs, fmt.Errorf("Cluster.spec.topology.version %s was not propagated to control plane yet (control plane version %s)", oldVersion, version)) //nolint:staticcheck // upstream's message
		case provisioning:
			errs = append(errs, errors.New("control plane is currently provisioning"))
		case upgrading:
			errs = append(errs, errors.New("control plane is still completing a previous upgrade"))
		}
	}
	pick := func(ws []currentWorker) []string {
		var names []string
		for _, w := range ws {
			if name, version, upgrading := w.versionFacts(); upgrading || !sameVersion(version, oldVersion) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		return names
	}
	mds, mps := currentWorkers(cur)
	if names := pick(mds); len(names) > 0 {
		errs = append(errs, fmt.Errorf("there are still MachineDeployments completing a previous upgrade: [%s]", strings.Join(names, ", ")))
	}
	if names := pick(mps); len(names) > 0 {
		errs = append(errs, fmt.Errorf("there are still MachinePools completing a previous upgrade: [%s]", strings.Join(names, ", ")))
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	msg := strings.Join(msgs, ", ")
	if len(msgs) > 1 {
		msg = "[" + msg + "]"
	}
	return &VersionChangeError{"version cannot be changed: " + msg}
}

// sameVersion compares two Kubernetes versions as semantic versions ("v" prefix or not).
func sameVersion(a, b string) bool {
	va, err1 := semver.ParseTolerant(a)
	vb, err2 := semver.ParseTolerant(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return va.EQ(vb)
}

// CheckKubernetesVersions is the admission check of a ClusterClass's kubernetesVersions, with upstream's
// rules and messages: each is a semantic version greater than the one before (two versions that differ
// only by build metadata that cannot be ordered, such as commit hashes, pass), and the next minor follows
// the previous one without a gap, since the upgrade plan goes through every minor. A version that does
// not parse is skipped in the comparisons. The errors are at path's items: upstream's is
// spec.kubernetesVersion, singular.
func CheckKubernetesVersions(versions []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var previous *semver.Version
	for i, v := range versions {
		version, err := semver.ParseTolerant(v)
		if err != nil {
			errs = append(errs, field.Invalid(path.Index(i), v, "version must be a valid semantic version"))
			continue
		}
		if previous != nil {
			if c := kubeversion.Compare(version, *previous); c == 0 || c == -1 {
				errs = append(errs, field.Invalid(path.Index(i), v, "version must be greater than "+vString(*previous)))
			}
			if version.Minor != previous.Minor && version.Minor != previous.Minor+1 {
				errs = append(errs, field.Invalid(path.Index(i), v,
					fmt.Sprintf("expecting a version with minor %d or %d, found version %s", previous.Minor, previous.Minor+1, version)))
			}
		}
		previous = &version
	}
	return errs
}

// CheckVersionInClass is the admission check of a Cluster's spec.topology.version against its class's
// kubernetesVersions: when the class lists versions, the Cluster's must be one of them, written the same
// way (upstream compares the strings).
func CheckVersionInClass(version string, kubernetesVersions []string) error {
	if len(kubernetesVersions) == 0 || slices.Contains(kubernetesVersions, version) {
		return nil
	}
	return errors.New("version must match one of the versions defined in the ClusterClass")
}

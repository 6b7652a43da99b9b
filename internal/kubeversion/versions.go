package kubeversion

import (
	"cmp"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// OfMachine is the Kubernetes version a Machine runs: its Node's kubelet version once the Machine
// reports it, spec.version before; "" when neither is known.
func OfMachine(m *clusterv1.Machine) string {
	if m.Status.NodeInfo != nil && m.Status.NodeInfo.KubeletVersion != "" {
		return m.Status.NodeInfo.KubeletVersion
	}
	if m.Spec.Version != nil {
		return *m.Spec.Version
	}
	return ""
}

// FromMachines counts the Machines of each version (OfMachine), sorted as Sort does; Machines whose
// version is not known are left out, and nil stands for none. Machines are taken oldest first (then by
// name), which orders versions Sort cannot tell apart.
func FromMachines(machines []*clusterv1.Machine) []clusterv1.StatusVersion {
	if len(machines) == 0 {
		return nil
	}
	oldestFirst := slices.Clone(machines)
	slices.SortStableFunc(oldestFirst, func(a, b *clusterv1.Machine) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var c counter
	for _, m := range oldestFirst {
		c.add(OfMachine(m), 1)
	}
	return c.sorted()
}

// Aggregate merges the entries of the same version (the same string), adding up their replicas, and
// sorts the result as Sort does; entries without a version are left out, and nil stands for none. Versions
// Sort cannot tell apart keep the order in which they first appear.
func Aggregate(versions []clusterv1.StatusVersion) []clusterv1.StatusVersion {
	var c counter
	for _, v := range versions {
		c.add(v.Version, v.Replicas)
	}
	return c.sorted()
}

// counter adds up replicas by version, remembering the order in which versions first appear.
type counter struct {
	index    map[string]int
	versions []clusterv1.StatusVersion
}

func (c *counter) add(version string, replicas int32) {
	if version == "" {
		return
	}
	if i, ok := c.index[version]; ok {
		c.versions[i].Replicas += replicas
		return
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	c.index[version] = len(c.versions)
	c.versions = append(c.versions, clusterv1.StatusVersion{Version: version, Replicas: replicas})
}

func (c *counter) sorted() []clusterv1.StatusVersion {
	if len(c.versions) == 0 {
		return nil
	}
	Sort(c.versions)
	return c.versions
}

// Sort orders versions from the oldest to the newest, as upstream orders status.versions: versions that
// parse (with or without a leading v) by Compare, two that compare equal but are written differently
// ("1.33.0", "v1.33.0") by their text, and before those that do not parse, which are in text order. The sort
// is stable: versions it cannot order (the same version with build metadata that cannot be ordered, such
// as commit hashes) keep their order.
func Sort(versions []clusterv1.StatusVersion) {
	type parsed struct {
		v  semver.Version
		ok bool
	}
	cache := make(map[string]parsed, len(versions))
	parse := func(s string) parsed {
		p, seen := cache[s]
		if !seen {
			v, err := semver.ParseTolerant(s)
			p = parsed{v: v, ok: err == nil}
			cache[s] = p
		}
		return p
	}
	slices.SortStableFunc(versions, func(a, b clusterv1.StatusVersion) int {
		pa, pb := parse(a.Version), parse(b.Version)
		switch {
		case pa.ok && pb.ok:
			switch c := Compare(pa.v, pb.v); c {
			case -1, 1:
				return c
			case 0:
				return strings.Compare(a.Version, b.Version)
			default:
				return 0
			}
		case pa.ok:
			return -1
		case pb.ok:
			return 1
		default:
			return cmp.Compare(a.Version, b.Version)
		}
	})
}

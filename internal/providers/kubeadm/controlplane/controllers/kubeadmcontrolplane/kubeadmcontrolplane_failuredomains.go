package kubeadmcontrolplane

import (
	"sort"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// fdCount counts the Machines of a failure domain: all of them, and those of a priority subset.
type fdCount struct {
	id            string
	priority, all int
}

// countByFailureDomain counts all and priority Machines in each of the control plane failure domains,
// sorted by fewest priority Machines, then fewest Machines, then name.
func countByFailureDomain(fds clusterv1.FailureDomains, all, priority []*clusterv1.Machine) []fdCount {
	counts := map[string]*fdCount{}
	for id := range fds {
		counts[id] = &fdCount{id: id}
	}
	for _, m := range all {
		if c, ok := counts[ptr.Deref(m.Spec.FailureDomain, "")]; ok {
			c.all++
		}
	}
	for _, m := range priority {
		if c, ok := counts[ptr.Deref(m.Spec.FailureDomain, "")]; ok {
			c.priority++
		}
	}
	out := make([]fdCount, 0, len(counts))
	for _, c := range counts {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].priority != out[j].priority {
			return out[i].priority < out[j].priority
		}
		if out[i].all != out[j].all {
			return out[i].all < out[j].all
		}
		return out[i].id < out[j].id
	})
	return out
}

// nextFailureDomain returns the control plane failure domain for a new Machine: the one with the fewest
// up-to-date Machines not being deleted, then the fewest Machines. nil without failure domains.
func (s *scope) nextFailureDomain() *string {
	fds := s.cluster.Status.FailureDomains.FilterControlPlane()
	if len(fds) == 0 {
		return nil
	}
	upToDate := filter(s.active(), s.upToDate)
	counts := countByFailureDomain(fds, s.all(), upToDate)
	return ptr.To(counts[0].id)
}

// machineInFailureDomainWithMostMachines picks, among eligible, the oldest Machine of the failure domain with
// the most eligible Machines (then the most Machines). Eligible Machines outside the known failure domains
// go first.
func (s *scope) machineInFailureDomainWithMostMachines(eligible []*clusterv1.Machine) *clusterv1.Machine {
	fds := s.cluster.Status.FailureDomains.FilterControlPlane()
	outside := filter(eligible, func(m *clusterv1.Machine) bool {
		_, ok := fds[ptr.Deref(m.Spec.FailureDomain, "")]
		return !ok
	})
	if len(outside) > 0 {
		return oldest(outside)
	}
	var best *fdCount
	for _, c := range countByFailureDomain(fds, s.all(), eligible) {
		// counts are sorted by name on ties: keep the first of the most priority, then most Machines.
		if best == nil || c.priority > best.priority || (c.priority == best.priority && c.all > best.all) {
			best = &c
		}
	}
	if best == nil || best.priority == 0 {
		return nil
	}
	return oldest(filter(eligible, func(m *clusterv1.Machine) bool { return ptr.Deref(m.Spec.FailureDomain, "") == best.id }))
}

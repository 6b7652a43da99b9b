package machinedeployment

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// templateHash is a short, stable hash of the fields of a Machine template that trigger a rollout: FNV-32a
// of their JSON encoding (Go's encoding sorts map keys, so it is canonical).
func templateHash(t *clusterv1.MachineTemplateSpec) string {
	data, err := json.Marshal(rollout.Fields(t))
	if err != nil {
		// A MachineTemplateSpec always encodes; this would be a programming error.
		panic(fmt.Sprintf("encoding a Machine template: %v", err))
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return fmt.Sprintf("%d", h.Sum32())
}

// findNewMachineSet returns the MachineSet whose Machines match the MachineDeployment's template, or nil.
// When several match, the one with the most replicas is taken (then the oldest), to replace as few Machines
// as possible. Once spec.rolloutAfter has passed, only a MachineSet created at or after it matches.
func findNewMachineSet(md *clusterv1.MachineDeployment, machineSets []*clusterv1.MachineSet, now time.Time) *clusterv1.MachineSet {
	var matching []*clusterv1.MachineSet
	for _, ms := range machineSets {
		if !ms.DeletionTimestamp.IsZero() {
			continue
		}
		if len(rollout.TemplateDiff(&ms.Spec.Template, &md.Spec.Template)) == 0 {
			matching = append(matching, ms)
		}
	}
	sort.SliceStable(matching, func(i, j int) bool {
		ri, rj := ptr.Deref(matching[i].Spec.Replicas, 0), ptr.Deref(matching[j].Spec.Replicas, 0)
		if ri != rj {
			return ri > rj
		}
		return olderThan(matching[i], matching[j])
	})
	for _, ms := range matching {
		if !rollout.AfterExpired(md, ms, now) {
			return ms
		}
	}
	return nil
}

// olderThan orders MachineSets by creation time, then name.
func olderThan(a, b *clusterv1.MachineSet) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// newerThan orders MachineSets from the newest, then by name.
func newerThan(a, b *clusterv1.MachineSet) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name < b.Name
}

package machineset

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// Deletion priorities: Machines with a higher one are deleted first.
const (
	deletionPriorityByDeletePolicy = iota + 1
	deletionPriorityUnhealthy
	deletionPriorityAnnotated
	deletionPriorityDeleting
)

// machinesToDelete picks count Machines to delete when scaling down. Machines already being deleted come
// first (deleting them again costs nothing), then Machines with the cluster.x-k8s.io/delete-machine
// annotation, then unhealthy Machines, then the others. Within each group the policy orders them: Oldest
// deletes the oldest first, Newest the newest first, and Random (the default) deletes in no meaningful
// order; ties are broken by name so the choice is stable across reconciles.
func machinesToDelete(machines []*clusterv1.Machine, count int, policy clusterv1.MachineSetDeletePolicy) []*clusterv1.Machine {
	if count <= 0 {
		return nil
	}
	sorted := append([]*clusterv1.Machine(nil), machines...)
	sort.SliceStable(sorted, func(i, j int) bool {
		pi, pj := deletionPriority(sorted[i]), deletionPriority(sorted[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := sorted[i].CreationTimestamp, sorted[j].CreationTimestamp
		switch {
		case policy == clusterv1.OldestMachineSetDeletePolicy && !ti.Equal(&tj):
			return ti.Before(&tj)
		case policy == clusterv1.NewestMachineSetDeletePolicy && !ti.Equal(&tj):
			return tj.Before(&ti)
		}
		return sorted[i].Name < sorted[j].Name
	})
	if count > len(sorted) {
		count = len(sorted)
	}
	return sorted[:count]
}

func deletionPriority(m *clusterv1.Machine) int {
	switch {
	case !m.DeletionTimestamp.IsZero():
		return deletionPriorityDeleting
	case hasAnnotation(m, clusterv1.DeleteMachineAnnotation):
		return deletionPriorityAnnotated
	case !isHealthy(m):
		return deletionPriorityUnhealthy
	default:
		return deletionPriorityByDeletePolicy
	}
}

func hasAnnotation(m *clusterv1.Machine, key string) bool {
	_, ok := m.Annotations[key]
	return ok
}

// isHealthy reports whether a Machine has a Node and no sign of trouble, as upstream decides it for the
// delete policy: no terminal failure, and neither NodeHealthy nor HealthCheckSucceeded False. A condition
// that is Unknown (for example while the workload cluster cannot be reached) says nothing either way: the
// Machine counts as healthy.
func isHealthy(m *clusterv1.Machine) bool {
	if m.Status.NodeRef == nil || m.Status.FailureReason != nil || m.Status.FailureMessage != nil {
		return false
	}
	for _, t := range []clusterv1.ConditionType{clusterv1.MachineNodeHealthyCondition, clusterv1.MachineHealthCheckSucceededCondition} {
		if c := conditions.Get(m, t); c != nil && c.Status == corev1.ConditionFalse {
			return false
		}
	}
	return true
}

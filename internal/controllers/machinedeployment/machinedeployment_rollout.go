package machinedeployment

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The rollout planner: plain functions that decide the replicas of each MachineSet from the
// MachineDeployment and the MachineSets' specs and statuses, with the semantics of Kubernetes Deployments
// (and of upstream Cluster API, which follows them). They return the new spec.replicas of the MachineSets
// to change, by name.

// strategy is a MachineDeployment's rollout strategy with the defaults applied (RollingUpdate, maxSurge 1,
// maxUnavailable 0) and the fenceposts resolved against spec.replicas.
type strategy struct {
	kind clusterv1.MachineDeploymentStrategyType
	// maxSurge and maxUnavailable are 0 for OnDelete.
	maxSurge, maxUnavailable int32
	// maxUnavailableText is maxUnavailable as the user wrote it, for messages.
	maxUnavailableText string
	deletePolicy       string
}

// resolveStrategy returns the MachineDeployment's effective strategy for replicas, or why it is invalid.
func resolveStrategy(md *clusterv1.MachineDeployment, replicas int32) (strategy, error) {
	s := strategy{kind: clusterv1.RollingUpdateMachineDeploymentStrategyType, maxUnavailableText: "0"}
	var rolling *clusterv1.MachineRollingUpdateDeployment
	if md.Spec.Strategy != nil {
		if md.Spec.Strategy.Type != "" {
			s.kind = md.Spec.Strategy.Type
		}
		rolling = md.Spec.Strategy.RollingUpdate
	}
	if rolling != nil {
		s.deletePolicy = ptr.Deref(rolling.DeletePolicy, "")
	}
	switch s.kind {
	case clusterv1.OnDeleteMachineDeploymentStrategyType:
		return s, nil
	case clusterv1.RollingUpdateMachineDeploymentStrategyType:
	default:
		return s, fmt.Errorf("spec.strategy.type %q is not RollingUpdate or OnDelete", s.kind)
	}
	var maxSurge, maxUnavailable *intstr.IntOrString
	if rolling != nil {
		maxSurge, maxUnavailable = rolling.MaxSurge, rolling.MaxUnavailable
	}
	if maxSurge != nil && isZero(*maxSurge) && (maxUnavailable == nil || isZero(*maxUnavailable)) {
		return s, fmt.Errorf("spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0")
	}
	if maxUnavailable != nil {
		s.maxUnavailableText = maxUnavailable.String()
	}
	surge, unavailable, err := resolveFenceposts(maxSurge, maxUnavailable, replicas)
	if err != nil {
		return s, err
	}
	s.maxSurge = surge
	s.maxUnavailable = min(unavailable, replicas)
	return s, nil
}

func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return v.StrVal == "0%" || v.StrVal == "0"
}

// resolveFenceposts resolves maxSurge (1 when empty; percentages round up) and maxUnavailable (0 when
// empty; percentages round down) against the desired replicas. When both come out 0 because of rounding,
// maxUnavailable is 1, so that a rollout can proceed.
func resolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	surgeValue := ptr.Deref(maxSurge, intstr.FromInt32(1))
	unavailableValue := ptr.Deref(maxUnavailable, intstr.FromInt32(0))
	surge, err := intstr.GetScaledValueFromIntOrPercent(&surgeValue, int(desired), true)
	if err != nil {
		return 0, 0, fmt.Errorf("spec.strategy.rollingUpdate.maxSurge is invalid: %w", err)
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(&unavailableValue, int(desired), false)
	if err != nil {
		return 0, 0, fmt.Errorf("spec.strategy.rollingUpdate.maxUnavailable is invalid: %w", err)
	}
	if surge < 0 || unavailable < 0 {
		return 0, 0, fmt.Errorf("spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot be negative")
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

func specReplicas(ms *clusterv1.MachineSet) int32 { return ptr.Deref(ms.Spec.Replicas, 0) }

// plan tracks the replicas decided so far on top of the MachineSets' specs.
type plan map[string]int32

func (p plan) replicas(ms *clusterv1.MachineSet) int32 {
	if r, ok := p[ms.Name]; ok {
		return r
	}
	return specReplicas(ms)
}

func (p plan) set(ms *clusterv1.MachineSet, replicas int32) {
	if replicas == specReplicas(ms) {
		delete(p, ms.Name)
		return
	}
	p[ms.Name] = replicas
}

// totalReplicas is the most Machines the MachineSets can have: per MachineSet the larger of spec.replicas
// (Machines not created yet) and status.replicas (Machines not deleted yet).
func (p plan) totalReplicas(machineSets []*clusterv1.MachineSet) int32 {
	var total int32
	for _, ms := range machineSets {
		total += max(p.replicas(ms), ms.Status.Replicas)
	}
	return total
}

// scaleNew plans the new MachineSet's replicas and returns them: down to desired when above it, else up
// towards desired as far as the MachineSets (all of them, the new one included) stay within desired+surge
// Machines.
func (p plan) scaleNew(desired, surge int32, newMS *clusterv1.MachineSet, all []*clusterv1.MachineSet) int32 {
	newReplicas := specReplicas(newMS)
	switch {
	case newReplicas > desired:
		newReplicas = desired
	case newReplicas < desired:
		maxTotal := desired + surge
		if total := p.totalReplicas(all); total < maxTotal {
			newReplicas += min(maxTotal-total, desired-newReplicas)
		}
	}
	p.set(newMS, newReplicas)
	return newReplicas
}

// planRollingUpdate is one step of a RollingUpdate: scale the new MachineSet up as far as maxSurge allows,
// then scale old MachineSets down as far as maxUnavailable allows, unhealthy Machines first.
func planRollingUpdate(desired int32, s strategy, newMS *clusterv1.MachineSet, oldMSs []*clusterv1.MachineSet) plan {
	p := plan{}
	all := append([]*clusterv1.MachineSet{newMS}, oldMSs...)

	// Scale up the new MachineSet.
	newReplicas := p.scaleNew(desired, s.maxSurge, newMS, all)

	// Scale down old MachineSets.
	var oldReplicas int32
	for _, ms := range oldMSs {
		oldReplicas += p.replicas(ms)
	}
	if oldReplicas == 0 {
		return p
	}
	minAvailable := desired - s.maxUnavailable
	// Unavailable Machines of the new MachineSet must not let old ones go, or availability would drop.
	newUnavailable := newReplicas - newMS.Status.AvailableReplicas
	maxScaledDown := oldReplicas + newReplicas - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return p
	}
	sorted := append([]*clusterv1.MachineSet(nil), oldMSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderThan(sorted[i], sorted[j]) })

	// Unhealthy Machines of old MachineSets go first: removing them does not reduce availability.
	var cleaned int32
	for _, ms := range sorted {
		if cleaned >= maxScaledDown {
			break
		}
		r := p.replicas(ms)
		unhealthy := r - ms.Status.AvailableReplicas
		if r == 0 || unhealthy <= 0 {
			continue
		}
		n := min(maxScaledDown-cleaned, unhealthy)
		p.set(ms, r-n)
		cleaned += n
	}

	// Then available ones, as long as enough Machines stay available.
	available := newMS.Status.AvailableReplicas
	for _, ms := range oldMSs {
		available += ms.Status.AvailableReplicas
	}
	if available <= minAvailable {
		return p
	}
	toScaleDown := available - minAvailable
	var scaled int32
	for _, ms := range sorted {
		if scaled >= toScaleDown {
			break
		}
		r := p.replicas(ms)
		if r == 0 {
			continue
		}
		n := min(r, toScaleDown-scaled)
		p.set(ms, r-n)
		scaled += n
	}
	return p
}

// planOnDelete is one step of an OnDelete rollout: old MachineSets shrink to the Machines the user has not
// deleted (and further when the MachineDeployment was scaled down), and the new MachineSet grows as the
// deleted Machines go away. liveMachines counts the Machines of each MachineSet that are not being deleted.
func planOnDelete(desired int32, newMS *clusterv1.MachineSet, oldMSs []*clusterv1.MachineSet, liveMachines map[string]int32) plan {
	p := plan{}
	all := append([]*clusterv1.MachineSet{newMS}, oldMSs...)

	// No surge: the new MachineSet grows as the deleted Machines leave room.
	p.scaleNew(desired, 0, newMS, all)

	var total int32
	for _, ms := range all {
		total += p.replicas(ms)
	}
	scaleDown := total - desired
	sorted := append([]*clusterv1.MachineSet(nil), oldMSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderThan(sorted[i], sorted[j]) })
	for _, ms := range sorted {
		r := p.replicas(ms)
		if r <= 0 {
			continue
		}
		live := liveMachines[ms.Name]
		scaleDown = max(scaleDown-(r-live), 0)
		if scaleDown > 0 && live > 0 {
			n := min(scaleDown, live)
			live -= n
			scaleDown -= n
		}
		p.set(ms, live)
	}
	return p
}

// planScale resizes the MachineSets of a paused MachineDeployment to a new spec.replicas without rolling
// out: the only active (or else the newest) MachineSet takes all replicas; with a saturated new MachineSet
// old ones go to 0; otherwise, for RollingUpdate, the change is spread over the active MachineSets in
// proportion to their size (largest first; leftovers go to the largest). Every active MachineSet is in the
// plan, so that its desired-replicas annotation is refreshed.
func planScale(md *clusterv1.MachineDeployment, desired int32, s strategy, newMS *clusterv1.MachineSet, oldMSs []*clusterv1.MachineSet) plan {
	p := plan{}
	touch := func(ms *clusterv1.MachineSet, replicas int32) { p[ms.Name] = replicas }

	all := oldMSs
	if newMS != nil {
		all = append([]*clusterv1.MachineSet{newMS}, oldMSs...)
	}
	var active []*clusterv1.MachineSet
	for _, ms := range all {
		if specReplicas(ms) > 0 {
			active = append(active, ms)
		}
	}
	switch {
	case len(all) == 0:
		return p
	case len(active) <= 1:
		target := newMS
		if len(active) == 1 {
			target = active[0]
		}
		if target == nil {
			target = newest(oldMSs)
		}
		touch(target, desired)
		return p
	case isSaturated(desired, newMS):
		for _, ms := range active {
			if ms != newMS {
				touch(ms, 0)
			}
		}
		return p
	case s.kind != clusterv1.RollingUpdateMachineDeploymentStrategyType:
		return p
	}

	var total int32
	for _, ms := range active {
		total += specReplicas(ms)
	}
	var allowed int32
	if desired > 0 {
		allowed = desired + s.maxSurge
	}
	toAdd := allowed - total
	if toAdd > 0 {
		// Scaling up: among MachineSets of the same size, the newer grows first.
		sort.SliceStable(active, func(i, j int) bool {
			if specReplicas(active[i]) != specReplicas(active[j]) {
				return specReplicas(active[i]) > specReplicas(active[j])
			}
			return newerThan(active[i], active[j])
		})
	} else {
		// Scaling down: among MachineSets of the same size, the older shrinks first.
		sort.SliceStable(active, func(i, j int) bool {
			if specReplicas(active[i]) != specReplicas(active[j]) {
				return specReplicas(active[i]) > specReplicas(active[j])
			}
			return olderThan(active[i], active[j])
		})
	}
	var added int32
	sizes := make([]int32, len(active))
	for i, ms := range active {
		sizes[i] = specReplicas(ms)
		if toAdd != 0 {
			n := proportion(ms, md, desired, s.maxSurge, toAdd, added)
			sizes[i] += n
			added += n
		}
	}
	if toAdd != 0 {
		sizes[0] = max(sizes[0]+toAdd-added, 0)
	}
	for i, ms := range active {
		touch(ms, sizes[i])
	}
	return p
}

// proportion is how many replicas ms gets of toAdd (negative when scaling down), given that added were
// already handed out: its share of the MachineDeployment's new maximum size, estimated from the maximum
// size it was last told (the max-replicas annotation).
func proportion(ms *clusterv1.MachineSet, md *clusterv1.MachineDeployment, desired, maxSurge, toAdd, added int32) int32 {
	replicas := specReplicas(ms)
	if replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	// Scaling to zero takes everything.
	fraction := -replicas
	if desired > 0 {
		fraction = 0
		annotated, ok := intAnnotation(ms, clusterv1.MaxReplicasAnnotation)
		if !ok {
			annotated = md.Status.Replicas
		}
		if annotated > 0 {
			fraction = int32(math.Round(float64(replicas)*float64(desired+maxSurge)/float64(annotated))) - replicas
		}
	}
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// isSaturated reports whether the new MachineSet has all the desired replicas, knows it, and has them
// available.
func isSaturated(desired int32, ms *clusterv1.MachineSet) bool {
	if ms == nil {
		return false
	}
	annotated, ok := intAnnotation(ms, clusterv1.DesiredReplicasAnnotation)
	return ok && annotated == desired && specReplicas(ms) == desired && ms.Status.AvailableReplicas == desired
}

func newest(machineSets []*clusterv1.MachineSet) *clusterv1.MachineSet {
	var out *clusterv1.MachineSet
	for _, ms := range machineSets {
		if out == nil || newerThan(ms, out) {
			out = ms
		}
	}
	return out
}

func intAnnotation(ms *clusterv1.MachineSet, key string) (int32, bool) {
	v, ok := ms.Annotations[key]
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(i), true
}

// annotationsNotCopied are the MachineDeployment annotations that are not copied to its MachineSets.
var annotationsNotCopied = map[string]bool{
	corev1.LastAppliedConfigAnnotation:  true,
	clusterv1.RevisionAnnotation:        true,
	clusterv1.RevisionHistoryAnnotation: true,
	clusterv1.DesiredReplicasAnnotation: true,
	clusterv1.MaxReplicasAnnotation:     true,
	"cluster.x-k8s.io/conversion-data":  true,
}

// machineSetAnnotations returns the annotations of the new MachineSet (existing is nil when it is created):
// the MachineDeployment's, the revision (one more than the highest of the old MachineSets, never lower than
// the MachineSet's own), the revisions it had before when it is reused, and the desired and maximum
// replicas. An existing MachineSet keeps its desired and maximum replicas: they change when it is scaled,
// and a difference with spec.replicas is how a scaling event is recognised.
func machineSetAnnotations(md *clusterv1.MachineDeployment, desired int32, s strategy, oldMSs []*clusterv1.MachineSet, existing *clusterv1.MachineSet) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range md.Annotations {
		if !annotationsNotCopied[k] {
			out[k] = v
		}
	}
	revision := maxRevision(oldMSs) + 1
	out[clusterv1.DesiredReplicasAnnotation] = strconv.Itoa(int(desired))
	out[clusterv1.MaxReplicasAnnotation] = strconv.Itoa(int(desired + s.maxSurge))
	if existing != nil {
		for _, k := range []string{clusterv1.DesiredReplicasAnnotation, clusterv1.MaxReplicasAnnotation} {
			if v, ok := existing.Annotations[k]; ok {
				out[k] = v
			}
		}
		current, hasCurrent := existing.Annotations[clusterv1.RevisionAnnotation]
		if hasCurrent {
			c, err := strconv.ParseInt(current, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parsing the revision of MachineSet %s: %w", existing.Name, err)
			}
			revision = max(revision, c)
		}
		history, hasHistory := existing.Annotations[clusterv1.RevisionHistoryAnnotation]
		if hasHistory {
			out[clusterv1.RevisionHistoryAnnotation] = history
		}
		if hasCurrent && current != strconv.FormatInt(revision, 10) {
			if history == "" {
				out[clusterv1.RevisionHistoryAnnotation] = current
			} else {
				out[clusterv1.RevisionHistoryAnnotation] = strings.Join([]string{history, current}, ",")
			}
		}
	}
	out[clusterv1.RevisionAnnotation] = strconv.FormatInt(revision, 10)
	return out, nil
}

func maxRevision(machineSets []*clusterv1.MachineSet) int64 {
	var out int64
	for _, ms := range machineSets {
		if v, err := strconv.ParseInt(ms.Annotations[clusterv1.RevisionAnnotation], 10, 64); err == nil && v > out {
			out = v
		}
	}
	return out
}

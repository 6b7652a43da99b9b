package machinedeployment

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

var base = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// testMS is a MachineSet created minutesAgo, with spec.replicas, status.replicas and available Machines.
func testMS(name string, minutesAgo, spec, status, available int32, annotations ...string) *clusterv1.MachineSet {
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(base.Add(-time.Duration(minutesAgo) * time.Minute))},
		Spec:       clusterv1.MachineSetSpec{Replicas: ptr.To(spec)},
		Status:     clusterv1.MachineSetStatus{Replicas: status, AvailableReplicas: available, ReadyReplicas: available},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		if ms.Annotations == nil {
			ms.Annotations = map[string]string{}
		}
		ms.Annotations[annotations[i]] = annotations[i+1]
	}
	return ms
}

func intOrString(v string) *intstr.IntOrString {
	if v == "" {
		return nil
	}
	return ptr.To(intstr.Parse(v))
}

func rollingMD(replicas int32, maxSurge, maxUnavailable string) *clusterv1.MachineDeployment {
	return &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{
		Replicas: ptr.To(replicas),
		Strategy: &clusterv1.MachineDeploymentStrategy{Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
			RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{MaxSurge: intOrString(maxSurge), MaxUnavailable: intOrString(maxUnavailable)}},
	}}
}

func TestResolveStrategy(t *testing.T) {
	tests := []struct {
		name                     string
		md                       *clusterv1.MachineDeployment
		replicas                 int32
		wantSurge, wantUnavail   int32
		wantErr                  string
		wantKind                 clusterv1.MachineDeploymentStrategyType
		wantMaxUnavailableString string
	}{
		{name: "defaults", md: &clusterv1.MachineDeployment{}, replicas: 3, wantSurge: 1, wantUnavail: 0,
			wantKind: clusterv1.RollingUpdateMachineDeploymentStrategyType, wantMaxUnavailableString: "0"},
		{name: "numbers", md: rollingMD(3, "2", "1"), replicas: 3, wantSurge: 2, wantUnavail: 1},
		{name: "50% surge rounds up, 25% unavailable rounds down, 3 replicas", md: rollingMD(3, "50%", "25%"), replicas: 3, wantSurge: 2, wantUnavail: 0,
			wantMaxUnavailableString: "25%"},
		{name: "50% surge, 25% unavailable, 4 replicas", md: rollingMD(4, "50%", "25%"), replicas: 4, wantSurge: 2, wantUnavail: 1},
		{name: "50% surge, 25% unavailable, 10 replicas", md: rollingMD(10, "50%", "25%"), replicas: 10, wantSurge: 5, wantUnavail: 2},
		{name: "50% surge, 25% unavailable, 1 replica", md: rollingMD(1, "50%", "25%"), replicas: 1, wantSurge: 1, wantUnavail: 0},
		{name: "both rounding to 0 lets one Machine be unavailable", md: rollingMD(3, "0", "10%"), replicas: 3, wantSurge: 0, wantUnavail: 1},
		{name: "maxUnavailable above replicas is capped", md: rollingMD(3, "1", "5"), replicas: 3, wantSurge: 1, wantUnavail: 3},
		{name: "both 0 is invalid", md: rollingMD(3, "0", "0"), replicas: 3,
			wantErr: "spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0"},
		{name: "maxSurge 0% with maxUnavailable unset is invalid", md: rollingMD(3, "0%", ""), replicas: 3,
			wantErr: "spec.strategy.rollingUpdate.maxSurge and maxUnavailable cannot both be 0"},
		{name: "not a number or a percentage", md: rollingMD(3, "lots", ""), replicas: 3, wantErr: "spec.strategy.rollingUpdate.maxSurge is invalid"},
		{name: "OnDelete", md: &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{
			Strategy: &clusterv1.MachineDeploymentStrategy{Type: clusterv1.OnDeleteMachineDeploymentStrategyType}}},
			replicas: 3, wantKind: clusterv1.OnDeleteMachineDeploymentStrategyType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := resolveStrategy(tt.md, tt.replicas)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.maxSurge).To(Equal(tt.wantSurge), "maxSurge")
			g.Expect(got.maxUnavailable).To(Equal(tt.wantUnavail), "maxUnavailable")
			if tt.wantKind != "" {
				g.Expect(got.kind).To(Equal(tt.wantKind))
			}
			if tt.wantMaxUnavailableString != "" {
				g.Expect(got.maxUnavailableText).To(Equal(tt.wantMaxUnavailableString))
			}
		})
	}
}

func TestPlanRollingUpdate(t *testing.T) {
	tests := []struct {
		name                 string
		desired              int32
		maxSurge, maxUnavail int32
		newMS                *clusterv1.MachineSet
		oldMSs               []*clusterv1.MachineSet
		want                 plan
	}{
		{name: "a new MachineSet starts with the surge", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)},
			want: plan{"new": 1}},
		{name: "nothing goes while the new Machine is not available", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 1, 1, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)},
			want: plan{}},
		{name: "an old Machine goes once the new one is available", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 1, 1, 1), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)},
			want: plan{"old": 2}},
		{name: "no surge while a deleted Machine still exists", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 1, 1, 1), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 3, 3)},
			want: plan{}},
		{name: "the surge follows once it is gone", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 1, 1, 1), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 2, 2)},
			want: plan{"new": 2}},
		{name: "without surge, old Machines go first", desired: 3, maxSurge: 0, maxUnavail: 1,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)},
			want: plan{"old": 2}},
		{name: "unhealthy old Machines go first", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 1, 1, 1), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 1)},
			want: plan{"old": 2}},
		{name: "oldest MachineSets go first", desired: 4, maxSurge: 2, maxUnavail: 1,
			newMS: testMS("new", 0, 2, 2, 2), oldMSs: []*clusterv1.MachineSet{testMS("old2", 5, 2, 2, 2), testMS("old1", 10, 2, 2, 2)},
			want: plan{"old1": 0, "old2": 1}},
		{name: "a new MachineSet above the desired replicas shrinks", desired: 3, maxSurge: 1,
			newMS: testMS("new", 0, 5, 5, 5), oldMSs: nil,
			want: plan{"new": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := planRollingUpdate(tt.desired, strategy{kind: clusterv1.RollingUpdateMachineDeploymentStrategyType,
				maxSurge: tt.maxSurge, maxUnavailable: tt.maxUnavail}, tt.newMS, tt.oldMSs)
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

// TestRollingUpdateSequence plays whole rollouts: after each step of the planner, the MachineSets create
// and delete Machines, new Machines become available one step later and deleted ones disappear one step
// later. Availability never drops below replicas-maxUnavailable and there are never more than
// replicas+maxSurge Machines, and the rollout ends with every Machine in the new MachineSet.
func TestRollingUpdateSequence(t *testing.T) {
	for _, tc := range []struct {
		replicas                 int32
		maxSurge, maxUnavailable string
	}{
		{3, "1", "0"}, {3, "0", "1"}, {6, "3", "1"}, {6, "50%", "25%"}, {6, "10", "0"}, {6, "0", "10"}, {1, "1", "0"}, {5, "2", "2"},
	} {
		t.Run(fmt.Sprintf("%d replicas, maxSurge %s, maxUnavailable %s", tc.replicas, tc.maxSurge, tc.maxUnavailable), func(t *testing.T) {
			g := NewWithT(t)
			s, err := resolveStrategy(rollingMD(tc.replicas, tc.maxSurge, tc.maxUnavailable), tc.replicas)
			g.Expect(err).NotTo(HaveOccurred())
			w := &world{machines: map[string][]simMachine{"old": nil}}
			oldMS := testMS("old", 10, tc.replicas, 0, 0)
			newMS := testMS("new", 0, 0, 0, 0)
			for range tc.replicas {
				w.machines["old"] = append(w.machines["old"], simMachine{available: true})
			}
			var log []string
			for step := 0; step < 100; step++ {
				w.updateStatus(oldMS)
				w.updateStatus(newMS)
				available, total := w.counts()
				log = append(log, fmt.Sprintf("old %d/%d new %d/%d: %d available of %d", *oldMS.Spec.Replicas, oldMS.Status.Replicas,
					*newMS.Spec.Replicas, newMS.Status.Replicas, available, total))
				g.Expect(available).To(BeNumerically(">=", tc.replicas-s.maxUnavailable), "%v", log)
				g.Expect(total).To(BeNumerically("<=", tc.replicas+s.maxSurge), "%v", log)
				if *oldMS.Spec.Replicas == 0 && total == int(tc.replicas) && available == int(tc.replicas) && len(w.machines["new"]) == int(tc.replicas) {
					return
				}
				for name, replicas := range planRollingUpdate(tc.replicas, s, newMS, []*clusterv1.MachineSet{oldMS}) {
					if name == "new" {
						newMS.Spec.Replicas = ptr.To(replicas)
					} else {
						oldMS.Spec.Replicas = ptr.To(replicas)
					}
				}
				w.step(oldMS)
				w.step(newMS)
			}
			t.Fatalf("the rollout did not finish: %v", log)
		})
	}
}

type simMachine struct{ available, deleting bool }

// world is the Machines of each MachineSet in TestRollingUpdateSequence.
type world struct{ machines map[string][]simMachine }

func (w *world) updateStatus(ms *clusterv1.MachineSet) {
	ms.Status.Replicas, ms.Status.AvailableReplicas = 0, 0
	for _, m := range w.machines[ms.Name] {
		ms.Status.Replicas++
		if m.available {
			ms.Status.AvailableReplicas++
		}
	}
}

func (w *world) counts() (available, total int) {
	for _, list := range w.machines {
		for _, m := range list {
			total++
			if m.available && !m.deleting {
				available++
			}
		}
	}
	return available, total
}

// step is one round of the MachineSet and Machine controllers: deleting Machines go, new ones become
// available, and the MachineSet creates or deletes (unavailable first) to reach spec.replicas.
func (w *world) step(ms *clusterv1.MachineSet) {
	var live []simMachine
	for _, m := range w.machines[ms.Name] {
		switch {
		case m.deleting:
			continue
		default:
			m.available = true
			live = append(live, m)
		}
	}
	var next []simMachine
	want := int(*ms.Spec.Replicas)
	// Keep what is wanted; the rest is marked deleting and stays one more step.
	for i, m := range live {
		if i < want {
			next = append(next, m)
		} else {
			m.deleting = true
			next = append(next, m)
		}
	}
	for len(live) < want {
		next = append(next, simMachine{})
		live = append(live, simMachine{})
	}
	w.machines[ms.Name] = next
}

func TestPlanOnDelete(t *testing.T) {
	tests := []struct {
		name    string
		desired int32
		newMS   *clusterv1.MachineSet
		oldMSs  []*clusterv1.MachineSet
		live    map[string]int32
		want    plan
	}{
		{name: "nothing is replaced until a Machine is deleted", desired: 3,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)}, live: map[string]int32{"old": 3},
			want: plan{}},
		{name: "the old MachineSet shrinks when the user deletes a Machine", desired: 3,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)}, live: map[string]int32{"old": 2},
			want: plan{"old": 2}},
		{name: "the new MachineSet grows once the deleted Machine is gone", desired: 3,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 2, 2)}, live: map[string]int32{"old": 2},
			want: plan{"new": 1}},
		{name: "scaling the MachineDeployment down shrinks old MachineSets", desired: 2,
			newMS: testMS("new", 0, 0, 0, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)}, live: map[string]int32{"old": 3},
			want: plan{"old": 2}},
		{name: "scaling up grows the new MachineSet", desired: 4,
			newMS: testMS("new", 0, 1, 1, 1), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 2, 2)}, live: map[string]int32{"old": 2},
			want: plan{"new": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := planOnDelete(tt.desired, tt.newMS, tt.oldMSs, tt.live)
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

func TestPlanScale(t *testing.T) {
	ann := func(desired, maxReplicas int32) []string {
		return []string{clusterv1.DesiredReplicasAnnotation, strconv.Itoa(int(desired)), clusterv1.MaxReplicasAnnotation, strconv.Itoa(int(maxReplicas))}
	}
	rolling := func(surge int32) strategy {
		return strategy{kind: clusterv1.RollingUpdateMachineDeploymentStrategyType, maxSurge: surge}
	}
	tests := []struct {
		name     string
		desired  int32
		strategy strategy
		status   int32
		newMS    *clusterv1.MachineSet
		oldMSs   []*clusterv1.MachineSet
		want     plan
	}{
		{name: "one active MachineSet takes everything", desired: 5, strategy: rolling(1),
			newMS: testMS("new", 0, 3, 3, 3, ann(3, 4)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 0, 0, 0)},
			want: plan{"new": 5}},
		{name: "without a new MachineSet (paused), the newest takes everything", desired: 2, strategy: rolling(1),
			oldMSs: []*clusterv1.MachineSet{testMS("older", 10, 0, 0, 0), testMS("newer", 5, 0, 0, 0)},
			want:   plan{"newer": 2}},
		{name: "scaling up during a rollout: in proportion, largest first", desired: 6, strategy: rolling(1),
			newMS: testMS("new", 0, 1, 1, 0, ann(3, 4)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3, ann(3, 4)...)},
			want: plan{"old": 5, "new": 2}},
		{name: "scaling down during a rollout: in proportion", desired: 3, strategy: rolling(1),
			newMS: testMS("new", 0, 3, 3, 0, ann(6, 7)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 4, 4, 4, ann(6, 7)...)},
			want: plan{"old": 2, "new": 2}},
		{name: "same size: the newer grows first", desired: 5, strategy: rolling(1),
			newMS: testMS("new", 0, 2, 2, 0, ann(3, 4)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 2, 2, ann(3, 4)...)},
			want: plan{"old": 3, "new": 3}},
		{name: "three MachineSets", desired: 20, strategy: rolling(2),
			newMS:  testMS("new", 0, 2, 2, 0, ann(10, 12)...),
			oldMSs: []*clusterv1.MachineSet{testMS("mid", 5, 4, 4, 4, ann(10, 12)...), testMS("old", 10, 6, 6, 6, ann(10, 12)...)},
			want:   plan{"old": 11, "mid": 7, "new": 4}},
		{name: "without the max-replicas annotation the MachineDeployment's replicas are the reference", desired: 6, strategy: rolling(1), status: 4,
			newMS: testMS("new", 0, 1, 1, 0), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3)},
			want: plan{"old": 5, "new": 2}},
		{name: "to zero", desired: 0, strategy: rolling(1),
			newMS: testMS("new", 0, 1, 1, 0, ann(3, 4)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 3, 3, 3, ann(3, 4)...)},
			want: plan{"old": 0, "new": 0}},
		{name: "a saturated new MachineSet takes over", desired: 3, strategy: rolling(1),
			newMS: testMS("new", 0, 3, 3, 3, ann(3, 4)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 1, 1, 1, ann(3, 4)...)},
			want: plan{"old": 0}},
		{name: "OnDelete is not scaled in proportion", desired: 6, strategy: strategy{kind: clusterv1.OnDeleteMachineDeploymentStrategyType},
			newMS: testMS("new", 0, 1, 1, 0, ann(3, 3)...), oldMSs: []*clusterv1.MachineSet{testMS("old", 10, 2, 2, 2, ann(3, 3)...)},
			want: plan{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			md := &clusterv1.MachineDeployment{Status: clusterv1.MachineDeploymentStatus{Replicas: tt.status}}
			got := planScale(md, tt.desired, tt.strategy, tt.newMS, tt.oldMSs)
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
			if tt.desired > 0 && tt.strategy.kind == clusterv1.RollingUpdateMachineDeploymentStrategyType && len(got) > 1 {
				var total int32
				for _, r := range got {
					total += r
				}
				g.Expect(total).To(Equal(tt.desired+tt.strategy.maxSurge), "the MachineSets add up to replicas+maxSurge")
			}
		})
	}
}

// TestScalingDuringARolloutGrowsTheNewMachineSet: raising spec.replicas while a RollingUpdate is under way
// grows the new MachineSet within maxSurge and never grows an old one, as upstream does (a Kubernetes
// Deployment would spread the new replicas over old and new MachineSets in proportion to their size).
func TestScalingDuringARolloutGrowsTheNewMachineSet(t *testing.T) {
	tests := []struct {
		name                 string
		desired              int32
		maxSurge, maxUnavail string
		oldMS, newMS         *clusterv1.MachineSet
		want                 plan
	}{
		{
			name: "3 to 5, maxSurge 1", desired: 5, maxSurge: "1", maxUnavail: "0",
			oldMS: testMS("old", 10, 3, 3, 3, clusterv1.DesiredReplicasAnnotation, "3"),
			newMS: testMS("new", 1, 1, 1, 0, clusterv1.DesiredReplicasAnnotation, "3"),
			want:  plan{"new": 3},
		},
		{
			name: "3 to 6, maxSurge 2, maxUnavailable 1", desired: 6, maxSurge: "2", maxUnavail: "1",
			oldMS: testMS("old", 10, 2, 2, 2, clusterv1.DesiredReplicasAnnotation, "3"),
			newMS: testMS("new", 1, 2, 2, 2, clusterv1.DesiredReplicasAnnotation, "3"),
			want:  plan{"new": 6},
		},
		{
			name: "5 to 2 shrinks the new MachineSet and scales old ones down only", desired: 2, maxSurge: "1", maxUnavail: "0",
			oldMS: testMS("old", 10, 3, 3, 3, clusterv1.DesiredReplicasAnnotation, "5"),
			newMS: testMS("new", 1, 3, 3, 3, clusterv1.DesiredReplicasAnnotation, "5"),
			want:  plan{"new": 2, "old": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s, err := resolveStrategy(rollingMD(tt.desired, tt.maxSurge, tt.maxUnavail), tt.desired)
			g.Expect(err).NotTo(HaveOccurred())
			got := planStep(tt.desired, s, tt.newMS, []*clusterv1.MachineSet{tt.oldMS}, nil)
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
			g.Expect(got.replicas(tt.oldMS)).To(BeNumerically("<=", *tt.oldMS.Spec.Replicas), "an old MachineSet never grows")
		})
	}
}

func TestMachineSetAnnotations(t *testing.T) {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"team": "a", clusterv1.RevisionAnnotation: "7", "kubectl.kubernetes.io/last-applied-configuration": "{}",
	}}}
	s := strategy{kind: clusterv1.RollingUpdateMachineDeploymentStrategyType, maxSurge: 1}
	rev := func(r string) []string { return []string{clusterv1.RevisionAnnotation, r} }
	tests := []struct {
		name     string
		oldMSs   []*clusterv1.MachineSet
		existing *clusterv1.MachineSet
		want     map[string]string
	}{
		{name: "a new MachineSet gets the next revision", oldMSs: []*clusterv1.MachineSet{testMS("a", 1, 0, 0, 0, rev("1")...), testMS("b", 1, 0, 0, 0, rev("2")...)},
			want: map[string]string{"team": "a", clusterv1.RevisionAnnotation: "3", clusterv1.DesiredReplicasAnnotation: "3", clusterv1.MaxReplicasAnnotation: "4"}},
		{name: "the newest MachineSet keeps its revision and replicas annotations", oldMSs: []*clusterv1.MachineSet{testMS("a", 1, 0, 0, 0, rev("1")...)},
			existing: testMS("b", 1, 0, 0, 0, clusterv1.RevisionAnnotation, "2", clusterv1.DesiredReplicasAnnotation, "5", clusterv1.MaxReplicasAnnotation, "6"),
			want:     map[string]string{"team": "a", clusterv1.RevisionAnnotation: "2", clusterv1.DesiredReplicasAnnotation: "5", clusterv1.MaxReplicasAnnotation: "6"}},
		{name: "a reused MachineSet gets a new revision and remembers the old one",
			oldMSs:   []*clusterv1.MachineSet{testMS("b", 1, 0, 0, 0, rev("2")...)},
			existing: testMS("a", 1, 0, 0, 0, rev("1")...),
			want: map[string]string{"team": "a", clusterv1.RevisionAnnotation: "3", clusterv1.RevisionHistoryAnnotation: "1",
				clusterv1.DesiredReplicasAnnotation: "3", clusterv1.MaxReplicasAnnotation: "4"}},
		{name: "reused again",
			oldMSs:   []*clusterv1.MachineSet{testMS("b", 1, 0, 0, 0, rev("4")...)},
			existing: testMS("a", 1, 0, 0, 0, clusterv1.RevisionAnnotation, "3", clusterv1.RevisionHistoryAnnotation, "1"),
			want: map[string]string{"team": "a", clusterv1.RevisionAnnotation: "5", clusterv1.RevisionHistoryAnnotation: "1,3",
				clusterv1.DesiredReplicasAnnotation: "3", clusterv1.MaxReplicasAnnotation: "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := machineSetAnnotations(md, 3, s, tt.oldMSs, tt.existing)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want), cmp.Diff(tt.want, got))
		})
	}
}

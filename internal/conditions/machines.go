package conditions

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The messages of the conditions that the MachineSet and MachineDeployment controllers aggregate from their
// Machines, as upstream's v1beta2 condition aggregation writes them.

// maxMachinesInMessage bounds the Machines named in one line of a condition message.
const maxMachinesInMessage = 3

// UpToDateGracePeriod is how long a new Machine without an UpToDate condition is left out of the
// MachinesUpToDate condition, to give its controller time to set it.
const UpToDateGracePeriod = 10 * time.Second

// InUpToDateGracePeriod reports whether m was created less than UpToDateGracePeriod before now.
func InUpToDateGracePeriod(m *clusterv1.Machine, now time.Time) bool {
	return now.Sub(m.CreationTimestamp.Time) < UpToDateGracePeriod
}

// AwaitingUpToDate reports whether m has no UpToDate condition yet and is in its grace period: the
// MachinesUpToDate conditions leave it out.
func AwaitingUpToDate(m *clusterv1.Machine, now time.Time) bool {
	return GetV1Beta2(m, clusterv1.MachineUpToDateV1Beta2Condition) == nil && InUpToDateGracePeriod(m, now)
}

// MachinesConditionInput says which Machine condition to aggregate into which condition, with which
// reasons.
type MachinesConditionInput struct {
	// ConditionType is the Machines' v1beta2 condition to aggregate, for example Ready.
	ConditionType string
	// TargetType is the type of the aggregated condition, for example MachinesReady.
	TargetType string
	// The reasons of the aggregated condition: all True, one False, none False but one Unknown or not
	// reported, and no Machines.
	TrueReason, FalseReason, UnknownReason, NoReplicasReason string
	// Skip, when set, leaves Machines out of the aggregation.
	Skip func(*clusterv1.Machine) bool
}

// MachinesCondition aggregates one v1beta2 condition of Machines: False when a Machine reports it False,
// Unknown when none does but one reports it Unknown or not at all, True otherwise (also with no Machines,
// with the NoReplicas reason). The message lists the Machines that are not True, grouped by message, in a
// deterministic order.
func MachinesCondition(machines []*clusterv1.Machine, in MachinesConditionInput) metav1.Condition {
	out := metav1.Condition{Type: in.TargetType, Status: metav1.ConditionTrue, Reason: in.TrueReason}
	var falseMachines, unknownMachines []*clusterv1.Machine
	messages := map[string]string{}
	counted := 0
	for _, m := range machines {
		if in.Skip != nil && in.Skip(m) {
			continue
		}
		counted++
		c := GetV1Beta2(m, in.ConditionType)
		switch {
		case c == nil:
			unknownMachines = append(unknownMachines, m)
			messages[m.Name] = fmt.Sprintf("Condition %s not yet reported", in.ConditionType)
		case c.Status == metav1.ConditionFalse:
			falseMachines = append(falseMachines, m)
			messages[m.Name] = cmp.Or(c.Message, c.Reason, fmt.Sprintf("Condition %s is False", in.ConditionType))
		case c.Status != metav1.ConditionTrue:
			unknownMachines = append(unknownMachines, m)
			messages[m.Name] = cmp.Or(c.Message, c.Reason, fmt.Sprintf("Condition %s is Unknown", in.ConditionType))
		}
	}
	switch {
	case counted == 0:
		out.Reason = in.NoReplicasReason
	case len(falseMachines) > 0:
		out.Status, out.Reason = metav1.ConditionFalse, in.FalseReason
		out.Message = MachinesMessage(append(falseMachines, unknownMachines...), messages)
	case len(unknownMachines) > 0:
		out.Status, out.Reason = metav1.ConditionUnknown, in.UnknownReason
		out.Message = MachinesMessage(unknownMachines, messages)
	}
	return out
}

// SetMachinesConditions sets the MachinesReady and MachinesUpToDate conditions (types readyType and
// upToDateType) that a MachineSet or MachineDeployment aggregates from its Machines at now; listed is false
// when the Machines could not be listed.
func SetMachinesConditions(to V1Beta2Setter, machines []*clusterv1.Machine, listed bool, readyType, upToDateType string, now time.Time) {
	setMachinesCondition(to, machines, listed, machinesReadyInput(readyType))
	setMachinesCondition(to, machines, listed, machinesUpToDateInput(upToDateType, now))
}

// machinesReadyInput aggregates the Machines' Ready conditions into target, the MachinesReady condition of
// a MachineSet or MachineDeployment (both with the MachineSet's reasons).
func machinesReadyInput(target string) MachinesConditionInput {
	return MachinesConditionInput{
		ConditionType: clusterv1.MachineReadyV1Beta2Condition, TargetType: target,
		TrueReason: clusterv1.MachineSetMachinesReadyV1Beta2Reason, FalseReason: clusterv1.MachineSetMachinesNotReadyV1Beta2Reason,
		UnknownReason: clusterv1.MachineSetMachinesReadyUnknownV1Beta2Reason, NoReplicasReason: clusterv1.MachineSetMachinesReadyNoReplicasV1Beta2Reason,
	}
}

// machinesUpToDateInput aggregates the Machines' UpToDate conditions into target, the MachinesUpToDate
// condition of a MachineSet or MachineDeployment (both with the MachineSet's reasons), leaving out the
// Machines AwaitingUpToDate at now.
func machinesUpToDateInput(target string, now time.Time) MachinesConditionInput {
	return MachinesConditionInput{
		ConditionType: clusterv1.MachineUpToDateV1Beta2Condition, TargetType: target,
		TrueReason: clusterv1.MachineSetMachinesUpToDateV1Beta2Reason, FalseReason: clusterv1.MachineSetMachinesNotUpToDateV1Beta2Reason,
		UnknownReason: clusterv1.MachineSetMachinesUpToDateUnknownV1Beta2Reason, NoReplicasReason: clusterv1.MachineSetMachinesUpToDateNoReplicasV1Beta2Reason,
		Skip: func(m *clusterv1.Machine) bool { return AwaitingUpToDate(m, now) },
	}
}

// setMachinesCondition sets on to the condition MachinesCondition aggregates from machines or, when the
// Machines could not be listed (listed is false), the condition Unknown with reason InternalError.
func setMachinesCondition(to V1Beta2Setter, machines []*clusterv1.Machine, listed bool, in MachinesConditionInput) {
	if !listed {
		SetV1Beta2(to, InternalError(in.TargetType, InternalErrorReason))
		return
	}
	SetV1Beta2(to, MachinesCondition(machines, in))
}

// MachinesMessage lists Machines by message (messages maps a Machine's name to its message): "* Machines
// a, b: message", the largest group first, at most maxMachinesInMessage groups, then how many Machines
// the groups left out have other issues.
func MachinesMessage(machines []*clusterv1.Machine, messages map[string]string) string {
	type group struct {
		message string
		names   []string
	}
	var groups []*group
	byMessage := map[string]*group{}
	for _, m := range machines {
		msg := messages[m.Name]
		g, ok := byMessage[msg]
		if !ok {
			g = &group{message: msg}
			byMessage[msg] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, m.Name)
	}
	for _, g := range groups {
		sort.Strings(g.names)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if len(groups[i].names) != len(groups[j].names) {
			return len(groups[i].names) > len(groups[j].names)
		}
		return groups[i].names[0] < groups[j].names[0]
	})
	var lines []string
	others := 0
	for i, g := range groups {
		if i >= maxMachinesInMessage {
			others += len(g.names)
			continue
		}
		lines = append(lines, fmt.Sprintf("* %s: %s", MachineNames(g.names, "", ""), indent(g.message)))
	}
	if others > 0 {
		lines = append(lines, fmt.Sprintf("And %d more %s with other issues", others, plural(others, "Machine", "Machines")))
	}
	return strings.Join(lines, "\n")
}

// MachineNames renders "Machine a", "Machines a, b" or "Machines a, b, c, ... (5 more)", followed by verb
// in the singular or plural when given.
func MachineNames(names []string, singularVerb, pluralVerb string) string {
	shown := names
	suffix := ""
	if len(names) > maxMachinesInMessage {
		shown = names[:maxMachinesInMessage]
		suffix = fmt.Sprintf(", ... (%d more)", len(names)-maxMachinesInMessage)
	}
	out := "Machine " + strings.Join(shown, ", ") + suffix
	verb := singularVerb
	if len(names) > 1 {
		out = "Machines " + strings.Join(shown, ", ") + suffix
		verb = pluralVerb
	}
	if verb != "" {
		out += " " + verb
	}
	return out
}

func indent(msg string) string {
	return strings.ReplaceAll(msg, "\n", "\n  ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Bullets renders items as a Markdown-like list, one per line, as condition messages list things; an
// item of several lines is indented under its bullet.
func Bullets(items []string) string {
	lines := make([]string, 0, len(items))
	for _, item := range items {
		lines = append(lines, "* "+indent(item))
	}
	return strings.Join(lines, "\n")
}

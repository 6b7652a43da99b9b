package tree

import (
	"fmt"
	"strings"
)

// ConditionFilter selects the objects whose conditions are all listed under their row
// (--show-conditions). The zero value selects none.
type ConditionFilter struct {
	entries []filterEntry
}

type filterEntry struct {
	all     bool
	kind    string // lower case
	name    string // empty: every object of kind
	nonZero bool   // list only the conditions that say something (see Condition.isZero)
}

// ShowConditions is how many of an object's conditions its rows list.
type ShowConditions int

// The ShowConditions values.
const (
	// ShowNoConditions lists none: the row shows the object's main condition.
	ShowNoConditions ShowConditions = iota
	// ShowNonZeroConditions lists the conditions that are not in their normal state or carry a message,
	// plus Available and Ready.
	ShowNonZeroConditions
	// ShowAllConditions lists every condition.
	ShowAllConditions
)

// ParseConditionFilter parses the value of --show-conditions: a comma-separated list of Kind, Kind/name
// or all, each optionally followed by + to list only the conditions that say something. Kinds are
// matched case-insensitively, names exactly.
func ParseConditionFilter(s string) (ConditionFilter, error) {
	var f ConditionFilter
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		e := filterEntry{}
		if strings.HasSuffix(item, "+") {
			e.nonZero = true
			item = strings.TrimSuffix(item, "+")
		}
		parts := strings.Split(item, "/")
		switch {
		case len(parts) == 1 && strings.EqualFold(parts[0], "all"):
			e.all = true
		case len(parts) == 1 && parts[0] != "":
			e.kind = strings.ToLower(parts[0])
		case len(parts) == 2 && parts[0] != "" && parts[1] != "":
			e.kind, e.name = strings.ToLower(parts[0]), parts[1]
		default:
			return ConditionFilter{}, fmt.Errorf("--show-conditions: %q is not a kind, kind/name or all (e.g. --show-conditions Machine,MachineDeployment/md-0 or --show-conditions all)", item)
		}
		f.entries = append(f.entries, e)
	}
	return f, nil
}

// Match returns how many conditions to list for an object of kind and name. When several entries match,
// the one that lists more wins.
func (f ConditionFilter) Match(kind, name string) ShowConditions {
	show := ShowNoConditions
	for _, e := range f.entries {
		if !e.all && (e.kind != strings.ToLower(kind) || (e.name != "" && e.name != name)) {
			continue
		}
		s := ShowAllConditions
		if e.nonZero {
			s = ShowNonZeroConditions
		}
		show = max(show, s)
	}
	return show
}

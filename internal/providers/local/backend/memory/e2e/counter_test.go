package e2e

import (
	"fmt"
	"sort"
	"strings"

	"github.com/capstan-dev/capstan/internal/test/apicount"
)

// components are the parts of the stack whose requests the benchmark counts apart (apicount.Key.Agent):
// each component's own client, and what they share (the informers and the event recorder).
var components = []string{"core", "bootstrap", "controlplane", "local", "manager"}

// componentWrites are a component's create, update and patch requests.
func componentWrites(c apicount.Counts, component string) int {
	return c.Sum(func(k apicount.Key) bool { return k.Agent == component && apicount.IsWrite(k.Verb) })
}

// requestTable lists the requests by component, verb and resource, most first, with each count divided by
// per (the Machines, or the seconds idle).
func requestTable(c, conflicts apicount.Counts, per float64, unit string) string {
	type row struct{ component, verb, resource string }
	rows, rowConflicts := map[row]int{}, map[row]int{}
	for k, n := range c {
		rows[row{k.Agent, k.Action, k.Resource}] += n
	}
	for k, n := range conflicts {
		rowConflicts[row{k.Agent, k.Action, k.Resource}] += n
	}
	keys := make([]row, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].component != keys[j].component {
			return keys[i].component < keys[j].component
		}
		if rows[keys[i]] != rows[keys[j]] {
			return rows[keys[i]] > rows[keys[j]]
		}
		return keys[i].verb+keys[i].resource < keys[j].verb+keys[j].resource
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-7s %-55s %8s %10s %8s\n", "component", "verb", "resource", "count", unit, "409")
	for _, k := range keys {
		fmt.Fprintf(&b, "%-13s %-7s %-55s %8d %10.2f %8d\n", k.component, k.verb, k.resource, rows[k], float64(rows[k])/per, rowConflicts[k])
	}
	return b.String()
}

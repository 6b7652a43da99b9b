package move

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Plan is what a move does: the objects it moves, in creation order, and the objects of the namespace
// that stay, with the reason.
type Plan struct {
	// Namespace is the namespace being moved; empty for a restore from a directory.
	Namespace string
	// Groups are the objects to move: each group's owners are in earlier groups.
	Groups [][]Object
	// NotMoved are the objects of the namespace that stay where they are.
	NotMoved []NotMoved
	// Problems are the preflight problems (dry run only): the move would not start.
	Problems []string
}

// Object is an object that moves.
type Object struct {
	Ref
	// UID is the object's UID in the source.
	UID types.UID `json:"uid,omitempty"`
	// Global objects (cluster-scoped, or in a hierarchy that starts at one) are created in the target when
	// missing, never updated there and never deleted from the source.
	Global bool `json:"global,omitempty"`
}

// NotMoved is an object that stays, and why.
type NotMoved struct {
	Ref
	Reason string
}

// Objects returns the objects to move, in creation order.
func (p *Plan) Objects() []Object {
	var out []Object
	for _, g := range p.Groups {
		out = append(out, g...)
	}
	return out
}

// Count returns how many objects of a kind move.
func (p *Plan) Count(kind string) int {
	n := 0
	for _, o := range p.Objects() {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

// Summary says how many objects move, with the number of Clusters and ClusterClasses: "57 objects
// (3 Clusters, 1 ClusterClass)".
func (p *Plan) Summary() string {
	s := plural(len(p.Objects()), "object")
	var parts []string
	for _, k := range []string{clusterKind, clusterClassKind, crsKind} {
		if n := p.Count(k); n > 0 {
			parts = append(parts, plural(n, k))
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Print writes the plan: the objects to move group by group, then the objects that stay with the reason,
// then the problems that would stop the move.
func (p *Plan) Print(w io.Writer) {
	where := "namespace " + p.Namespace
	if p.Namespace == "" {
		where = "the directory"
	}
	fmt.Fprintf(w, "Objects to move from %s: %s\n", where, p.Summary())
	for i, g := range p.Groups {
		fmt.Fprintf(w, "  Group %d:\n", i+1)
		for _, o := range g {
			suffix := ""
			if o.Global {
				suffix = " (global: created if missing, kept in the source)"
			}
			fmt.Fprintf(w, "    %s%s\n", o.Ref, suffix)
		}
	}
	PrintNotMoved(w, p.NotMoved)
	if len(p.Problems) > 0 {
		fmt.Fprintf(w, "The move would not start: %s\n", plural(len(p.Problems), "problem"))
		for _, pr := range p.Problems {
			fmt.Fprintf(w, "  - %s\n", pr)
		}
	}
}

// PrintNotMoved writes the objects that stay, with the reason.
func PrintNotMoved(w io.Writer, notMoved []NotMoved) {
	if len(notMoved) == 0 {
		return
	}
	fmt.Fprintf(w, "Objects not moved: %d\n", len(notMoved))
	for _, n := range notMoved {
		fmt.Fprintf(w, "  %s: %s\n", n.Ref, n.Reason)
	}
}

// Result is what a move, a backup to a directory or a restore did.
type Result struct {
	// Plan lists the objects moved and those not moved.
	Plan *Plan
	// Resumed is the phase an interrupted move was resumed from; empty for a fresh move.
	Resumed Phase
	// Warnings are things the user should know that did not stop the move.
	Warnings []string
}

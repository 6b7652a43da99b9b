package move

import (
	"fmt"
	"strings"
)

// PreflightError says why a move did not start. Nothing was paused or written.
type PreflightError struct {
	// Problems are every problem found, each saying what to do.
	Problems []string
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("the move did not start (nothing was paused or changed): %s: %s",
		plural(len(e.Problems), "problem"), strings.Join(e.Problems, "; "))
}

// Error is a move that failed after it started; it says where the objects are.
type Error struct {
	// Err is the cause.
	Err error
	// Phase is the phase the move failed in.
	Phase Phase
	// RolledBack is true when the move was undone: the source is unpaused and holds every object, and
	// the copies created in the target were removed.
	RolledBack bool
	// Resumable is true when the journal was kept: running the same command again finishes the move.
	Resumable bool
	// InSource are the objects still in the source.
	InSource []Ref
	// InTarget are the objects (or copies) in the target.
	InTarget []Ref
	// Paused are the Clusters and ClusterClasses that are still paused, and where.
	Paused []string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the move failed while %s: %v", e.Phase.Doing(), e.Err)
	switch {
	case e.RolledBack:
		b.WriteString("; the move was undone: the source is unpaused and keeps every object")
	case e.Resumable:
		fmt.Fprintf(&b, "; %d objects are in the target and %d still in the source: run the same command again to finish the move",
			len(e.InTarget), len(e.InSource))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

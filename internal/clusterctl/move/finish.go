package move

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// finish runs the phases that follow the copy: delete the moved objects from the source (dependents
// first), then unpause the target, then remove the journal. Every step can be repeated: finish is also how
// an interrupted move resumes.
func (m *mover) finish(ctx context.Context) (*Result, error) {
	if m.j.Phase == PhaseDeleting {
		if err := m.deleteFromSource(ctx); err != nil {
			return nil, err
		}
		m.j.Phase = PhaseUnpausing
		if err := m.j.save(ctx, m.from, m.b.Write); err != nil {
			return nil, m.resumableError(err, nil)
		}
		m.checkpoint("unpausing")
	}
	m.log.Info("Resuming the target cluster")
	for _, ref := range m.j.Paused {
		found, err := setPaused(ctx, m.to, m.b.Write, ref, false)
		if err != nil {
			return nil, m.resumableError(err, nil)
		}
		if !found {
			m.warn("%s, which the move paused, is not in the target any more", ref)
		}
		m.checkpoint("unpause %s", ref)
	}
	if err := m.j.remove(ctx, m.from, m.b.Write); err != nil {
		return nil, m.resumableError(err, nil)
	}
	m.checkpoint("done")
	return &Result{Plan: m.journalPlan(), Warnings: m.warnings}, nil
}

// deleteFromSource deletes the moved objects from the source, dependents first. An object still in the
// source is checked to be in the target first (and written there if it is not); one that is in neither is
// reported as lost and the journal is kept.
func (m *mover) deleteFromSource(ctx context.Context) error {
	m.log.Info("Deleting objects from the source cluster")
	objs := append([]journalObject{}, m.j.Objects...)
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].Group > objs[j].Group })
	var lost, left []Ref
	for i, o := range objs {
		src, found, err := m.from.get(ctx, m.b.Read, o.Ref)
		if err != nil {
			return m.resumableError(err, objs[i:])
		}
		if found && o.UID != "" && src.GetUID() != o.UID {
			m.warn("%s in the source is not the object that was moved (its UID changed): it is left in place", o.Ref)
			found = false
		}
		_, inTarget, err := m.to.get(ctx, m.b.Read, o.Ref)
		if err != nil {
			return m.resumableError(err, objs[i:])
		}
		switch {
		case !found && !inTarget:
			lost = append(lost, o.Ref)
			continue
		case !found:
			m.checkpoint("delete %s", o.Ref)
			continue
		case !inTarget:
			m.warn("%s was missing from the target: copied again", o.Ref)
			if _, err := m.writeToTarget(ctx, src, o.Global); err != nil {
				return m.resumableError(err, objs[i:])
			}
		}
		if o.Global {
			left = append(left, o.Ref)
			m.checkpoint("delete %s", o.Ref)
			continue
		}
		if _, err := deleteForMove(ctx, m.from, m.b.Write, o.Ref, o.UID); err != nil {
			return m.resumableError(err, objs[i:])
		}
		m.checkpoint("delete %s", o.Ref)
	}
	if len(left) > 0 {
		sort.Slice(left, func(i, j int) bool { return left[i].less(left[j]) })
		m.log.Info("Global objects copied and kept in the source", "objects", describeRefs(left))
	}
	if len(lost) > 0 {
		// The target had each of them before the source lost it: someone deleted them from the target
		// during the move. Nothing can bring them back; stopping would only leave the clusters paused.
		verb := "are"
		if len(lost) == 1 {
			verb = "is"
		}
		m.warn("%s %s neither in the source nor in the target (deleted from the target during the move): %s",
			plural(len(lost), "object"), verb, describeRefs(lost))
	}
	return nil
}

// resumableError describes a failure after objects started to leave the source: the journal stays, and
// running the move again finishes it. remaining are the objects that may still be in the source.
func (m *mover) resumableError(err error, remaining []journalObject) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var inSource []Ref
	for _, o := range remaining {
		inSource = append(inSource, o.Ref)
	}
	sort.Slice(inSource, func(i, j int) bool { return inSource[i].less(inSource[j]) })
	return &Error{
		Err:       err,
		Phase:     m.j.Phase,
		Resumable: true,
		InSource:  inSource,
		InTarget:  m.journalRefs(func(o journalObject) bool { return true }),
		Paused:    m.pausedIn(m.to),
	}
}

// rollback undoes a move that failed before anything was deleted from the source: it removes the copies
// the move created in the target (dependents first), unpauses the source and removes the journal. It runs
// even when ctx was cancelled (Ctrl-C).
func (m *mover) rollback(ctx context.Context, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	m.log.Info("The move failed: undoing it", "error", cause.Error())
	e := &Error{Err: cause, Phase: PhaseCopying}
	if m.j == nil {
		e.RolledBack = true
		return e
	}
	objs := append([]journalObject{}, m.j.Objects...)
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].Group > objs[j].Group })
	var rollbackErrs []error
	if m.to != nil {
		for _, o := range objs {
			if o.InTarget != targetCreated {
				continue
			}
			if _, err := deleteForMove(ctx, m.to, m.b.Write, o.Ref, ""); err != nil {
				rollbackErrs = append(rollbackErrs, err)
				e.InTarget = append(e.InTarget, o.Ref)
			}
		}
	}
	for _, ref := range m.j.Paused {
		if _, err := setPaused(ctx, m.from, m.b.Write, ref, false); err != nil {
			rollbackErrs = append(rollbackErrs, err)
			e.Paused = append(e.Paused, fmt.Sprintf("%s in %s", ref, m.from.Name))
		}
	}
	if len(rollbackErrs) == 0 {
		if err := m.j.remove(ctx, m.from, m.b.Write); err != nil {
			rollbackErrs = append(rollbackErrs, err)
		}
	}
	if len(rollbackErrs) > 0 {
		e.Resumable = true
		e.Err = errors.Join(cause, fmt.Errorf("undoing the move also failed: %w", errors.Join(rollbackErrs...)))
		e.InSource = m.journalRefs(func(o journalObject) bool { return true })
		return e
	}
	e.RolledBack = true
	return e
}

// journalRefs returns the references of the journal's objects that match keep, sorted.
func (m *mover) journalRefs(keep func(journalObject) bool) []Ref {
	var out []Ref
	for _, o := range m.j.Objects {
		if keep(o) {
			out = append(out, o.Ref)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

func (m *mover) pausedIn(c *Cluster) []string {
	var out []string
	for _, ref := range m.j.Paused {
		out = append(out, fmt.Sprintf("%s in %s", ref, c.Name))
	}
	return out
}

// journalPlan describes the moved objects from the journal.
func (m *mover) journalPlan() *Plan {
	p := &Plan{Namespace: m.j.namespace}
	for _, o := range m.j.Objects {
		for len(p.Groups) <= o.Group {
			p.Groups = append(p.Groups, nil)
		}
		p.Groups[o.Group] = append(p.Groups[o.Group], Object{Ref: o.Ref, UID: o.UID, Global: o.Global})
	}
	return p
}

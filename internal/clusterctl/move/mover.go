package move

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
)

// rollbackTimeout bounds undoing a failed move, which runs even when the move's context was cancelled.
const rollbackTimeout = 5 * time.Minute

// Options tune a move.
type Options struct {
	// Namespace is the namespace whose objects move; required except for FromDirectory.
	Namespace string
	// Backoffs are the retry policies; DefaultBackoffs() when nil.
	Backoffs *Backoffs
	// Checkpoint, when set, is called with a name at every point where the move has made progress (after
	// preflight, after the journal is written, after each object is paused, created or deleted, ...).
	// Tests kill the process there.
	Checkpoint func(name string)
}

// mover runs one move.
type mover struct {
	from, to *Cluster
	o        Options
	b        Backoffs
	log      logr.Logger

	j *journal
	// sourceRefs maps the source UIDs of the moved objects to their references.
	sourceRefs map[types.UID]Ref
	// targetUIDs caches the UIDs of objects in the target, by Ref.key().
	targetUIDs map[string]types.UID
	warnings   []string
}

func newMover(ctx context.Context, from, to *Cluster, o Options) *mover {
	b := DefaultBackoffs()
	if o.Backoffs != nil {
		b = *o.Backoffs
	}
	return &mover{from: from, to: to, o: o, b: b, log: logr.FromContextOrDiscard(ctx), targetUIDs: map[string]types.UID{}}
}

func (m *mover) checkpoint(format string, args ...any) {
	if m.o.Checkpoint != nil {
		m.o.Checkpoint(fmt.Sprintf(format, args...))
	}
}

func (m *mover) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	m.warnings = append(m.warnings, msg)
	m.log.Info("Warning: " + msg)
}

// DryRun discovers what a move of o.Namespace would do and runs every read-only preflight check (against to,
// when given) except upstream's provisioning checks, as --dry-run does. It writes nothing.
func DryRun(ctx context.Context, from, to *Cluster, o Options) (*Plan, error) {
	m := newMover(ctx, from, to, o)
	j, err := readJournal(ctx, from, o.Namespace, m.b.Read)
	if err != nil {
		return nil, err
	}
	d, err := m.discoverSource(ctx)
	if err != nil {
		return nil, err
	}
	p := d.plan()
	p.Problems = m.preflight(ctx, d, checks{from: from, to: to, journal: j})
	if j != nil {
		p.Problems = append(p.Problems, fmt.Sprintf("a move of this namespace to %s was interrupted while %s: running the move again resumes it",
			j.Destination, j.Phase.Doing()))
	}
	return p, nil
}

// discoverSource discovers the objects of the namespace in the source, including the Secrets of the
// namespaces where infrastructure providers run.
func (m *mover) discoverSource(ctx context.Context) (*discovered, error) {
	if m.o.Namespace == "" {
		return nil, errors.New("no namespace to move")
	}
	m.log.Info("Discovering Cluster API objects")
	providers, err := m.from.providers(ctx, m.b.Read)
	if err != nil {
		return nil, err
	}
	var secretNamespaces []string
	for _, p := range providers {
		if p.GetProviderType() == clusterctlv1.InfrastructureProviderType {
			secretNamespaces = append(secretNamespaces, p.Namespace)
		}
	}
	sort.Strings(secretNamespaces)
	d, err := discover(ctx, m.from, m.o.Namespace, secretNamespaces, m.b.Read)
	if err != nil {
		return nil, err
	}
	p := d.plan()
	m.log.Info("Moving Cluster API objects", "Clusters", p.Count(clusterKind), "ClusterClasses", p.Count(clusterClassKind))
	return d, nil
}

// Move moves the objects of o.Namespace from one management cluster to another. When the namespace has the
// journal of an interrupted move to the same target, Move resumes it.
func Move(ctx context.Context, from, to *Cluster, o Options) (*Result, error) {
	m := newMover(ctx, from, to, o)
	if from.Name == to.Name {
		return nil, &PreflightError{Problems: []string{fmt.Sprintf("the source and the target are the same management cluster (%s): give the target with --to-kubeconfig", to.Name)}}
	}
	dest := "cluster " + to.Name
	j, err := readJournal(ctx, from, o.Namespace, m.b.Read)
	if err != nil {
		return nil, err
	}
	if j != nil && j.Phase != PhaseCopying {
		if j.Destination != dest {
			return nil, &PreflightError{Problems: []string{fmt.Sprintf(
				"a move of namespace %s to %s was interrupted after objects were deleted from this cluster: run it again with that destination to finish it",
				o.Namespace, j.Destination)}}
		}
		m.log.Info("Resuming an interrupted move", "phase", j.Phase)
		m.j = j
		m.sourceRefs = j.sourceRefs()
		resumed := j.Phase
		res, err := m.finish(ctx)
		if res != nil {
			res.Resumed = resumed
		}
		return res, err
	}

	d, err := m.discoverSource(ctx)
	if err != nil {
		return nil, err
	}
	if j == nil && d.nothingToMove() {
		if done := m.alreadyMoved(ctx, d); done != nil {
			return done, nil
		}
	}
	if problems := m.preflight(ctx, d, checks{from: from, to: to, provisioning: true, journal: j}); len(problems) > 0 {
		return nil, &PreflightError{Problems: problems}
	}
	res, err := m.begin(ctx, d, j, dest)
	if err != nil {
		return nil, err
	}
	if err := m.copyToTarget(ctx, d); err != nil {
		return nil, m.rollback(ctx, err)
	}
	m.j.Phase = PhaseDeleting
	if err := m.j.save(ctx, m.from, m.b.Write); err != nil {
		return nil, m.rollback(ctx, err)
	}
	m.checkpoint("deleting")
	fin, err := m.finish(ctx)
	if err != nil {
		return nil, err
	}
	res.Warnings = fin.Warnings
	return res, nil
}

// begin follows a passed preflight: it starts the journal of a move to dest, or takes over j, the journal
// of an interrupted one, and returns the Result the move will fill.
func (m *mover) begin(ctx context.Context, d *discovered, j *journal, dest string) (*Result, error) {
	m.checkpoint("preflight")
	res := &Result{Plan: d.plan()}
	if j != nil {
		res.Resumed = j.Phase
	}
	if err := m.startJournal(ctx, d, j, dest); err != nil {
		return nil, err
	}
	return res, nil
}

// alreadyMoved recognizes a move that is run again after it finished (for example after it was killed
// once done): the source has nothing left to move and the target has the namespace's Clusters, unpaused.
func (m *mover) alreadyMoved(ctx context.Context, d *discovered) *Result {
	if m.to.checkReachable(ctx) != nil {
		return nil
	}
	clusters, err := list(ctx, m.to, schema.GroupVersionKind{Group: clusterGroup, Version: "v1beta1", Kind: clusterKind}, d.namespace, m.b.Read)
	if err != nil || len(clusters) == 0 {
		return nil
	}
	var names []string
	for _, c := range clusters {
		if isPaused(c) {
			return nil
		}
		names = append(names, c.GetName())
	}
	m.warn("nothing left to move: the target management cluster %s already has the Clusters of namespace %s (%s); a previous move finished",
		m.to.Name, d.namespace, strings.Join(names, ", "))
	return &Result{Plan: &Plan{Namespace: d.namespace, NotMoved: d.plan().NotMoved}, Warnings: m.warnings}
}

// startJournal records the move in the source before anything is paused: the objects, in order, and the
// Clusters and ClusterClasses it pauses. A journal of an interrupted move keeps what it paused and which
// objects it created in the target.
func (m *mover) startJournal(ctx context.Context, d *discovered, previous *journal, dest string) error {
	j := &journal{Version: journalVersion, Destination: dest, Phase: PhaseCopying, namespace: m.o.Namespace}
	if previous != nil {
		j.cm = previous.cm
		// What the interrupted move paused is this move's to unpause.
		j.Paused = append(j.Paused, previous.Paused...)
		if previous.Destination != dest {
			for _, o := range previous.Objects {
				if o.InTarget == targetCreated {
					m.warn("the interrupted move to %s may have left a paused copy of %s there: delete it", previous.Destination, o.Ref)
				}
			}
		}
	}
	for _, ref := range d.pauseTargets() {
		if !j.paused(ref) {
			j.Paused = append(j.Paused, ref)
		}
	}
	for gi, g := range d.groups {
		for _, n := range g {
			o := journalObject{Ref: n.ref, UID: n.uid, Group: gi, Global: n.globalHierarchy()}
			if previous != nil && previous.Destination == dest {
				if p := previous.object(n.ref); p != nil {
					o.InTarget = p.InTarget
				}
			}
			j.Objects = append(j.Objects, o)
		}
	}
	if err := j.save(ctx, m.from, m.b.Write); err != nil {
		return err
	}
	m.j = j
	m.sourceRefs = j.sourceRefs()
	m.checkpoint("journal")
	return nil
}

// pauseSource pauses every Cluster and ClusterClass of the journal in the source, then waits while any
// moved object carries the block-move annotation.
func (m *mover) pauseSource(ctx context.Context, d *discovered) error {
	m.log.Info("Pausing the source", "objects", len(m.j.Paused))
	for _, ref := range m.j.Paused {
		if _, err := setPaused(ctx, m.from, m.b.Write, ref, true); err != nil {
			return err
		}
		m.checkpoint("pause %s", ref)
	}
	var refs []Ref
	for _, n := range d.moveNodes() {
		refs = append(refs, n.ref)
	}
	return m.waitBlockMove(ctx, refs)
}

// waitBlockMove waits, with the BlockMove backoff, until no object carries the block-move annotation.
func (m *mover) waitBlockMove(ctx context.Context, refs []Ref) error {
	m.log.Info("Waiting for all resources to be ready to move")
	blocked := refs
	b := m.b.BlockMove
	for {
		var still []Ref
		for _, ref := range blocked {
			obj, found, err := m.from.get(ctx, m.b.Read, ref)
			if err != nil {
				return err
			}
			if found {
				if _, ok := obj.GetAnnotations()[clusterctlv1.BlockMoveAnnotation]; ok {
					still = append(still, ref)
				}
			}
		}
		if len(still) == 0 {
			m.checkpoint("unblocked")
			return nil
		}
		if b.Steps <= 0 {
			return &nonRetriable{fmt.Errorf("%s still annotated %s: the provider that set the annotation has not finished; run the move again later",
				describeRefs(still), clusterctlv1.BlockMoveAnnotation)}
		}
		m.log.Info("Waiting for objects to drop the block-move annotation", "objects", describeRefs(still))
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		blocked = still
	}
}

func describeRefs(refs []Ref) string {
	const shown = 5
	s := ""
	for i, r := range refs {
		if i == shown {
			return fmt.Sprintf("%s and %d more", s, len(refs)-shown)
		}
		if i > 0 {
			s += ", "
		}
		s += r.String()
	}
	return s
}

// copyToTarget pauses the source and creates every object in the target, group by group.
func (m *mover) copyToTarget(ctx context.Context, d *discovered) error {
	if err := m.pauseSource(ctx, d); err != nil {
		return err
	}
	if err := m.ensureNamespaces(ctx, m.to, d.moveNodes()); err != nil {
		return err
	}
	m.log.Info("Creating objects in the target cluster")
	var incomplete []Ref
	for gi, g := range d.groups {
		if err := m.recordTargetState(ctx, gi, g); err != nil {
			return err
		}
		for _, n := range g {
			complete, err := m.copyObject(ctx, n.ref, n.uid)
			if err != nil {
				return err
			}
			if !complete {
				incomplete = append(incomplete, n.ref)
			}
			m.checkpoint("create %s", n.ref)
		}
	}
	// Objects in an ownership cycle were created before some of their owners: set their references now.
	for _, ref := range incomplete {
		if _, err := m.copyObject(ctx, ref, m.j.object(ref).UID); err != nil {
			return err
		}
	}
	return nil
}

// recordTargetState records, before a group is created, which of its objects already exist in the target,
// so that undoing the move removes only the copies it made.
func (m *mover) recordTargetState(ctx context.Context, gi int, g []*node) error {
	changed := false
	for _, n := range g {
		o := m.j.object(n.ref)
		if o == nil || o.InTarget != "" {
			continue
		}
		_, found, err := m.to.get(ctx, m.b.Read, n.ref)
		if err != nil {
			return err
		}
		o.InTarget = targetCreated
		if found {
			o.InTarget = targetExisted
		}
		changed = true
	}
	if !changed {
		return nil
	}
	if err := m.j.save(ctx, m.from, m.b.Write); err != nil {
		return err
	}
	m.checkpoint("group %d", gi+1)
	return nil
}

// ensureNamespaces creates the namespaces of the objects in c when missing.
func (m *mover) ensureNamespaces(ctx context.Context, c *Cluster, nodes []*node) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		ns := n.ref.Namespace
		if ns == "" || seen[ns] {
			continue
		}
		seen[ns] = true
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(coreGroupVersion)
		obj.SetKind(namespaceKind)
		obj.SetName(ns)
		if _, err := createOrUpdate(ctx, c, m.b.Write, obj, true); err != nil {
			return err
		}
	}
	m.checkpoint("namespaces")
	return nil
}

// copyObject reads an object from the source (after the pause, so that the copy is paused too) and
// writes it to the target. complete is false when an owner in the move is not in the target yet.
func (m *mover) copyObject(ctx context.Context, ref Ref, uid types.UID) (complete bool, err error) {
	src, found, err := m.from.get(ctx, m.b.Read, ref)
	if err != nil {
		return false, err
	}
	if !found || (uid != "" && src.GetUID() != uid) {
		return false, &nonRetriable{fmt.Errorf("%s disappeared from the source during the move: something deleted it although its cluster is paused", ref)}
	}
	o := m.j.object(ref)
	return m.writeToTarget(ctx, src, o != nil && o.Global)
}

// writeToTarget writes a source object to the target with its ownerReferences rebuilt on the target's
// UIDs; Clusters and ClusterClasses the move paused stay paused there.
func (m *mover) writeToTarget(ctx context.Context, src *unstructured.Unstructured, global bool) (bool, error) {
	obj := src.DeepCopy()
	stripForTarget(obj)
	owners, complete, err := m.targetOwnerReferences(ctx, src)
	if err != nil {
		return false, err
	}
	obj.SetOwnerReferences(owners)
	ref := RefOf(src)
	if isPausable(ref) && m.j != nil && m.j.paused(ref) {
		markPaused(obj)
	}
	uid, err := createOrUpdate(ctx, m.to, m.b.Write, obj, global)
	if err != nil {
		return false, err
	}
	m.targetUIDs[ref.key()] = uid
	return complete, nil
}

// targetOwnerReferences returns the ownerReferences of a source object with the UIDs of the owners in the
// target. A reference to an owner that is not moved and does not exist in the target is dropped (the
// target's garbage collector would otherwise delete the object); complete is false when an owner that is
// moved is not in the target yet.
func (m *mover) targetOwnerReferences(ctx context.Context, src *unstructured.Unstructured) (_ []metav1.OwnerReference, complete bool, _ error) {
	complete = true
	var out []metav1.OwnerReference
	for _, or := range src.GetOwnerReferences() {
		owner, moved := m.sourceRefs[or.UID]
		if !moved {
			owner = Ref{APIVersion: or.APIVersion, Kind: or.Kind, Namespace: src.GetNamespace(), Name: or.Name}
		}
		uid, found, err := m.targetUID(ctx, owner)
		if err != nil {
			return nil, false, err
		}
		if !found {
			if moved {
				complete = false
			} else {
				m.warn("%s: the ownerReference to %s %s was not copied: the owner is not moved and does not exist in the target",
					RefOf(src), or.Kind, or.Name)
			}
			continue
		}
		or.UID = uid
		out = append(out, or)
	}
	return out, complete, nil
}

// targetUID returns the UID of an object in the target.
func (m *mover) targetUID(ctx context.Context, ref Ref) (types.UID, bool, error) {
	if uid, ok := m.targetUIDs[ref.key()]; ok {
		return uid, true, nil
	}
	obj, found, err := m.to.get(ctx, m.b.Read, ref)
	if err != nil {
		if isMissingKind(err) {
			return "", false, nil
		}
		return "", false, err
	}
	if !found {
		return "", false, nil
	}
	m.targetUIDs[ref.key()] = obj.GetUID()
	return obj.GetUID(), true, nil
}

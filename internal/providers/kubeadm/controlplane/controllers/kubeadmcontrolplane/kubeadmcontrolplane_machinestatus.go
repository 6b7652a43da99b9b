package kubeadmcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
)

// machineConditionRetries is how many times the conditions a reconcile set on a Machine are written again
// over a fresh copy when its status patch conflicted.
const machineConditionRetries = 5

// machineWriter writes back what a reconcile changed on one of its Machines: the Machine as read (before)
// and the helper that patches the differences.
type machineWriter struct {
	before *clusterv1.Machine
	helper *patch.Helper
}

func newMachineWriter(m *clusterv1.Machine, c client.Client) *machineWriter {
	return &machineWriter{before: m.DeepCopy(), helper: patch.NewHelper(m, c)}
}

// patchMachine writes the conditions the reconcile set on a Machine (its components' health, UpToDate,
// OwnerRemediated). Others write the Machine's status too — the core's Machine controller several times
// while the Machine gets its Node, which is when the health is first read — and a status patch made over
// the copy read at the start of the reconcile conflicts when one of them wrote in between. Waiting for the
// reconcile to be retried left the health conditions unwritten for minutes under load (the retry waits its
// turn behind every other control plane), and with them the Machine's Ready and the control plane's
// counts. So the conditions this reconcile changed, and only those, are applied again to a fresh copy and
// written at once, as upstream's patch helper does with the conditions a controller owns.
func (r *Reconciler) patchMachine(ctx context.Context, w *machineWriter, m *clusterv1.Machine) error {
	err := w.helper.Patch(ctx, m)
	retries := machineConditionRetries
	if !m.DeletionTimestamp.IsZero() {
		// A Machine being deleted is written by the core at every step of its deletion: its conditions here
		// (UpToDate False, Deleting) are written over a fresh copy once. Left to the retry of the reconcile,
		// they were sent again over the same cached copy, which conflicted again until the cache caught up.
		retries = 1
	}
	for i := 0; i < retries && apierrors.IsConflict(err); i++ {
		fresh := &clusterv1.Machine{}
		if getErr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m), fresh); getErr != nil {
			if apierrors.IsNotFound(getErr) {
				return nil
			}
			return errors.Join(err, fmt.Errorf("reading Machine %s again: %w", m.Name, getErr))
		}
		if nodeChanged(w.before, fresh) {
			// The reconcile read the components' health for the Machine as it was before it got its Node
			// (or another one): "Waiting for a Node", written now over a Machine that has one, would be
			// wrong, and the core would mirror it into the Machine's Ready. The Machine's change brings the
			// control plane back (it owns its Machines), and that reconcile reads the health again.
			return nil
		}
		h := patch.NewHelper(fresh, r.Client)
		if !applyConditionChanges(w.before, m, fresh) {
			return nil
		}
		err = h.Patch(ctx, fresh)
	}
	return err
}

// nodeChanged reports whether the Machine's Node reference differs between the copy a reconcile read and a
// fresh one.
func nodeChanged(read, fresh *clusterv1.Machine) bool {
	a, b := read.Status.NodeRef, fresh.Status.NodeRef
	if a == nil || b == nil {
		return a != b
	}
	return a.Name != b.Name || a.UID != b.UID
}

// applyConditionChanges applies to fresh the conditions (both versions) that differ between before and
// after: set when after has them, removed when after dropped them. Conditions the reconcile did not change
// are left as fresh has them (another controller may have changed them since). It reports whether fresh
// changed.
func applyConditionChanges(before, after, fresh *clusterv1.Machine) bool {
	v1beta1 := applyChanges(before, after, fresh, conditionsOf[clusterv1.Condition]{
		list:   func(m *clusterv1.Machine) []clusterv1.Condition { return m.GetConditions() },
		typeOf: func(c clusterv1.Condition) string { return string(c.Type) },
		get: func(m *clusterv1.Machine, t string) *clusterv1.Condition {
			return conditions.Get(m, clusterv1.ConditionType(t))
		},
		set:    func(m *clusterv1.Machine, c clusterv1.Condition) { conditions.Set(m, c) },
		remove: func(m *clusterv1.Machine, t string) { conditions.Delete(m, clusterv1.ConditionType(t)) },
	})
	v1beta2 := applyChanges(before, after, fresh, conditionsOf[metav1.Condition]{
		list:   func(m *clusterv1.Machine) []metav1.Condition { return m.GetV1Beta2Conditions() },
		typeOf: func(c metav1.Condition) string { return c.Type },
		get:    func(m *clusterv1.Machine, t string) *metav1.Condition { return conditions.GetV1Beta2(m, t) },
		set:    func(m *clusterv1.Machine, c metav1.Condition) { conditions.SetV1Beta2(m, c) },
		remove: func(m *clusterv1.Machine, t string) {
			list := m.GetV1Beta2Conditions()
			meta.RemoveStatusCondition(&list, t)
			m.SetV1Beta2Conditions(list)
		},
	})
	return v1beta1 || v1beta2
}

// conditionsOf reads and writes one version of a Machine's conditions (C is clusterv1.Condition or
// metav1.Condition; both hold values only, so a copy of one is a deep copy).
type conditionsOf[C any] struct {
	list   func(*clusterv1.Machine) []C
	typeOf func(C) string
	get    func(*clusterv1.Machine, string) *C
	set    func(*clusterv1.Machine, C)
	remove func(*clusterv1.Machine, string)
}

// applyChanges is applyConditionChanges for one version of the conditions.
func applyChanges[C any](before, after, fresh *clusterv1.Machine, of conditionsOf[C]) bool {
	changed := false
	types := map[string]bool{}
	for _, m := range []*clusterv1.Machine{before, after} {
		for _, c := range of.list(m) {
			types[of.typeOf(c)] = true
		}
	}
	for t := range types {
		a := of.get(after, t)
		if reflect.DeepEqual(of.get(before, t), a) {
			continue
		}
		var old *C
		if c := of.get(fresh, t); c != nil {
			v := *c
			old = &v
		}
		if a == nil {
			of.remove(fresh, t)
		} else {
			of.set(fresh, *a)
		}
		changed = changed || !reflect.DeepEqual(old, of.get(fresh, t))
	}
	return changed
}

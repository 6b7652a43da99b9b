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
	if !m.DeletionTimestamp.IsZero() {
		// A Machine being deleted is written by the core at every step of its deletion; its conditions here
		// (Deleting) wait for the retry of the reconcile, rather than adding writes to each step.
		return err
	}
	for i := 0; i < machineConditionRetries && apierrors.IsConflict(err); i++ {
		fresh := &clusterv1.Machine{}
		if getErr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m), fresh); getErr != nil {
			if apierrors.IsNotFound(getErr) {
				return nil
			}
			return errors.Join(err, fmt.Errorf("reading Machine %s again: %w", m.Name, getErr))
		}
		h := patch.NewHelper(fresh, r.Client)
		if !applyConditionChanges(w.before, m, fresh) {
			return nil
		}
		err = h.Patch(ctx, fresh)
	}
	return err
}

// applyConditionChanges applies to fresh the conditions (both versions) that differ between before and
// after: set when after has them, removed when after dropped them. Conditions the reconcile did not change
// are left as fresh has them (another controller may have changed them since). It reports whether fresh
// changed.
func applyConditionChanges(before, after, fresh *clusterv1.Machine) bool {
	changed := false
	types := map[clusterv1.ConditionType]bool{}
	for _, c := range append(append(clusterv1.Conditions{}, before.GetConditions()...), after.GetConditions()...) {
		types[c.Type] = true
	}
	for t := range types {
		b, a := conditions.Get(before, t), conditions.Get(after, t)
		if reflect.DeepEqual(b, a) {
			continue
		}
		var old *clusterv1.Condition
		if c := conditions.Get(fresh, t); c != nil {
			old = c.DeepCopy()
		}
		if a == nil {
			conditions.Delete(fresh, t)
		} else {
			conditions.Set(fresh, *a)
		}
		changed = changed || !reflect.DeepEqual(old, conditions.Get(fresh, t))
	}
	typesV2 := map[string]bool{}
	for _, c := range append(append([]metav1.Condition{}, before.GetV1Beta2Conditions()...), after.GetV1Beta2Conditions()...) {
		typesV2[c.Type] = true
	}
	for t := range typesV2 {
		b, a := conditions.GetV1Beta2(before, t), conditions.GetV1Beta2(after, t)
		if reflect.DeepEqual(b, a) {
			continue
		}
		var old *metav1.Condition
		if c := conditions.GetV1Beta2(fresh, t); c != nil {
			old = c.DeepCopy()
		}
		if a == nil {
			list := fresh.GetV1Beta2Conditions()
			meta.RemoveStatusCondition(&list, t)
			fresh.SetV1Beta2Conditions(list)
		} else {
			conditions.SetV1Beta2(fresh, *a)
		}
		changed = changed || !reflect.DeepEqual(old, conditions.GetV1Beta2(fresh, t))
	}
	return changed
}

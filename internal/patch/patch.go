// Package patch writes the changes a reconcile made to an object back to the API server as merge patches:
// one for metadata and spec, one for the status subresource, each sent only when something changed. It
// also remembers which versions of an object a controller's own writes replaced (Writes), so that a
// reconcile can tell when its cache has not caught up with them yet.
package patch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helper remembers an object as it was read, and patches the differences later.
type Helper struct {
	client client.Client
	before client.Object
	writes *Writes
}

// Option configures a Helper.
type Option func(*Helper)

// WithWrites records the writes of the Helper in w.
func WithWrites(w *Writes) Option {
	return func(h *Helper) { h.writes = w }
}

// NewHelper snapshots obj; call Patch with the same object after changing it.
func NewHelper(obj client.Object, c client.Client, opts ...Option) *Helper {
	h := &Helper{client: c, before: obj.DeepCopyObject().(client.Object)}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Patch sends what changed in obj since NewHelper: metadata and spec first (with optimistic locking when
// the finalizers or the owner references changed: lists, which a merge patch replaces whole, so one added
// concurrently is never dropped; a change of the finalizers alone is a JSON patch that tests them instead,
// see finalizersPatch), then status, unless the first patch deleted the object. obj is updated with what
// the server returns.
//
// Conditions are lists, which a merge patch replaces whole; other controllers may own some of them (the
// MachineSet sets its Machines' UpToDate condition). A status patch that changes a list of conditions is
// therefore sent with optimistic locking: written over a copy older than the server's, it would drop or
// revert what others wrote, so it fails with a conflict instead, and the reconcile is retried.
//
// When the spec patch gives the object a new generation and the server's spec is the one the status was
// computed from, the status records the new generation (status.observedGeneration and the conditions'
// observedGeneration that named the generation read), rather than needing one more write to catch up.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	// Most reconciles change nothing, and most of the others change only the status: comparing the
	// objects as they are is much cheaper than converting them to maps (equal objects convert to equal
	// maps), and only the status is converted then.
	if reflect.DeepEqual(h.before, obj) {
		return nil
	}
	// base is the version of the object the status patch applies to.
	base := h.before.GetResourceVersion()
	beforeStatus, afterStatus, statusOnly, err := changedStatusOnly(h.before, obj)
	if err != nil {
		return err
	}
	if !statusOnly {
		if beforeStatus, afterStatus, base, err = h.patchObject(ctx, obj); err != nil {
			return err
		}
		if gone(obj) {
			// The patch removed the last finalizer of an object being deleted: the server deleted it, and
			// a status patch could only be answered Not Found.
			return nil
		}
	}
	if reflect.DeepEqual(beforeStatus, afterStatus) {
		return nil
	}
	lockOn := ""
	if conditionsChanged(beforeStatus, afterStatus) {
		lockOn = base
	}
	data, err := statusPatch(beforeStatus, afterStatus, lockOn)
	if err != nil {
		return err
	}
	// The status patch is computed from the snapshots, so it holds even though the spec patch above
	// refreshed obj from the server.
	written := obj.GetResourceVersion()
	if err := h.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		if apierrors.IsNotFound(err) && !obj.GetDeletionTimestamp().IsZero() {
			return nil // removing the last finalizer deleted it
		}
		if apierrors.IsConflict(err) {
			h.writes.Replaced(obj, lockOn)
		}
		return fmt.Errorf("patching the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	h.writes.Record(written, obj)
	return nil
}

// gone says whether obj, as the server returned it from a write, was deleted by that write: it is being
// deleted and has no finalizer left.
func gone(obj client.Object) bool {
	return !obj.GetDeletionTimestamp().IsZero() && len(obj.GetFinalizers()) == 0
}

// patchObject sends the metadata and spec patch when they changed, and returns the statuses to compare and
// the version of the object the status patch applies to.
func (h *Helper) patchObject(ctx context.Context, obj client.Object) (beforeStatus, afterStatus any, base string, err error) {
	before, err := toMap(h.before)
	if err != nil {
		return nil, nil, "", err
	}
	after, err := toMap(obj)
	if err != nil {
		return nil, nil, "", err
	}
	beforeStatus, afterStatus = before["status"], after["status"]
	delete(before, "status")
	delete(after, "status")
	base = h.before.GetResourceVersion()
	if reflect.DeepEqual(before, after) {
		return beforeStatus, afterStatus, base, nil
	}
	var p client.Patch
	if onlyFinalizersChanged(before, after) {
		data, err := finalizersPatch(h.before.GetFinalizers(), obj.GetFinalizers())
		if err != nil {
			return nil, nil, "", err
		}
		p = client.RawPatch(types.JSONPatchType, data)
	} else {
		lock := !reflect.DeepEqual(h.before.GetFinalizers(), obj.GetFinalizers()) ||
			!reflect.DeepEqual(h.before.GetOwnerReferences(), obj.GetOwnerReferences())
		data, err := objectPatch(before, after, lock)
		if err != nil {
			return nil, nil, "", err
		}
		p = client.RawPatch(types.MergePatchType, data)
	}
	if err := h.client.Patch(ctx, obj, p); err != nil {
		if p.Type() == types.JSONPatchType && testFailed(err) {
			// Another writer changed the finalizers since obj was read.
			err = apierrors.NewConflict(schema.GroupResource{}, obj.GetName(),
				fmt.Errorf("the finalizers changed since they were read: %w", err))
		}
		if apierrors.IsConflict(err) {
			h.writes.Replaced(obj, base)
		}
		return nil, nil, "", fmt.Errorf("patching %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if gone(obj) {
		// The server answers a write that deleted the object with the object as written, at the version
		// it replaced (no new version is stored): remembered all the same, so that a reconcile of the copy
		// still cached, finalizer and all, does not do the deletion's work again while the event of the
		// deletion is on its way.
		h.writes.Replaced(obj, base)
	} else {
		h.writes.Record(base, obj)
	}
	written, err := toMap(obj)
	if err != nil {
		return nil, nil, "", err
	}
	// The status patch holds for the server's object when the status there is the one it was computed
	// from; otherwise it is sent against the version read, and conflicts when it must.
	if reflect.DeepEqual(written["status"], beforeStatus) {
		base = obj.GetResourceVersion()
	}
	if oldGen, newGen := h.before.GetGeneration(), obj.GetGeneration(); newGen != oldGen && reflect.DeepEqual(written["spec"], after["spec"]) {
		observeGeneration(afterStatus, oldGen, newGen)
	}
	return beforeStatus, afterStatus, base, nil
}

// changedStatusOnly says whether before and after, typed objects (pointers to structs of exported fields),
// differ in their Status field only; if so it returns both statuses as maps. It says no, without error,
// for other objects (unstructured ones).
func changedStatusOnly(before, after client.Object) (beforeStatus, afterStatus any, ok bool, err error) {
	vb, va := reflect.ValueOf(before), reflect.ValueOf(after)
	if vb.Kind() != reflect.Pointer || va.Type() != vb.Type() || vb.Elem().Kind() != reflect.Struct {
		return nil, nil, false, nil
	}
	eb, ea := vb.Elem(), va.Elem()
	status := -1
	for i := range eb.NumField() {
		f := eb.Type().Field(i)
		if !f.IsExported() {
			return nil, nil, false, nil
		}
		if f.Name == "Status" && f.Type.Kind() == reflect.Struct && strings.Split(f.Tag.Get("json"), ",")[0] == "status" {
			status = i
			continue
		}
		if !reflect.DeepEqual(eb.Field(i).Interface(), ea.Field(i).Interface()) {
			return nil, nil, false, nil
		}
	}
	if status < 0 {
		return nil, nil, false, nil
	}
	b, err := statusMap(eb.Field(status))
	if err != nil {
		return nil, nil, false, err
	}
	a, err := statusMap(ea.Field(status))
	if err != nil {
		return nil, nil, false, err
	}
	return b, a, true, nil
}

// statusMap converts a Status field (a struct) to what it is in the object's map.
func statusMap(v reflect.Value) (any, error) {
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return runtime.DefaultUnstructuredConverter.ToUnstructured(p.Interface())
}

// testFailed says whether err answers a JSON patch whose test operation failed: 422 without causes (the
// API server's answer then); a finalizer the API server finds invalid is 422 too, with the field as its
// cause, and stays an error of its own.
func testFailed(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || len(d.Causes) == 0
}

// onlyFinalizersChanged says whether before and after (without status) differ in their finalizers only.
func onlyFinalizersChanged(before, after map[string]any) bool {
	b, a := copyWithMetadata(before), copyWithMetadata(after)
	for _, m := range []map[string]any{b, a} {
		md := m["metadata"].(map[string]any)
		delete(md, "finalizers")
		delete(md, "resourceVersion")
	}
	return reflect.DeepEqual(b, a)
}

// finalizersPatch returns the JSON patch that replaces the finalizers from before by after, only if the
// server's are still before's: it fails when a finalizer was added or removed concurrently, as the
// optimistic lock would, but not when anything else changed (a status written meanwhile). Adding or
// removing the finalizer is the only change of most reconciles that change metadata, and the one that
// raced most with other writers.
func finalizersPatch(before, after []string) ([]byte, error) {
	var test any // null: the server has no finalizers
	if len(before) > 0 {
		test = before
	}
	ops := []map[string]any{{"op": "test", "path": "/metadata/finalizers", "value": test}}
	if len(after) > 0 {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/finalizers", "value": after})
	} else {
		ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/finalizers"})
	}
	return json.Marshal(ops)
}

// objectPatch returns the merge patch of metadata and spec from before to after; with lock, the patch
// carries before's resourceVersion, so it only applies to that version of the object. Annotations or labels
// that after no longer has at all are removed one by one, not by clearing the map: a merge patch that
// nulls the whole map would also drop what others added since before was read.
func objectPatch(before, after map[string]any, lock bool) ([]byte, error) {
	b, a := copyWithMetadata(before), copyWithMetadata(after)
	bm, am := b["metadata"].(map[string]any), a["metadata"].(map[string]any)
	for _, key := range []string{"annotations", "labels"} {
		if _, had := bm[key]; had {
			if _, has := am[key]; !has {
				am[key] = map[string]any{}
			}
		}
	}
	if lock {
		// Only in the target document, so that the patch carries it.
		delete(bm, "resourceVersion")
	} else {
		delete(bm, "resourceVersion")
		delete(am, "resourceVersion")
	}
	bJSON, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	aJSON, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(bJSON, aJSON)
}

// copyWithMetadata copies obj's top level and its metadata, so that they can be changed.
func copyWithMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	md := map[string]any{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		for k, v := range m {
			md[k] = v
		}
	}
	out["metadata"] = md
	return out
}

// statusPatch returns the merge patch from one status to another; with a resourceVersion, the patch only
// applies to that version of the object.
func statusPatch(before, after any, resourceVersion string) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"status": before})
	if err != nil {
		return nil, err
	}
	a := map[string]any{"status": after}
	if resourceVersion != "" {
		// Only in the target document, so that the patch carries it.
		a["metadata"] = map[string]any{"resourceVersion": resourceVersion}
	}
	aJSON, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(b, aJSON)
}

// conditionLists are the paths, under status, of the lists of conditions.
var conditionLists = [][]string{{"conditions"}, {"v1beta2", "conditions"}}

func conditionsChanged(before, after any) bool {
	for _, path := range conditionLists {
		if !reflect.DeepEqual(lookup(before, path), lookup(after, path)) {
			return true
		}
	}
	return false
}

func lookup(v any, path []string) any {
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

// observeGeneration replaces oldGen by newGen in status.observedGeneration and in the observedGeneration
// of the conditions.
func observeGeneration(status any, oldGen, newGen int64) {
	replace := func(m map[string]any) {
		if g, ok := m["observedGeneration"].(int64); ok && g == oldGen {
			m["observedGeneration"] = newGen
		}
	}
	s, ok := status.(map[string]any)
	if !ok {
		return
	}
	replace(s)
	for _, path := range conditionLists {
		list, _ := lookup(s, path).([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				replace(m)
			}
		}
	}
}

func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return runtime.DeepCopyJSON(u.UnstructuredContent()), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

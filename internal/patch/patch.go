// Package patch writes the changes a reconcile made to an object back to the API server as merge patches:
// one for metadata and spec, one for the status subresource, each sent only when something changed.
package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helper remembers an object as it was read, and patches the differences later.
type Helper struct {
	client client.Client
	before client.Object
}

// NewHelper snapshots obj; call Patch with the same object after changing it.
func NewHelper(obj client.Object, c client.Client) *Helper {
	return &Helper{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch sends what changed in obj since NewHelper: metadata and spec first (with optimistic locking when
// the finalizers changed, so a finalizer added concurrently is never dropped), then status. obj is updated
// with what the server returns.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	before, err := toMap(h.before)
	if err != nil {
		return err
	}
	after, err := toMap(obj)
	if err != nil {
		return err
	}
	beforeStatus, afterStatus := before["status"], after["status"]
	delete(before, "status")
	delete(after, "status")

	if !reflect.DeepEqual(before, after) {
		var opts []client.MergeFromOption
		if !reflect.DeepEqual(h.before.GetFinalizers(), obj.GetFinalizers()) {
			opts = append(opts, client.MergeFromWithOptimisticLock{})
		}
		if err := h.client.Patch(ctx, obj, client.MergeFromWithOptions(h.before, opts...)); err != nil {
			return fmt.Errorf("patching %s: %w", client.ObjectKeyFromObject(obj), err)
		}
	}
	if reflect.DeepEqual(beforeStatus, afterStatus) {
		return nil
	}
	data, err := statusPatch(beforeStatus, afterStatus)
	if err != nil {
		return err
	}
	// The status patch is computed from the snapshots, so it holds even though the spec patch above
	// refreshed obj from the server.
	if err := h.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		if apierrors.IsNotFound(err) && !obj.GetDeletionTimestamp().IsZero() {
			return nil // removing the last finalizer deleted it
		}
		return fmt.Errorf("patching the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func statusPatch(before, after any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"status": before})
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(map[string]any{"status": after})
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(b, a)
}

func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return runtime.DeepCopyJSON(u.UnstructuredContent()), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

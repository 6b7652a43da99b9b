package envtest

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchWithLock reads the object of key into obj (a new, empty object of its type), applies change to it
// and patches it with an optimistic lock: it fails with a conflict when a controller wrote the object
// meanwhile, so that a test calls it again in an Eventually, with a new obj, until it succeeds.
func PatchWithLock[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, change func(T)) error {
	if err := c.Get(ctx, key, obj); err != nil {
		return err
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T: a copy of it is not a client.Object", obj)
	}
	change(obj)
	return c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

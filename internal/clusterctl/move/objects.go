package move

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// stripForTarget removes what the target's API server assigns (UID, resourceVersion, timestamps, managed
// fields), the ownerReferences (rebuilt with the target's UIDs) and the status, which is never restored:
// controllers rebuild it.
func stripForTarget(obj *unstructured.Unstructured) {
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	obj.SetGeneration(0)
	obj.SetSelfLink("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetOwnerReferences(nil)
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	if a := obj.GetAnnotations(); a != nil {
		delete(a, clusterctlv1.DeleteForMoveAnnotation)
		obj.SetAnnotations(a)
	}
}

// isPausable reports whether the move pauses objects of this kind: Clusters (spec.paused) and
// ClusterClasses (the paused annotation).
func isPausable(ref Ref) bool {
	return ref.is(clusterGroup, clusterKind) || ref.is(clusterGroup, clusterClassKind)
}

// isPaused reports whether a Cluster or ClusterClass is paused.
func isPaused(obj *unstructured.Unstructured) bool {
	ref := RefOf(obj)
	if ref.is(clusterGroup, clusterKind) {
		p, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused")
		return p
	}
	_, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]
	return ok
}

// markPaused sets the pause of a Cluster or ClusterClass on an object about to be written.
func markPaused(obj *unstructured.Unstructured) {
	if RefOf(obj).is(clusterGroup, clusterKind) {
		_ = unstructured.SetNestedField(obj.Object, true, "spec", "paused")
		return
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[clusterv1.PausedAnnotation] = "true"
	obj.SetAnnotations(a)
}

// setPaused pauses or unpauses a Cluster (spec.paused; unpausing removes the field so that clusterctl
// does not own it) or a ClusterClass (the cluster.x-k8s.io/paused annotation). found is false when the
// object does not exist.
func setPaused(ctx context.Context, c *Cluster, b wait.Backoff, ref Ref, paused bool) (found bool, err error) {
	var patch string
	switch {
	case ref.is(clusterGroup, clusterKind) && paused:
		patch = `{"spec":{"paused":true}}`
	case ref.is(clusterGroup, clusterKind):
		patch = `{"spec":{"paused":null}}`
	case paused:
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, clusterv1.PausedAnnotation)
	default:
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, clusterv1.PausedAnnotation)
	}
	err = retry(ctx, b, func(ctx context.Context) error {
		return c.Client.Patch(ctx, ref.unstructured(), client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		verb := "unpausing"
		if paused {
			verb = "pausing"
		}
		return false, fmt.Errorf("%s %s in %s: %w", verb, ref, c.Name, err)
	}
	return true, nil
}

// createOrUpdate writes obj to c: creates it, or updates the existing object (global objects are only
// created). It returns the object's UID in c.
func createOrUpdate(ctx context.Context, c *Cluster, b wait.Backoff, obj *unstructured.Unstructured, global bool) (types.UID, error) {
	ref := RefOf(obj)
	var uid types.UID
	err := retry(ctx, b, func(ctx context.Context) error {
		existing := ref.unstructured()
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, existing)
		switch {
		case apierrors.IsNotFound(err):
			create := obj.DeepCopy()
			if err := c.Client.Create(ctx, create); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return apierrors.NewConflict(ref.GroupVersionKind().GroupVersion().WithResource(ref.Kind).GroupResource(), ref.Name, err)
				}
				return err
			}
			uid = create.GetUID()
			return nil
		case err != nil:
			return err
		case global:
			uid = existing.GetUID()
			return nil
		}
		update := obj.DeepCopy()
		update.SetResourceVersion(existing.GetResourceVersion())
		if err := c.Client.Update(ctx, update); err != nil {
			return err
		}
		uid = update.GetUID()
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("writing %s to %s: %w", ref, c.Name, err)
	}
	return uid, nil
}

// deleteForMove deletes an object the move took away: it annotates it with
// clusterctl.cluster.x-k8s.io/delete-for-move (so that controllers know the deletion is not a request to
// tear anything down), removes its finalizers and deletes it. uid, when set, guards against deleting a
// different object of the same name. It returns false when the object is a different one, and leaves it.
func deleteForMove(ctx context.Context, c *Cluster, b wait.Backoff, ref Ref, uid types.UID) (bool, error) {
	same := true
	err := retry(ctx, b, func(ctx context.Context) error {
		obj := ref.unstructured()
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		if uid != "" && obj.GetUID() != uid {
			same = false
			return nil
		}
		_, annotated := obj.GetAnnotations()[clusterctlv1.DeleteForMoveAnnotation]
		if !annotated || len(obj.GetFinalizers()) > 0 {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q},"finalizers":null}}`, clusterctlv1.DeleteForMoveAnnotation, deleteForMoveValue)
			if err := c.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				return client.IgnoreNotFound(err)
			}
		}
		objUID := obj.GetUID()
		if err := c.Client.Delete(ctx, obj, client.Preconditions{UID: &objUID}); err != nil {
			return client.IgnoreNotFound(err)
		}
		// A controller may have added its finalizer back between the patch and the deletion (many add it
		// even to paused objects): the object then waits, deleted, for a finalizer nobody removes. Once
		// deleted, no finalizer can be added any more: remove them again.
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		if obj.GetUID() != objUID {
			return nil
		}
		if len(obj.GetFinalizers()) > 0 {
			if err := c.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
				return client.IgnoreNotFound(err)
			}
		}
		return nil
	})
	if err != nil {
		return same, fmt.Errorf("deleting %s from %s: %w", ref, c.Name, err)
	}
	return same, nil
}

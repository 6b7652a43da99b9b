// Package hooks tracks, in a Cluster's annotations, the lifecycle hooks that must still be called
// (runtime.cluster.x-k8s.io/pending-hooks) and whether BeforeClusterDelete let its deletion go on
// (runtime.cluster.x-k8s.io/ok-to-delete), so that an After... hook is called once even across restarts
// of the manager. The functions change the object; the caller writes it.
package hooks

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
)

// IsPending reports whether hook is in obj's pending-hooks annotation.
func IsPending(hook runtimehooksv1.Hook, obj metav1.Object) bool {
	return slices.Contains(pending(obj), string(hook))
}

// MarkPending adds hooks to obj's pending-hooks annotation; it reports whether obj changed.
func MarkPending(obj metav1.Object, hooks ...runtimehooksv1.Hook) bool {
	list := pending(obj)
	changed := false
	for _, h := range hooks {
		if !slices.Contains(list, string(h)) {
			list = append(list, string(h))
			changed = true
		}
	}
	if changed {
		setPending(obj, list)
	}
	return changed
}

// MarkDone removes hooks from obj's pending-hooks annotation (and the annotation once it is empty); it
// reports whether obj changed.
func MarkDone(obj metav1.Object, hooks ...runtimehooksv1.Hook) bool {
	list := pending(obj)
	kept := slices.DeleteFunc(slices.Clone(list), func(h string) bool {
		return slices.Contains(hooks, runtimehooksv1.Hook(h))
	})
	if len(kept) == len(list) {
		return false
	}
	setPending(obj, kept)
	return true
}

// IsOkToDelete reports whether obj has the ok-to-delete annotation.
func IsOkToDelete(obj metav1.Object) bool {
	_, ok := obj.GetAnnotations()[runtimev1.OkToDeleteAnnotation]
	return ok
}

// MarkOkToDelete sets the ok-to-delete annotation; it reports whether obj changed.
func MarkOkToDelete(obj metav1.Object) bool {
	if IsOkToDelete(obj) {
		return false
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[runtimev1.OkToDeleteAnnotation] = ""
	obj.SetAnnotations(a)
	return true
}

func pending(obj metav1.Object) []string {
	var out []string
	for _, h := range strings.Split(obj.GetAnnotations()[runtimev1.PendingHooksAnnotation], ",") {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

func setPending(obj metav1.Object, list []string) {
	a := obj.GetAnnotations()
	if len(list) == 0 {
		delete(a, runtimev1.PendingHooksAnnotation)
		obj.SetAnnotations(a)
		return
	}
	if a == nil {
		a = map[string]string{}
	}
	slices.Sort(list)
	a[runtimev1.PendingHooksAnnotation] = strings.Join(list, ",")
	obj.SetAnnotations(a)
}

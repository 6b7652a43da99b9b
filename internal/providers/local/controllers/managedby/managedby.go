// Package managedby tells the local provider's controllers whether an object is theirs to reconcile: an
// object carrying cluster.x-k8s.io/managed-by is managed by something else and left untouched.
package managedby

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// IsExternal reports whether something other than this provider manages the object: it carries
// cluster.x-k8s.io/managed-by, as an annotation (what upstream's predicate reads) or as a label (what the
// contract page says).
func IsExternal(o metav1.Object) bool {
	if _, ok := o.GetAnnotations()[clusterv1.ManagedByAnnotation]; ok {
		return true
	}
	_, ok := o.GetLabels()[clusterv1.ManagedByAnnotation]
	return ok
}

// NotExternal lets through the objects IsExternal does not claim for something else.
func NotExternal() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return !IsExternal(o) })
}

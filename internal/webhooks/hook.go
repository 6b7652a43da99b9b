package webhooks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gobuffalo/flect"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Hook is one admission webhook: the kind it admits, the operations, and the handler.
type Hook struct {
	// Mutating says whether the hook changes objects (a MutatingWebhookConfiguration entry) or only
	// admits or refuses them (a ValidatingWebhookConfiguration entry).
	Mutating bool
	// Operations are the operations the hook sees; CREATE and UPDATE when empty.
	Operations []admissionregistrationv1.OperationType
	// MatchConditions are CEL conditions a request must meet for the API server to send it to the hook
	// (the configuration entry's matchConditions): a hook for objects of other providers' kinds sees only
	// the ones it is about, and does not hold the others up when its manager is down.
	MatchConditions []admissionregistrationv1.MatchCondition
	// FailurePolicy says what the API server does when it cannot call the hook: Fail (when empty) refuses
	// the request, Ignore admits it.
	FailurePolicy admissionregistrationv1.FailurePolicyType

	// namePrefix replaces validation. or default. in the entry's name (FailOpen).
	namePrefix string

	object  client.Object
	handler func(*runtime.Scheme) http.Handler
}

// Validating returns a validating hook for the kind of obj. Its entry is named
// validation.<kind>.<group> and served at /validate-<group>-<version>-<kind>, as upstream Cluster API's.
func Validating[T client.Object](obj T, v admission.Validator[T]) Hook {
	return Hook{object: obj, handler: func(s *runtime.Scheme) http.Handler { return admission.WithValidator[T](s, v) }}
}

// Mutating returns a defaulting hook for the kind of obj. Its entry is named default.<kind>.<group> and
// served at /mutate-<group>-<version>-<kind>.
func Mutating[T client.Object](obj T, d admission.Defaulter[T]) Hook {
	return Hook{Mutating: true, object: obj, handler: func(s *runtime.Scheme) http.Handler { return admission.WithDefaulter[T](s, d) }}
}

// On returns the hook for other operations, for example DELETE for a hook that blocks deletions.
func (h Hook) On(ops ...admissionregistrationv1.OperationType) Hook {
	h.Operations = ops
	return h
}

// When returns the hook for the requests that meet conditions (see MatchConditions).
func (h Hook) When(conditions ...admissionregistrationv1.MatchCondition) Hook {
	h.MatchConditions = conditions
	return h
}

// FailOpen returns the hook with failurePolicy Ignore, for checks the controller makes again: a request
// is admitted while the manager is not there to answer (its first start, next to the objects it checks).
// Its entry is named namePrefix<kind>.<group>, so that a kind may have a fail-open entry for some
// operations and a fail-closed one (the same handler) for others.
func (h Hook) FailOpen(namePrefix string) Hook {
	h.FailurePolicy = admissionregistrationv1.Ignore
	h.namePrefix = namePrefix
	return h
}

func (h Hook) failurePolicy() admissionregistrationv1.FailurePolicyType {
	if h.FailurePolicy == "" {
		return admissionregistrationv1.Fail
	}
	return h.FailurePolicy
}

func (h Hook) operations() []admissionregistrationv1.OperationType {
	if len(h.Operations) == 0 {
		return []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	}
	return h.Operations
}

func (h Hook) gvk(scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(h.object, scheme)
	if err != nil {
		return gvk, fmt.Errorf("webhook for %T: %w", h.object, err)
	}
	return gvk, nil
}

// Path returns where the hook is served, for the kind gvk.
func (h Hook) path(gvk schema.GroupVersionKind) string {
	verb := "validate"
	if h.Mutating {
		verb = "mutate"
	}
	return "/" + verb + "-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// name returns the name of the hook's configuration entry.
func (h Hook) name(gvk schema.GroupVersionKind) string {
	prefix := "validation."
	if h.Mutating {
		prefix = "default."
	}
	if h.namePrefix != "" {
		prefix = h.namePrefix
	}
	return prefix + strings.ToLower(gvk.Kind) + "." + gvk.Group
}

// resource returns the plural resource name of a kind, as controller-gen names it.
func resource(gvk schema.GroupVersionKind) string {
	return flect.Pluralize(strings.ToLower(gvk.Kind))
}

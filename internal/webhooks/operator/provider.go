package operator

import (
	"context"
	"errors"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/deletion"
	"github.com/capstan-dev/capstan/internal/operator/validation"
)

// Provider is the validating webhook of a provider kind. It refuses a creation or update whose spec
// breaks the rules of package validation (fields no manager has a flag for, probe paths managers do not
// serve, references to other namespaces, changes in debug mode), warning about what is ignored, and
// refuses to delete a provider that Clusters use, or the core provider while other providers or Clusters
// exist, naming what uses it.
type Provider[T interface {
	client.Object
	operatorv1.GenericProvider
}] struct {
	// Client reads Clusters, CRDs and providers; nil admits every deletion.
	Client client.Reader
	// Options are the operator's settings the rules depend on.
	Options validation.Options
}

// ValidateCreate refuses a spec that breaks the rules.
func (w Provider[T]) ValidateCreate(_ context.Context, p T) (admission.Warnings, error) {
	return validation.Warnings(p.GetProviderSpec()), invalid(p, validation.Spec(p.GetNamespace(), p.GetProviderSpec(), w.Options))
}

// ValidateUpdate refuses a spec that breaks the rules, and changes in debug mode. An update that leaves
// the spec as it was (metadata, finalizers) is admitted, so that a provider admitted before a rule existed
// can still be deleted.
func (w Provider[T]) ValidateUpdate(_ context.Context, old, p T) (admission.Warnings, error) {
	if reflect.DeepEqual(old.GetProviderSpec(), p.GetProviderSpec()) {
		return nil, nil
	}
	errs := validation.Spec(p.GetNamespace(), p.GetProviderSpec(), w.Options)
	errs = append(errs, validation.Update(old.GetProviderSpec(), p.GetProviderSpec())...)
	return validation.Warnings(p.GetProviderSpec()), invalid(p, errs)
}

func invalid(p operatorv1.GenericProvider, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	gr := groupResource(p)
	return apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: kindOf(p)}, p.GetName(), errs)
}

func kindOf(p operatorv1.GenericProvider) string {
	if k, err := operatorv1.KindFor(p.ProviderType()); err == nil {
		return k.Name
	}
	return string(p.ProviderType())
}

// ValidateDelete refuses to delete a provider in use (deletion.Check).
func (w Provider[T]) ValidateDelete(ctx context.Context, p T) (admission.Warnings, error) {
	if w.Client == nil {
		return nil, nil
	}
	err := deletion.Check(ctx, w.Client, p)
	if err == nil {
		return nil, nil
	}
	if blocked, ok := deletion.IsBlocked(err); ok {
		return nil, apierrors.NewForbidden(groupResource(p), p.GetName(), errors.New(blocked.Message))
	}
	return nil, apierrors.NewInternalError(err)
}

// groupResource returns the resource of the provider's kind, for example
// infrastructureproviders.operator.cluster.x-k8s.io.
func groupResource(p operatorv1.GenericProvider) schema.GroupResource {
	return schema.GroupResource{Group: operatorv1.GroupVersion.Group, Resource: strings.ToLower(kindOf(p)) + "s"}
}

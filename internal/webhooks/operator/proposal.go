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

	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/deletion"
	"github.com/capstan-dev/capstan/internal/operator/proposal"
	"github.com/capstan-dev/capstan/internal/operator/validation"
)

// ProposalProvider is the validating webhook of a kind of the operator proposal's
// management.cluster.x-k8s.io/v1alpha1 API: it makes Provider's checks on the v1alpha2 spec the object is
// translated into (and refuses what cannot be translated), and refuses deleting a provider in use.
type ProposalProvider[T interface {
	client.Object
	managementv1.Provider
}] struct {
	// Client reads Clusters, CRDs and providers; nil admits every deletion.
	Client client.Reader
	// Options are the operator's settings the rules depend on.
	Options validation.Options
}

// translated returns the v1alpha2 spec of p, and what cannot be translated.
func translated(p managementv1.Provider) (*operatorv1.ProviderSpec, field.ErrorList) {
	spec, err := proposal.Spec(p.GetProviderSpec())
	if err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return nil, field.ErrorList{fe}
		}
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
	}
	return spec, nil
}

// ValidateCreate refuses a spec that cannot be translated, or whose translation breaks the rules.
func (w ProposalProvider[T]) ValidateCreate(_ context.Context, p T) (admission.Warnings, error) {
	spec, errs := translated(p)
	if len(errs) > 0 {
		return nil, proposalInvalid(p, errs)
	}
	return validation.Warnings(spec), proposalInvalid(p, validation.Spec(p.GetNamespace(), spec, w.Options))
}

// ValidateUpdate refuses what ValidateCreate does, and changes in debug mode.
func (w ProposalProvider[T]) ValidateUpdate(_ context.Context, old, p T) (admission.Warnings, error) {
	if reflect.DeepEqual(old.GetProviderSpec(), p.GetProviderSpec()) {
		return nil, nil
	}
	spec, errs := translated(p)
	if len(errs) > 0 {
		return nil, proposalInvalid(p, errs)
	}
	errs = validation.Spec(p.GetNamespace(), spec, w.Options)
	if oldSpec, oldErrs := translated(old); len(oldErrs) == 0 {
		errs = append(errs, validation.Update(oldSpec, spec)...)
	}
	return validation.Warnings(spec), proposalInvalid(p, errs)
}

// ValidateDelete refuses to delete a provider in use, as Provider does for the v1alpha2 object.
func (w ProposalProvider[T]) ValidateDelete(ctx context.Context, p T) (admission.Warnings, error) {
	if w.Client == nil {
		return nil, nil
	}
	kind, err := operatorv1.KindFor(p.ProviderType())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	target := kind.New()
	target.SetNamespace(p.GetNamespace())
	target.SetName(p.GetName())
	err = deletion.Check(ctx, w.Client, target)
	if err == nil {
		return nil, nil
	}
	if blocked, ok := deletion.IsBlocked(err); ok {
		return nil, apierrors.NewForbidden(proposalResource(p), p.GetName(), errors.New(blocked.Message))
	}
	return nil, apierrors.NewInternalError(err)
}

func proposalInvalid(p managementv1.Provider, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: managementv1.GroupVersion.Group, Kind: proposalKind(p)}, p.GetName(), errs)
}

func proposalKind(p managementv1.Provider) string {
	for _, k := range managementv1.Kinds() {
		if k.Type == p.ProviderType() {
			return k.Name
		}
	}
	return string(p.ProviderType())
}

func proposalResource(p managementv1.Provider) schema.GroupResource {
	return schema.GroupResource{Group: managementv1.GroupVersion.Group, Resource: strings.ToLower(proposalKind(p)) + "s"}
}

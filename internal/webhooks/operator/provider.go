package operator

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/operator/deletion"
)

// Provider is the validating webhook of a provider kind. It admits every creation and update (the CRD
// schema and the controller's preflight checks validate them) and refuses to delete a provider that
// Clusters use, or the core provider while other providers or Clusters exist, naming what uses it.
type Provider[T interface {
	client.Object
	operatorv1.GenericProvider
}] struct {
	// Client reads Clusters, CRDs and providers; nil admits every deletion.
	Client client.Reader
}

// ValidateCreate admits the provider.
func (Provider[T]) ValidateCreate(context.Context, T) (admission.Warnings, error) { return nil, nil }

// ValidateUpdate admits the change.
func (Provider[T]) ValidateUpdate(context.Context, T, T) (admission.Warnings, error) { return nil, nil }

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
	kind := string(p.ProviderType())
	if k, err := operatorv1.KindFor(p.ProviderType()); err == nil {
		kind = k.Name
	}
	return schema.GroupResource{Group: operatorv1.GroupVersion.Group, Resource: strings.ToLower(kind) + "s"}
}

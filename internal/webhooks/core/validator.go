package core

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// fieldValidator validates the objects of a kind whose checks read nothing but the object: a new and a
// changed object alike, refused with the API's Invalid error when validate finds errors. It accepts every
// deletion.
type fieldValidator[T client.Object] struct {
	kind     string
	validate func(T) field.ErrorList
}

// ValidateCreate validates a new object.
func (v fieldValidator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, invalid(v.kind, obj.GetName(), v.validate(obj))
}

// ValidateUpdate validates a changed object.
func (v fieldValidator[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return nil, invalid(v.kind, obj.GetName(), v.validate(obj))
}

// ValidateDelete accepts every deletion.
func (fieldValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

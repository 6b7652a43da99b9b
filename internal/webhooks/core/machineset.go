package core

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// MachineSet validates MachineSets.
type MachineSet struct{}

// ValidateCreate validates a new MachineSet.
func (MachineSet) ValidateCreate(_ context.Context, ms *clusterv1.MachineSet) (admission.Warnings, error) {
	return nil, invalid("MachineSet", ms.Name, validateMachineSet(ms))
}

// ValidateUpdate validates a changed MachineSet.
func (MachineSet) ValidateUpdate(_ context.Context, _, ms *clusterv1.MachineSet) (admission.Warnings, error) {
	return nil, invalid("MachineSet", ms.Name, validateMachineSet(ms))
}

// ValidateDelete accepts every deletion.
func (MachineSet) ValidateDelete(context.Context, *clusterv1.MachineSet) (admission.Warnings, error) {
	return nil, nil
}

func validateMachineSet(ms *clusterv1.MachineSet) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSelector(ms.Spec.ClusterName, &ms.Spec.Selector, ms.Spec.Template.Labels, spec)...)
	errs = append(errs, validateNamingStrategy(ms.Spec.MachineNamingStrategy, spec.Child("machineNamingStrategy"))...)
	errs = append(errs, validateTemplateMetadata(ms.Spec.Template.ObjectMeta, spec.Child("template", "metadata"))...)
	return errs
}

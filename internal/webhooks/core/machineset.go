package core

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func validateMachineSet(ms *clusterv1.MachineSet) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSelector(ms.Spec.ClusterName, &ms.Spec.Selector, ms.Spec.Template.Labels, spec)...)
	errs = append(errs, validateNamingStrategy(ms.Spec.MachineNamingStrategy, spec.Child("machineNamingStrategy"))...)
	errs = append(errs, validateTemplateMetadata(ms.Spec.Template.ObjectMeta, spec.Child("template", "metadata"))...)
	return errs
}

package core

import (
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func validateMachineDeployment(md *clusterv1.MachineDeployment) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	// The name is a label value of every MachineSet and Machine of the MachineDeployment.
	for _, msg := range validation.IsValidLabelValue(md.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), md.Name, "must be a valid label value: "+msg))
	}
	errs = append(errs, validateSelector(md.Spec.ClusterName, &md.Spec.Selector, md.Spec.Template.Labels, spec)...)
	if s := md.Spec.Strategy; s != nil {
		total := 1
		if md.Spec.Replicas != nil {
			total = int(*md.Spec.Replicas)
		}
		if ru := s.RollingUpdate; ru != nil {
			errs = append(errs, validateIntOrPercent(ru.MaxSurge, total, spec.Child("strategy", "rollingUpdate", "maxSurge"))...)
			errs = append(errs, validateIntOrPercent(ru.MaxUnavailable, total, spec.Child("strategy", "rollingUpdate", "maxUnavailable"))...)
		}
		if r := s.Remediation; r != nil {
			errs = append(errs, validateIntOrPercent(r.MaxInFlight, total, spec.Child("strategy", "remediation", "maxInFlight"))...)
		}
	}
	errs = append(errs, validateNamingStrategy(md.Spec.MachineNamingStrategy, spec.Child("machineNamingStrategy"))...)
	errs = append(errs, validateTemplateMetadata(md.Spec.Template.ObjectMeta, spec.Child("template", "metadata"))...)
	return errs
}

// validateSelector checks that a selector parses and matches the template's labels, with the label
// cluster.x-k8s.io/cluster-name that the controllers add to both (as upstream's defaulting webhook does).
func validateSelector(clusterName string, selector *metav1.LabelSelector, templateLabels map[string]string, spec *field.Path) field.ErrorList {
	effective := selector.DeepCopy()
	if effective.MatchLabels == nil {
		effective.MatchLabels = map[string]string{}
	}
	effective.MatchLabels[clusterv1.ClusterNameLabel] = clusterName
	sel, err := metav1.LabelSelectorAsSelector(effective)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("selector"), selector, err.Error())}
	}
	withCluster := maps.Clone(templateLabels)
	if withCluster == nil {
		withCluster = map[string]string{}
	}
	withCluster[clusterv1.ClusterNameLabel] = clusterName
	if sel.Matches(labels.Set(withCluster)) {
		return nil
	}
	return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), templateLabels,
		fmt.Sprintf("must match spec.selector %q: add the labels the selector requires to spec.template.metadata.labels, or change spec.selector", sel.String()))}
}

func validateIntOrPercent(v *intstr.IntOrString, total int, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if _, err := intstr.GetScaledValueFromIntOrPercent(v, total, true); err != nil {
		return field.ErrorList{field.Invalid(path, v.String(), "must be an integer or a percentage such as 25%: "+err.Error())}
	}
	return nil
}

// validateNamingStrategy checks that generated Machine names get a random part.
func validateNamingStrategy(s *clusterv1.MachineNamingStrategy, path *field.Path) field.ErrorList {
	if s == nil || s.Template == "" || strings.Contains(s.Template, "{{ .random }}") {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child("template"), s.Template, "invalid template, {{ .random }} is missing: every Machine name needs it to be unique")}
}

// validateTemplateMetadata checks the labels and annotations that the Machines will carry.
func validateTemplateMetadata(meta clusterv1.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, v := range meta.Labels {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Child("labels"), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Child("labels").Key(k), v, msg))
		}
	}
	for k := range meta.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations"), k, msg))
		}
	}
	return errs
}

// invalid returns the API's Invalid error for errs, or nil when there are none.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(clusterv1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}

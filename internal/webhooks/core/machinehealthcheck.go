package core

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// minNodeStartupTimeout is the shortest nodeStartupTimeout upstream accepts (0 disables the check).
const minNodeStartupTimeout = 30 * time.Second

// validateMachineHealthCheck checks the fields upstream validates in its webhook. (An empty selector and a
// change of clusterName are refused by the CRD's CEL rules.)
func validateMachineHealthCheck(mhc *clusterv1.MachineHealthCheck) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if _, err := metav1.LabelSelectorAsSelector(&mhc.Spec.Selector); err != nil {
		errs = append(errs, field.Invalid(spec.Child("selector"), mhc.Spec.Selector, err.Error()))
	}
	if name, ok := mhc.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel]; ok && name != mhc.Spec.ClusterName {
		errs = append(errs, field.Invalid(spec.Child("selector", "matchLabels").Key(clusterv1.ClusterNameLabel), name,
			"cannot specify a cluster selector other than the one specified by ClusterName ("+mhc.Spec.ClusterName+"): remove the label from the selector or make it match spec.clusterName"))
	}
	if t := mhc.Spec.NodeStartupTimeout; t != nil && t.Duration != 0 && t.Duration < minNodeStartupTimeout {
		errs = append(errs, field.Invalid(spec.Child("nodeStartupTimeout"), t.Duration.String(), "must be at least 30s, or 0 to disable the check"))
	}
	if m := mhc.Spec.MaxUnhealthy; m != nil {
		if _, err := intstr.GetScaledValueFromIntOrPercent(m, 0, false); err != nil {
			errs = append(errs, field.Invalid(spec.Child("maxUnhealthy"), m.String(), "must be an integer or a percentage such as 40%: "+err.Error()))
		}
	}
	if ref := mhc.Spec.RemediationTemplate; ref != nil && ref.Namespace != "" && ref.Namespace != mhc.Namespace {
		errs = append(errs, field.Invalid(spec.Child("remediationTemplate", "namespace"), ref.Namespace,
			"must match metadata.namespace ("+mhc.Namespace+"): a MachineHealthCheck can only use a remediation template of its own namespace"))
	}
	return errs
}

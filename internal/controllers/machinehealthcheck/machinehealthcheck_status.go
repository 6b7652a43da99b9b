package machinehealthcheck

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// defaultMaxUnhealthy is upstream's webhook default of spec.maxUnhealthy.
var defaultMaxUnhealthy = intstr.FromString("100%")

// minNodeStartupTimeout is the shortest nodeStartupTimeout upstream's webhook accepts (0 disables it).
const minNodeStartupTimeout = 30 * time.Second

// remediation is whether remediation may go on, computed from the counts of the status.
type remediation struct {
	allowed bool
	// remaining is how many more Machines may become unhealthy (status.remediationsAllowed).
	remaining int32
	// message says why remediation is not allowed.
	message string
}

// allowRemediation applies maxUnhealthy (100% when empty), or unhealthyRange when set, to the unhealthy
// Machines: those of the expected ones that are not counted healthy.
func allowRemediation(mhc *clusterv1.MachineHealthCheck, expected, healthy int) (remediation, error) {
	unhealthyCount := expected - healthy
	if r := mhc.Spec.UnhealthyRange; r != nil {
		lo, hi, err := parseUnhealthyRange(*r)
		if err != nil {
			return remediation{}, err
		}
		if unhealthyCount < lo || unhealthyCount > hi {
			return remediation{message: fmt.Sprintf("Remediation is not allowed, the number of not started or unhealthy machines does not fall within the range (total: %d, unhealthy: %d, unhealthyRange: %s)",
				expected, unhealthyCount, *r)}, nil
		}
		return remediation{allowed: true, remaining: int32(hi - unhealthyCount)}, nil
	}
	maxUnhealthy := maxUnhealthyOf(mhc)
	limit, err := intstr.GetScaledValueFromIntOrPercent(&maxUnhealthy, expected, false)
	if err != nil {
		return remediation{}, fmt.Errorf("spec.maxUnhealthy is invalid: %w", err)
	}
	if unhealthyCount > limit {
		return remediation{message: fmt.Sprintf("Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: %d, unhealthy: %d, maxUnhealthy: %s)",
			expected, unhealthyCount, maxUnhealthy.String())}, nil
	}
	return remediation{allowed: true, remaining: int32(limit - unhealthyCount)}, nil
}

func maxUnhealthyOf(mhc *clusterv1.MachineHealthCheck) intstr.IntOrString {
	if mhc.Spec.MaxUnhealthy != nil {
		return *mhc.Spec.MaxUnhealthy
	}
	return defaultMaxUnhealthy
}

// parseUnhealthyRange reads "[min-max]" (the schema checks the form).
func parseUnhealthyRange(r string) (int, int, error) {
	inner := strings.TrimSuffix(strings.TrimPrefix(r, "["), "]")
	loText, hiText, ok := strings.Cut(inner, "-")
	lo, errLo := strconv.ParseUint(loText, 10, 31)
	hi, errHi := strconv.ParseUint(hiText, 10, 31)
	if !ok || errLo != nil || errHi != nil {
		return 0, 0, fmt.Errorf("spec.unhealthyRange %q is not of the form [min-max]", r)
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("spec.unhealthyRange %q: max value %d cannot be less than min value %d", r, hi, lo)
	}
	return int(lo), int(hi), nil
}

// validate returns what upstream's admission webhook would refuse in the spec, or nil: capstan checks it
// here and reports it in the RemediationAllowed condition.
func validate(mhc *clusterv1.MachineHealthCheck) error {
	var errs []error
	if _, err := metav1.LabelSelectorAsSelector(&mhc.Spec.Selector); err != nil {
		errs = append(errs, fmt.Errorf("spec.selector is invalid: %w", err))
	}
	if r := mhc.Spec.UnhealthyRange; r != nil {
		if _, _, err := parseUnhealthyRange(*r); err != nil {
			errs = append(errs, err)
		}
	}
	if m := mhc.Spec.MaxUnhealthy; m != nil {
		if _, err := intstr.GetScaledValueFromIntOrPercent(m, 0, false); err != nil {
			errs = append(errs, fmt.Errorf("spec.maxUnhealthy is invalid: %w", err))
		} else if m.Type == intstr.Int && m.IntVal < 0 {
			errs = append(errs, errors.New("spec.maxUnhealthy must not be negative"))
		}
	}
	if t := mhc.Spec.NodeStartupTimeout; t != nil && t.Duration != 0 && t.Duration < minNodeStartupTimeout {
		errs = append(errs, fmt.Errorf("spec.nodeStartupTimeout must be at least %s, or 0 to disable it", minNodeStartupTimeout))
	}
	for i, c := range mhc.Spec.UnhealthyConditions {
		if c.Timeout.Duration < 0 {
			errs = append(errs, fmt.Errorf("spec.unhealthyConditions[%d].timeout must not be negative", i))
		}
	}
	return errors.Join(errs...)
}

// setCounts sets expectedMachines, currentHealthy and targets (sorted).
func setCounts(mhc *clusterv1.MachineHealthCheck, targets []*target, healthy int) {
	mhc.Status.ExpectedMachines = int32(len(targets))
	mhc.Status.CurrentHealthy = int32(healthy)
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.machine.Name)
	}
	slices.Sort(names)
	mhc.Status.Targets = names
}

// setRemediationAllowed sets status.remediationsAllowed and the RemediationAllowed conditions.
func setRemediationAllowed(mhc *clusterv1.MachineHealthCheck, r remediation) {
	if r.allowed {
		mhc.Status.RemediationsAllowed = max(r.remaining, 0)
		conditions.MarkTrue(mhc, clusterv1.RemediationAllowedCondition)
		conditions.SetV1Beta2(mhc, metav1.Condition{Type: clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Condition,
			Status: metav1.ConditionTrue, Reason: clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Reason})
		return
	}
	mhc.Status.RemediationsAllowed = 0
	conditions.Set(mhc, clusterv1.Condition{Type: clusterv1.RemediationAllowedCondition, Status: corev1.ConditionFalse,
		Severity: clusterv1.ConditionSeverityWarning, Reason: clusterv1.TooManyUnhealthyReason, Message: r.message})
	conditions.SetV1Beta2(mhc, metav1.Condition{Type: clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Condition,
		Status: metav1.ConditionFalse, Reason: clusterv1.MachineHealthCheckTooManyUnhealthyV1Beta2Reason, Message: r.message})
}

// setInvalid says in the RemediationAllowed conditions that the spec cannot work.
func setInvalid(mhc *clusterv1.MachineHealthCheck, err error) {
	msg := conditions.Capitalise(err.Error())
	mhc.Status.RemediationsAllowed = 0
	conditions.Set(mhc, clusterv1.Condition{Type: clusterv1.RemediationAllowedCondition, Status: corev1.ConditionFalse,
		Severity: clusterv1.ConditionSeverityError, Reason: invalidConfigurationReason, Message: msg})
	conditions.SetV1Beta2(mhc, metav1.Condition{Type: clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Condition,
		Status: metav1.ConditionFalse, Reason: invalidConfigurationReason, Message: msg})
}

// invalidConfigurationReason is capstan's: upstream's webhook refuses such a spec at admission.
const invalidConfigurationReason = "InvalidConfiguration"

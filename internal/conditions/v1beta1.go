package conditions

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Getter is an object with v1beta1 conditions.
type Getter interface {
	GetConditions() clusterv1.Conditions
}

// Setter is an object whose v1beta1 conditions can be set.
type Setter interface {
	Getter
	SetConditions(clusterv1.Conditions)
}

// now is the clock of lastTransitionTime, in seconds as the API server stores them; tests replace it.
var now = func() metav1.Time { return metav1.NewTime(time.Now().UTC().Truncate(time.Second)) }

// Get returns the condition of a type, or nil.
func Get(from Getter, t clusterv1.ConditionType) *clusterv1.Condition {
	for i, c := range from.GetConditions() {
		if c.Type == t {
			return &from.GetConditions()[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition exists and is True.
func IsTrue(from Getter, t clusterv1.ConditionType) bool {
	c := Get(from, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsFalse reports whether the condition exists and is False.
func IsFalse(from Getter, t clusterv1.ConditionType) bool {
	c := Get(from, t)
	return c != nil && c.Status == corev1.ConditionFalse
}

// Set adds or replaces a condition. lastTransitionTime is kept when the status does not change, so that
// setting the same condition twice leaves the object unchanged. Conditions are kept sorted: Ready first,
// then by type.
func Set(to Setter, c clusterv1.Condition) {
	list := to.GetConditions()
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now()
	}
	replaced := false
	for i := range list {
		if list[i].Type != c.Type {
			continue
		}
		if list[i].Status == c.Status {
			c.LastTransitionTime = list[i].LastTransitionTime
		}
		list[i] = c
		replaced = true
	}
	if !replaced {
		list = append(list, c)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if (list[i].Type == clusterv1.ReadyCondition) != (list[j].Type == clusterv1.ReadyCondition) {
			return list[i].Type == clusterv1.ReadyCondition
		}
		return list[i].Type < list[j].Type
	})
	to.SetConditions(list)
}

// MarkTrue sets a condition to True.
func MarkTrue(to Setter, t clusterv1.ConditionType) {
	Set(to, clusterv1.Condition{Type: t, Status: corev1.ConditionTrue})
}

// MarkFalse sets a condition to False with a reason, severity and message.
func MarkFalse(to Setter, t clusterv1.ConditionType, reason string, severity clusterv1.ConditionSeverity, format string, args ...any) {
	Set(to, clusterv1.Condition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Severity: severity, Message: fmt.Sprintf(format, args...)})
}

// MarkUnknown sets a condition to Unknown with a reason and message.
func MarkUnknown(to Setter, t clusterv1.ConditionType, reason, format string, args ...any) {
	Set(to, clusterv1.Condition{Type: t, Status: corev1.ConditionUnknown, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// Delete removes a condition.
func Delete(to Setter, t clusterv1.ConditionType) {
	list := to.GetConditions()
	out := list[:0]
	for _, c := range list {
		if c.Type != t {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	to.SetConditions(out)
}

// SetSummary sets the Ready condition from the given conditions (or, when none are given, from every other
// condition of the object): False with the reason and message of the most severe False condition, Unknown
// when none is False but one is Unknown, True otherwise. Conditions that are not set are ignored; when none
// of them is set, Ready is left as it is (as upstream's summary, which has nothing to merge): a Cluster
// whose topology has not yet given it an InfraCluster or a control plane is not Ready True.
func SetSummary(to Setter, types ...clusterv1.ConditionType) {
	var considered []clusterv1.Condition
	for _, c := range to.GetConditions() {
		if c.Type == clusterv1.ReadyCondition {
			continue
		}
		if len(types) == 0 || containsType(types, c.Type) {
			considered = append(considered, c)
		}
	}
	if len(considered) == 0 {
		return
	}
	Set(to, summary(considered, types))
}

func containsType(types []clusterv1.ConditionType, t clusterv1.ConditionType) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// SeverityRank orders the severities of v1beta1 conditions: Error above Warning above Info above none.
func SeverityRank(s clusterv1.ConditionSeverity) int {
	switch s {
	case clusterv1.ConditionSeverityError:
		return 3
	case clusterv1.ConditionSeverityWarning:
		return 2
	case clusterv1.ConditionSeverityInfo:
		return 1
	default:
		return 0
	}
}

func summary(considered []clusterv1.Condition, order []clusterv1.ConditionType) clusterv1.Condition {
	// Follow the caller's order so that, among equally severe conditions, the earliest step is reported.
	if len(order) > 0 {
		sort.SliceStable(considered, func(i, j int) bool {
			return indexOf(order, considered[i].Type) < indexOf(order, considered[j].Type)
		})
	}
	var worst *clusterv1.Condition
	for i := range considered {
		c := &considered[i]
		if c.Status != corev1.ConditionFalse {
			continue
		}
		if worst == nil || SeverityRank(c.Severity) > SeverityRank(worst.Severity) {
			worst = c
		}
	}
	if worst != nil {
		return clusterv1.Condition{Type: clusterv1.ReadyCondition, Status: corev1.ConditionFalse,
			Reason: worst.Reason, Severity: worst.Severity, Message: worst.Message}
	}
	for _, c := range considered {
		if c.Status == corev1.ConditionUnknown {
			return clusterv1.Condition{Type: clusterv1.ReadyCondition, Status: corev1.ConditionUnknown, Reason: c.Reason, Message: c.Message}
		}
	}
	return clusterv1.Condition{Type: clusterv1.ReadyCondition, Status: corev1.ConditionTrue}
}

func indexOf(types []clusterv1.ConditionType, t clusterv1.ConditionType) int {
	for i, x := range types {
		if x == t {
			return i
		}
	}
	return len(types)
}

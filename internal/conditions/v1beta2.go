package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// V1Beta2Getter is an object with v1beta2 conditions.
type V1Beta2Getter interface {
	GetV1Beta2Conditions() []metav1.Condition
}

// V1Beta2Setter is an object whose v1beta2 conditions can be set.
type V1Beta2Setter interface {
	V1Beta2Getter
	SetV1Beta2Conditions([]metav1.Condition)
}

// SetV1Beta2 adds or replaces a v1beta2 condition, keeping lastTransitionTime unless the status changes.
// observedGeneration is set from the object when it has one.
func SetV1Beta2(to V1Beta2Setter, c metav1.Condition) {
	list := to.GetV1Beta2Conditions()
	if g, ok := to.(interface{ GetGeneration() int64 }); ok && c.ObservedGeneration == 0 {
		c.ObservedGeneration = g.GetGeneration()
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now()
	}
	meta.SetStatusCondition(&list, c)
	to.SetV1Beta2Conditions(list)
}

// GetV1Beta2 returns the v1beta2 condition of a type, or nil.
func GetV1Beta2(from V1Beta2Getter, t string) *metav1.Condition {
	return meta.FindStatusCondition(from.GetV1Beta2Conditions(), t)
}

// IsV1Beta2True reports whether the v1beta2 condition exists and is True.
func IsV1Beta2True(from V1Beta2Getter, t string) bool {
	return meta.IsStatusConditionTrue(from.GetV1Beta2Conditions(), t)
}

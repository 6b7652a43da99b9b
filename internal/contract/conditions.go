package contract

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition is a condition read from a provider object, whichever condition type the provider uses
// (Cluster API v1beta1 conditions, metav1.Condition or its own): type, status, and when present reason,
// message, severity and lastTransitionTime.
type Condition struct {
	Type               string
	Status             corev1.ConditionStatus
	Reason             string
	Message            string
	Severity           string
	LastTransitionTime metav1.Time
}

// GetCondition returns the condition of the given type from a provider object, or nil when there is none.
// It looks in status.conditions first, then in status.v1beta2.conditions, where v1beta1-contract providers
// that preview the v1beta2 conditions keep them.
func GetCondition(obj *unstructured.Unstructured, conditionType string) (*Condition, error) {
	for _, p := range []Path{{"status", "conditions"}, {"status", "v1beta2", "conditions"}} {
		list, found, err := unstructured.NestedSlice(obj.Object, p...)
		if err != nil {
			return nil, fmt.Errorf("reading %s of %s %s: %w", p, obj.GetKind(), obj.GetName(), err)
		}
		if !found {
			continue
		}
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok || m["type"] != conditionType {
				continue
			}
			c := &Condition{Type: conditionType}
			status, _ := m["status"].(string)
			c.Status = corev1.ConditionStatus(status)
			c.Reason, _ = m["reason"].(string)
			c.Message, _ = m["message"].(string)
			c.Severity, _ = m["severity"].(string)
			if ts, ok := m["lastTransitionTime"].(string); ok {
				if t, err := time.Parse(time.RFC3339, ts); err == nil {
					c.LastTransitionTime = metav1.NewTime(t)
				}
			}
			switch c.Status {
			case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
			default:
				return nil, fmt.Errorf("reading condition %s of %s %s: status %q is not True, False or Unknown", conditionType, obj.GetKind(), obj.GetName(), status)
			}
			return c, nil
		}
	}
	return nil, nil
}

// GetV1Beta2Condition returns the condition of the given type as a v1beta2 condition mirrors it: from
// status.v1beta2.conditions first, where v1beta1-contract providers preview their v1beta2 conditions, then
// as GetCondition finds it.
func GetV1Beta2Condition(obj *unstructured.Unstructured, conditionType string) (*Condition, error) {
	if list, found, _ := unstructured.NestedSlice(obj.Object, "status", "v1beta2", "conditions"); found {
		preview := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
		preview.SetGroupVersionKind(obj.GroupVersionKind())
		preview.SetName(obj.GetName())
		if c, err := GetCondition(preview, conditionType); err != nil || c != nil {
			return c, err
		}
	}
	return GetCondition(obj, conditionType)
}

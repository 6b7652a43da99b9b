package tree

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The condition types the v1beta2 layout shows on an object's row.
const (
	availableCondition = "Available"
	readyCondition     = "Ready"
	upToDateCondition  = "UpToDate"
)

// negativePolarity are the condition types whose True status is the unusual, noteworthy one: they are
// painted red when True and green when False.
var negativePolarity = map[string]bool{
	"Paused": true, "Deleting": true, "RollingOut": true, "ScalingUp": true, "ScalingDown": true,
	"Remediating": true, "MachineUpdating": true,
}

// Condition is a condition of an object, from either its v1beta1 conditions (which have a severity) or its
// v1beta2 ones.
type Condition struct {
	Type               string
	Status             string
	Severity           string
	Reason             string
	Message            string
	LastTransitionTime time.Time
}

func (c *Condition) isTrue() bool { return c != nil && c.Status == string(metav1.ConditionTrue) }

// sameStatusAndReason reports whether two v1beta2 conditions, either possibly missing, say the same thing.
func sameStatusAndReason(a, b *Condition) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Status == b.Status && a.Reason == b.Reason
}

// sameStatusSeverityAndReason is sameStatusAndReason for v1beta1 conditions, which also have a severity.
func sameStatusSeverityAndReason(a, b *Condition) bool {
	return sameStatusAndReason(a, b) && (a == nil || a.Severity == b.Severity)
}

// isZero reports whether a condition states only the normal case (True for most types, False for
// negative-polarity ones) without a message: --show-conditions KIND+ leaves those out.
func (c *Condition) isZero() bool {
	normal := string(metav1.ConditionTrue)
	if negativePolarity[c.Type] {
		normal = string(metav1.ConditionFalse)
	}
	return c.Status == normal && c.Message == ""
}

func find(list []Condition, conditionType string) *Condition {
	for i := range list {
		if list[i].Type == conditionType {
			c := list[i]
			return &c
		}
	}
	return nil
}

// v1beta2Conditions returns the v1beta2 conditions of an object: those of Cluster API's own types, and for
// provider objects status.v1beta2.conditions (v1beta1-contract providers that report v1beta2 conditions)
// or else status.conditions.
func v1beta2Conditions(obj any) []Condition {
	switch o := obj.(type) {
	case interface{ GetV1Beta2Conditions() []metav1.Condition }:
		var out []Condition
		for _, c := range o.GetV1Beta2Conditions() {
			out = append(out, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
				LastTransitionTime: c.LastTransitionTime.Time})
		}
		return out
	case *unstructured.Unstructured:
		if list, found, _ := unstructured.NestedSlice(o.Object, "status", "v1beta2", "conditions"); found {
			return fromUnstructured(list, false)
		}
		list, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		return fromUnstructured(list, false)
	}
	return nil
}

// v1beta1Conditions returns the v1beta1 conditions of an object (status.conditions).
func v1beta1Conditions(obj any) []Condition {
	switch o := obj.(type) {
	case interface{ GetConditions() clusterv1.Conditions }:
		var out []Condition
		for _, c := range o.GetConditions() {
			out = append(out, Condition{Type: string(c.Type), Status: string(c.Status), Severity: string(c.Severity),
				Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime.Time})
		}
		return out
	case *unstructured.Unstructured:
		list, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		return fromUnstructured(list, true)
	}
	return nil
}

// fromUnstructured reads a list of conditions; items that are not conditions are skipped.
func fromUnstructured(list []any, withSeverity bool) []Condition {
	var out []Condition
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		if c.Type == "" || c.Status == "" {
			continue
		}
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		if withSeverity {
			c.Severity, _ = m["severity"].(string)
		}
		if s, ok := m["lastTransitionTime"].(string); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				c.LastTransitionTime = t
			}
		}
		out = append(out, c)
	}
	return out
}

package conditions

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

const (
	// MaxV1Beta1MessageLength is the longest message of a v1beta1 condition the CRDs accept.
	MaxV1Beta1MessageLength = 10240
	// MaxV1Beta2MessageLength is the longest message of a v1beta2 condition (metav1.Condition).
	MaxV1Beta2MessageLength = 32768
)

// MirrorOptions say what of a provider object's condition a mirrored condition keeps besides its status,
// reason and message.
type MirrorOptions struct {
	// KeepTransitionTime copies the provider's lastTransitionTime when the mirrored status changes;
	// otherwise the transition is dated when it is seen.
	KeepTransitionTime bool
	// KeepSeverity (v1beta1) copies the provider's severity of a condition that is not True; otherwise a
	// True or Unknown condition has none and a False one at least Info.
	KeepSeverity bool
}

// ReadyFallbackV1Beta1 is the v1beta1 condition a mirror falls back to when the provider object reports
// no condition: True when it is ready, else False with reason and severity Info.
func ReadyFallbackV1Beta1(ready bool, reason string) clusterv1.Condition {
	if ready {
		return clusterv1.Condition{Status: corev1.ConditionTrue}
	}
	return clusterv1.Condition{Status: corev1.ConditionFalse, Reason: reason, Severity: clusterv1.ConditionSeverityInfo}
}

// MirrorV1Beta1 sets the v1beta1 condition t of to from src, a provider object's condition, or to fallback
// when src is nil. The message is cut to what the CRDs accept.
func MirrorV1Beta1(to Setter, t clusterv1.ConditionType, src *contract.Condition, fallback clusterv1.Condition, o MirrorOptions) {
	if src == nil {
		fallback.Type = t
		Set(to, fallback)
		return
	}
	c := clusterv1.Condition{Type: t, Status: src.Status, Reason: src.Reason, Message: Truncate(src.Message, MaxV1Beta1MessageLength)}
	if o.KeepTransitionTime {
		c.LastTransitionTime = src.LastTransitionTime
	}
	switch {
	case o.KeepSeverity:
		if src.Status != corev1.ConditionTrue {
			c.Severity = clusterv1.ConditionSeverity(src.Severity)
		}
	case src.Status == corev1.ConditionFalse:
		c.Severity = clusterv1.ConditionSeverity(src.Severity)
		if c.Severity == clusterv1.ConditionSeverityNone {
			c.Severity = clusterv1.ConditionSeverityInfo
		}
	}
	Set(to, c)
}

// MirrorReadyV1Beta1 sets the v1beta1 condition t of to from the Ready condition of obj, a provider object,
// or, when it reports none or its conditions cannot be read, from ReadyFallbackV1Beta1(ready,
// fallbackReason).
func MirrorReadyV1Beta1(to Setter, t clusterv1.ConditionType, obj *unstructured.Unstructured, ready bool, fallbackReason string) {
	c, err := contract.GetCondition(obj, string(clusterv1.ReadyCondition))
	if err != nil {
		c = nil
	}
	MirrorV1Beta1(to, t, c, ReadyFallbackV1Beta1(ready, fallbackReason), MirrorOptions{})
}

// ProviderReasons are the reasons of a v1beta2 condition that mirrors a provider object's Ready condition
// when the provider gives none: Ready and NotReady, and Invalid when its conditions cannot be read.
type ProviderReasons struct{ Ready, NotReady, Invalid string }

// MirrorReadyV1Beta2 sets the v1beta2 condition t of to from the Ready condition of obj, a provider object
// (status.v1beta2.conditions first, where v1beta1-contract providers preview them), or, when it reports
// none, from ready: True, or False with notReadyMessage. When its conditions cannot be read the condition
// is Unknown with reasons.Invalid.
func MirrorReadyV1Beta2(to V1Beta2Setter, t string, obj *unstructured.Unstructured, ready bool, reasons ProviderReasons, notReadyMessage string) {
	c, err := contract.GetV1Beta2Condition(obj, string(clusterv1.ReadyCondition))
	if err != nil {
		SetV1Beta2(to, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reasons.Invalid, Message: Capitalise(err.Error())})
		return
	}
	fallback := metav1.Condition{Status: metav1.ConditionTrue, Reason: reasons.Ready}
	if !ready {
		fallback = metav1.Condition{Status: metav1.ConditionFalse, Reason: reasons.NotReady, Message: notReadyMessage}
	}
	SetV1Beta2(to, MirrorV1Beta2(t, c, fallback, reasons.Ready, reasons.NotReady, MirrorOptions{}))
}

// NotReadyMessage is the message of a v1beta2 condition that mirrors a provider object of kind, following
// contract c, that has no Ready condition and is not ready: it names the field that says so, status.ready
// or, in the v1beta2 contract, v1beta2Field.
func NotReadyMessage(kind string, c contract.Version, v1beta2Field string) string {
	field := "status.ready"
	if c == contract.V1Beta2 {
		field = v1beta2Field
	}
	return fmt.Sprintf("%s %s is false", kind, field)
}

// MirrorV1Beta2 returns the v1beta2 condition t copied from src, a provider object's condition, or fallback
// when src is nil. A condition without reason (a v1beta1 condition may have none) gets trueReason when it
// is True and otherReason otherwise. The message is cut to what the CRDs accept.
func MirrorV1Beta2(t string, src *contract.Condition, fallback metav1.Condition, trueReason, otherReason string, o MirrorOptions) metav1.Condition {
	if src == nil {
		fallback.Type = t
		return fallback
	}
	c := metav1.Condition{Type: t, Status: metav1.ConditionStatus(src.Status), Reason: src.Reason, Message: Truncate(src.Message, MaxV1Beta2MessageLength)}
	if o.KeepTransitionTime {
		c.LastTransitionTime = src.LastTransitionTime
	}
	if c.Reason == "" {
		c.Reason = otherReason
		if c.Status == metav1.ConditionTrue {
			c.Reason = trueReason
		}
	}
	return c
}

// MirrorOwnV1Beta2 copies the v1beta1 condition t of obj into its v1beta2 conditions, for an object that
// computes its v1beta1 conditions and previews the v1beta2 ones: a True condition gets trueReason, one
// without reason "Unknown". Nothing is set when obj has no condition t.
func MirrorOwnV1Beta2(obj interface {
	Getter
	V1Beta2Setter
}, t clusterv1.ConditionType, trueReason string) {
	c := Get(obj, t)
	if c == nil {
		return
	}
	out := metav1.Condition{Type: string(t), Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message}
	if c.Status == corev1.ConditionTrue {
		out.Reason = trueReason
	}
	if out.Reason == "" {
		out.Reason = "Unknown"
	}
	SetV1Beta2(obj, out)
}

// Truncate cuts s to at most n bytes, on a character boundary, ending it with "..." when it is cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Capitalise makes the first letter of a condition message upper case (messages often come from errors,
// which start in lower case).
func Capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError || unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

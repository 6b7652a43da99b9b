package clusterresourceset

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonsv1 "github.com/capstan-dev/capstan/api/addons/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
)

// scope is a ClusterResourceSet and what a reconcile observed of it, from which its status is computed.
type scope struct {
	crs *addonsv1.ClusterResourceSet
	// failures are what went wrong, in order; the last one is reported, as upstream.
	failures []failure
	// applied counts the Clusters whose resources are all applied.
	applied int
}

// failure is a reason the resources are not applied, with upstream's condition reasons.
type failure struct {
	reason   string
	severity clusterv1.ConditionSeverity
	v2Reason string
	message  string
	// v2Message is the v1beta2 condition's message; message when empty.
	v2Message string
}

func (s *scope) fail(f failure) { s.failures = append(s.failures, f) }

// setStatus sets the ResourcesApplied conditions: False with the last failure, True once every selected
// Cluster has every resource applied. With no Cluster selected and nothing failing, they are left as they
// were, as upstream.
func setStatus(s *scope) {
	crs := s.crs
	if n := len(s.failures); n > 0 {
		f := s.failures[n-1]
		conditions.MarkFalse(crs, addonsv1.ResourcesAppliedCondition, f.reason, f.severity, "%s", f.message)
		message := f.v2Message
		if message == "" {
			message = conditions.Capitalise(f.message)
		}
		conditions.SetV1Beta2(crs, metav1.Condition{Type: addonsv1.ResourcesAppliedV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: f.v2Reason, Message: message, ObservedGeneration: crs.Generation})
		return
	}
	if s.applied == 0 || !crs.DeletionTimestamp.IsZero() {
		return
	}
	conditions.MarkTrue(crs, addonsv1.ResourcesAppliedCondition)
	conditions.SetV1Beta2(crs, metav1.Condition{Type: addonsv1.ResourcesAppliedV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: addonsv1.ResourcesAppliedV1beta2Reason, ObservedGeneration: crs.Generation})
}

package provider

import (
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

// setStatus computes the provider's conditions from what the reconcile learned. A condition whose phase
// did not run keeps its value.
func setStatus(s *scope) {
	st := s.provider.GetProviderStatus()
	gen := s.provider.GetGeneration()
	set := func(t string, f *fact) {
		if f == nil {
			return
		}
		status := metav1.ConditionFalse
		if f.ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: f.reason, Message: ConditionMessage(f.message), ObservedGeneration: gen,
		})
	}
	preflight := s.preflight
	if preflight != nil && preflight.ok && s.contractErr != nil {
		preflight = s.contractErr
	}
	set(operatorv1.PreflightCheckCondition, preflight)

	installed := s.installed
	switch {
	case s.fetchErr != nil:
		installed = s.fetchErr
	case s.renderErr != nil:
		installed = s.renderErr
	}
	set(operatorv1.ProviderInstalledCondition, installed)

	upgraded := s.upgraded
	if s.upgradeWait != nil {
		upgraded = s.upgradeWait
	}
	set(operatorv1.ProviderUpgradedCondition, upgraded)

	switch {
	case s.unpause != nil:
		// The unpause is refused: the provider stays paused, and says why.
		set(operatorv1.PausedCondition, &fact{ok: true, reason: s.unpause.reason, message: s.unpause.message})
	case s.paused:
		msg := "The provider's Deployments are scaled to 0 replicas; the original replicas are in the " + operatorv1.OriginalReplicasAnnotation + " annotation"
		if s.held {
			msg += "; changes to the spec other than spec.version wait until the provider is unpaused"
		}
		set(operatorv1.PausedCondition, good(operatorv1.ProviderPausedReason, msg))
	case s.deployments != nil || s.installed != nil:
		if meta.FindStatusCondition(st.Conditions, operatorv1.PausedCondition) != nil || s.provider.GetProviderSpec().Paused {
			set(operatorv1.PausedCondition, &fact{ok: false, reason: operatorv1.NotPausedReason, message: pausedMessage(s)})
		}
	}
	set(operatorv1.ReadyCondition, s.deployments)
	set(operatorv1.DeletionBlockedCondition, s.deletionBlocked)

	if s.preflight != nil && s.preflight.ok && s.fetchErr == nil && s.renderErr == nil && s.contractErr == nil &&
		s.installed != nil && s.installed.ok {
		st.ObservedGeneration = gen
	}
}

func pausedMessage(s *scope) string {
	if s.provider.GetProviderSpec().Paused {
		return "Scaling the provider's Deployments to 0 replicas"
	}
	return "The provider runs"
}

// ConditionMessage makes a condition message follow the conventions: capitalised, no trailing period.
func ConditionMessage(m string) string {
	m = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m), "."))
	if m == "" {
		return m
	}
	r := []rune(m)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

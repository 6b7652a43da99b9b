package machinehealthcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/external"
)

// remediate hands the unhealthy Machines over for remediation: with spec.remediationTemplate it creates a
// remediation request for each (named after the Machine, from the template, in the Machine's namespace);
// otherwise it sets OwnerRemediated False for the Machine's owner, unless a remediation by the owner is
// already under way (OwnerRemediated False), which the owner completes.
func (r *Reconciler) remediate(ctx context.Context, mhc *clusterv1.MachineHealthCheck, unhealthyTargets []*target) error {
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for _, t := range unhealthyTargets {
		m := t.machine
		c := conditions.Get(m, clusterv1.MachineHealthCheckSucceededCondition)
		log := log.WithValues("Machine", klog.KObj(m), "Node", klog.KRef("", t.nodeName()), "reason", c.Reason, "message", c.Message)
		switch {
		case mhc.Spec.RemediationTemplate != nil:
			created, err := r.requestExternalRemediation(ctx, mhc, m)
			if err != nil {
				errs = append(errs, err)
			} else if created {
				log.Info("Machine has failed health check, created an external remediation request")
			}
		case m.DeletionTimestamp.IsZero():
			log.Info("Machine has failed health check, marking for remediation")
			if c := conditions.Get(m, clusterv1.MachineOwnerRemediatedCondition); c == nil || c.Status == corev1.ConditionTrue {
				conditions.MarkFalse(m, clusterv1.MachineOwnerRemediatedCondition, clusterv1.WaitingForRemediationReason, clusterv1.ConditionSeverityWarning, "")
			}
			if c := conditions.GetV1Beta2(m, clusterv1.MachineOwnerRemediatedV1Beta2Condition); c == nil || c.Status == metav1.ConditionTrue {
				conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineOwnerRemediatedV1Beta2Condition, Status: metav1.ConditionFalse,
					Reason: clusterv1.MachineOwnerRemediatedWaitingForRemediationV1Beta2Reason, Message: "Waiting for remediation"})
			}
		}
		if err := r.patchMachine(ctx, t); err != nil {
			errs = append(errs, err)
			continue
		}
		r.Recorder.Eventf(m, corev1.EventTypeNormal, EventMachineMarkedUnhealthy, "Machine %s has been marked as unhealthy by %s", klog.KObj(m), klog.KObj(mhc))
	}
	return errors.Join(errs...)
}

// requestExternalRemediation creates the remediation request of a Machine from spec.remediationTemplate,
// unless it exists; it reports whether it created one.
func (r *Reconciler) requestExternalRemediation(ctx context.Context, mhc *clusterv1.MachineHealthCheck, m *clusterv1.Machine) (bool, error) {
	tpl := mhc.Spec.RemediationTemplate
	if _, err := r.getRemediationRequest(ctx, mhc, m.Name); err == nil {
		return false, nil
	} else if !apierrors.IsNotFound(err) {
		return false, err
	}
	if tpl.Namespace != "" && tpl.Namespace != mhc.Namespace {
		err := fmt.Errorf("spec.remediationTemplate names namespace %s: it must be in the MachineHealthCheck's namespace %s", tpl.Namespace, mhc.Namespace)
		conditions.MarkFalse(mhc, clusterv1.ExternalRemediationTemplateAvailableCondition, clusterv1.ExternalRemediationTemplateNotFoundReason,
			clusterv1.ConditionSeverityError, "%s", conditions.Capitalise(err.Error()))
		return false, err
	}
	owner := &metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}
	request, err := external.Generate(ctx, r.Client, external.CloneInput{
		Template: tpl, Namespace: m.Namespace, Name: m.Name, ClusterName: m.Spec.ClusterName, Owner: owner,
	})
	if err != nil {
		conditions.MarkFalse(mhc, clusterv1.ExternalRemediationTemplateAvailableCondition, clusterv1.ExternalRemediationTemplateNotFoundReason,
			clusterv1.ConditionSeverityError, "%s", conditions.Capitalise(err.Error()))
		conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineExternallyRemediatedV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason:  clusterv1.MachineExternallyRemediatedRemediationTemplateNotFoundV1Beta2Reason,
			Message: fmt.Sprintf("Error retrieving remediation template %s %s", tpl.Kind, klog.KRef(mhc.Namespace, tpl.Name))})
		return false, fmt.Errorf("reading the remediation template for Machine %s: %w", m.Name, err)
	}
	conditions.MarkTrue(mhc, clusterv1.ExternalRemediationTemplateAvailableCondition)
	if err := r.Client.Create(ctx, request); err != nil {
		conditions.MarkFalse(mhc, clusterv1.ExternalRemediationRequestAvailableCondition, clusterv1.ExternalRemediationRequestCreationFailedReason,
			clusterv1.ConditionSeverityError, "%s", conditions.Capitalise(err.Error()))
		conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineExternallyRemediatedV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineExternallyRemediatedRemediationRequestCreationFailedV1Beta2Reason, Message: conditions.InternalErrorMessage})
		return false, fmt.Errorf("creating the remediation request %s %s: %w", request.GetKind(), request.GetName(), err)
	}
	conditions.MarkTrue(mhc, clusterv1.ExternalRemediationRequestAvailableCondition)
	conditions.SetV1Beta2(m, metav1.Condition{Type: clusterv1.MachineExternallyRemediatedV1Beta2Condition, Status: metav1.ConditionFalse,
		Reason: clusterv1.MachineExternallyRemediatedWaitingForRemediationV1Beta2Reason})
	return true, nil
}

// getRemediationRequest reads the remediation request of a Machine: the template's kind without
// "Template", named after the Machine, in the MachineHealthCheck's namespace.
func (r *Reconciler) getRemediationRequest(ctx context.Context, mhc *clusterv1.MachineHealthCheck, machine string) (*unstructured.Unstructured, error) {
	tpl := mhc.Spec.RemediationTemplate
	ref := &corev1.ObjectReference{
		APIVersion: tpl.APIVersion, Kind: strings.TrimSuffix(tpl.Kind, clusterv1.TemplateSuffix), Name: machine,
	}
	return external.Get(ctx, r.Client, ref, mhc.Namespace)
}

// patchHealthy writes the conditions of healthy Machines and deletes the remediation requests left for
// them.
func (r *Reconciler) patchHealthy(ctx context.Context, mhc *clusterv1.MachineHealthCheck, healthy []*target) error {
	var errs []error
	for _, t := range healthy {
		if mhc.Spec.RemediationTemplate != nil {
			request, err := r.getRemediationRequest(ctx, mhc, t.machine.Name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				errs = append(errs, err)
				continue
			case request.GetDeletionTimestamp().IsZero():
				ctrl.LoggerFrom(ctx).Info("Machine is healthy again, deleting its remediation request", "Machine", klog.KObj(t.machine), request.GetKind(), klog.KObj(request))
				if err := r.Client.Delete(ctx, request); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("deleting %s %s: %w", request.GetKind(), request.GetName(), err))
					continue
				}
			}
		}
		if err := r.patchMachine(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

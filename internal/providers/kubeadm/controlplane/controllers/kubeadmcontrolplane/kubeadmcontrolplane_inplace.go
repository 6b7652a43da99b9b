package kubeadmcontrolplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
)

// InPlaceUpdateChecker asks the Runtime SDK's CanUpdateMachine hook whether the difference between a
// Machine's objects as they are and as they should be can be applied in place (inplace.Updater).
type InPlaceUpdateChecker interface {
	CanUpdateMachine(ctx context.Context, current, desired inplace.Objects) (ok bool, reasons []string, err error)
}

// inPlaceUpdateInProgress reports whether an in-place update of m is in progress, as upstream counts it: from
// the moment the KubeadmControlPlane marks it until the Machine controller has completed the UpdateMachine
// hook and removed the marks.
func inPlaceUpdateInProgress(m *clusterv1.Machine) bool {
	_, marked := m.Annotations[clusterv1.UpdateInProgressAnnotation]
	return marked || hooks.IsPending(runtimehooksv1.UpdateMachine, m)
}

// inPlaceTriggerIncomplete reports whether triggering the in-place update of m stopped half way: marked, its
// UpdateMachine hook not pending yet.
func inPlaceTriggerIncomplete(m *clusterv1.Machine) bool {
	_, marked := m.Annotations[clusterv1.UpdateInProgressAnnotation]
	return marked && !hooks.IsPending(runtimehooksv1.UpdateMachine, m)
}

// eligibleForInPlaceUpdate reports whether an outdated Machine may be updated in place rather than replaced,
// as upstream's UpToDate says: not when it is marked for deletion or remediation, nor when it is outdated
// because its certificates expire or rolloutAfter passed (replacing it is the point then).
func (s *scope) eligibleForInPlaceUpdate(m *clusterv1.Machine) bool {
	r, outdated := s.notUpToDate[m.Name]
	if !outdated || r.replaceOnly {
		return false
	}
	_, deleting := m.Annotations[clusterv1.DeleteMachineAnnotation]
	_, remediating := m.Annotations[clusterv1.RemediateMachineAnnotation]
	return !deleting && !remediating
}

// inPlaceUpdatesOn reports whether the KubeadmControlPlane tries in-place updates: the InPlaceUpdates gate
// on and a CanUpdateMachine caller.
func (r *Reconciler) inPlaceUpdatesOn() bool {
	return r.InPlaceUpdates && r.InPlaceUpdateChecker != nil
}

// tryInPlaceUpdate updates victim in place when the control plane is stable and the CanUpdateMachine
// extension covers the whole difference; fallback says to delete it instead (upstream's tryInPlaceUpdate).
func (r *Reconciler) tryInPlaceUpdate(ctx context.Context, s *scope, victim *clusterv1.Machine) (fallback bool, _ ctrl.Result, _ error) {
	if res := r.preflightChecks(ctx, s); !res.IsZero() {
		// When only the victim keeps the control plane from being stable, it is replaced rather than updated.
		if others := r.preflightChecks(ctx, s, victim); others.IsZero() {
			return true, ctrl.Result{}, nil
		}
		return false, res, nil
	}
	current, desired, ok, err := r.inPlaceObjects(ctx, s, victim)
	if err != nil {
		return false, ctrl.Result{}, fmt.Errorf("failed to determine if Machine %s can be updated in-place: %w", victim.Name, err)
	}
	if !ok {
		return true, ctrl.Result{}, nil
	}
	// The InfraMachine must accept its new spec (its provider's webhook may refuse a change): a dry run
	// tells before the Machine is marked, from which point the update goes on (upstream's dry run).
	probe := desired.Infra.DeepCopy()
	if err := r.Client.Patch(ctx, probe, client.MergeFrom(current.Infra), client.DryRunAll); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			ctrl.LoggerFrom(ctx).Info(fmt.Sprintf("Machine %s cannot be updated in-place", klog.KObj(victim)),
				"reason", fmt.Sprintf("dry-run of the desired %s failed: %s", current.Infra.GetKind(), err))
			return true, ctrl.Result{}, nil
		}
		return false, ctrl.Result{}, fmt.Errorf("dry-run of the desired %s of Machine %s: %w", current.Infra.GetKind(), victim.Name, err)
	}
	can, reasons, err := r.InPlaceUpdateChecker.CanUpdateMachine(ctx, current, canUpdateForDiff(current, desired))
	if err != nil {
		return false, ctrl.Result{}, fmt.Errorf("failed to determine if Machine %s can be updated in-place: %w", victim.Name, err)
	}
	if !can {
		ctrl.LoggerFrom(ctx).Info(fmt.Sprintf("Machine %s cannot be updated in-place by extensions", klog.KObj(victim)), "reason", strings.Join(reasons, ","))
		return true, ctrl.Result{}, nil
	}
	return false, ctrl.Result{}, r.triggerInPlaceUpdate(ctx, s, victim)
}

// inPlaceObjects returns a Machine's objects as they are and as the KubeadmControlPlane wants them; ok is
// false when its KubeadmConfig or InfraMachine is missing (it cannot be updated in place then).
func (r *Reconciler) inPlaceObjects(ctx context.Context, s *scope, m *clusterv1.Machine) (current, desired inplace.Objects, ok bool, _ error) {
	cfg, infra := s.kubeadmConfigs[m.Name], s.infraMachines[m.Name]
	if cfg == nil || infra == nil {
		return current, desired, false, nil
	}
	wantMachine, err := desiredInPlaceMachine(s, m)
	if err != nil {
		return current, desired, false, err
	}
	wantInfra, err := r.desiredInPlaceInfraMachine(ctx, s, infra)
	if err != nil {
		return current, desired, false, err
	}
	currentCfg, err := toUnstructured(cfg)
	if err != nil {
		return current, desired, false, err
	}
	wantCfg, err := toUnstructured(desiredInPlaceKubeadmConfig(s.kcp, cfg))
	if err != nil {
		return current, desired, false, err
	}
	return inplace.Objects{Machine: m, Infra: infra, Bootstrap: currentCfg},
		inplace.Objects{Machine: wantMachine, Infra: wantInfra, Bootstrap: wantCfg}, true, nil
}

// desiredInPlaceMachine is an existing Machine as the KubeadmControlPlane wants it: its version, the
// ClusterConfiguration it runs (the annotation the rollout compares), and what syncMachines keeps in line.
func desiredInPlaceMachine(s *scope, m *clusterv1.Machine) (*clusterv1.Machine, error) {
	want, err := desiredMachine(s.kcp, s.cluster, m.Name, m.Spec.FailureDomain, m)
	if err != nil {
		return nil, err
	}
	out := m.DeepCopy()
	out.Spec.Version = ptr.To(s.kcp.Spec.Version)
	out.Spec.NodeDrainTimeout, out.Spec.NodeVolumeDetachTimeout, out.Spec.NodeDeletionTimeout =
		want.Spec.NodeDrainTimeout, want.Spec.NodeVolumeDetachTimeout, want.Spec.NodeDeletionTimeout
	out.Spec.ReadinessGates, out.Spec.Taints = want.Spec.ReadinessGates, want.Spec.Taints
	cc, err := json.Marshal(s.kcp.Spec.KubeadmConfigSpec.ClusterConfiguration)
	if err != nil {
		return nil, fmt.Errorf("encoding the ClusterConfiguration: %w", err)
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[controlplanev1.KubeadmClusterConfigurationAnnotation] = string(cc)
	return out, nil
}

// desiredInPlaceKubeadmConfig is a Machine's KubeadmConfig as the KubeadmControlPlane wants it: the spec's
// KubeadmConfigSpec for a joining Machine (no init configuration, as upstream: a Machine updated in place
// joins if it is ever bootstrapped again), keeping the join discovery the bootstrap provider filled in.
func desiredInPlaceKubeadmConfig(kcp *controlplanev1.KubeadmControlPlane, cfg *bootstrapv1.KubeadmConfig) *bootstrapv1.KubeadmConfig {
	out := cfg.DeepCopy()
	out.Spec = *kcp.Spec.KubeadmConfigSpec.DeepCopy()
	out.Spec.InitConfiguration = nil
	if out.Spec.JoinConfiguration == nil {
		out.Spec.JoinConfiguration = &bootstrapv1.JoinConfiguration{}
	}
	if cfg.Spec.JoinConfiguration != nil {
		out.Spec.JoinConfiguration.Discovery = cfg.Spec.JoinConfiguration.Discovery
	}
	return out
}

// desiredInPlaceInfraMachine is a Machine's InfraMachine as the KubeadmControlPlane wants it: the machine
// template's spec over its own (what the template does not set, such as what the provider filled in, stays),
// with the cloned-from annotations of the template.
func (r *Reconciler) desiredInPlaceInfraMachine(ctx context.Context, s *scope, infra *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gen, err := external.Generate(ctx, r.Client, external.CloneInput{
		Template: &s.kcp.Spec.MachineTemplate.InfrastructureRef, Namespace: s.kcp.Namespace, Name: infra.GetName(),
		ClusterName: s.cluster.Name,
	})
	if err != nil {
		return nil, fmt.Errorf("computing the desired %s: %w", infra.GetKind(), err)
	}
	out := infra.DeepCopy()
	current, err := json.Marshal(infra.Object["spec"])
	if err != nil {
		return nil, err
	}
	want, err := json.Marshal(gen.Object["spec"])
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(current, want)
	if err != nil {
		return nil, fmt.Errorf("merging the machine template's spec into %s %s: %w", infra.GetKind(), infra.GetName(), err)
	}
	var spec any
	if err := json.Unmarshal(merged, &spec); err != nil {
		return nil, err
	}
	if spec != nil {
		out.Object["spec"] = spec
	}
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range []string{clusterv1.TemplateClonedFromNameAnnotation, clusterv1.TemplateClonedFromGroupKindAnnotation} {
		if v, ok := gen.GetAnnotations()[k]; ok {
			annotations[k] = v
		}
	}
	out.SetAnnotations(annotations)
	return out, nil
}

// canUpdateForDiff returns the desired objects as the CanUpdateMachine request carries them: the
// KubeadmConfigs compared as the rollout compares them, so that only real changes are left for the
// extension (upstream's PrepareKubeadmConfigsForDiff): the current init configuration of the first Machine
// read as a join configuration, DNS (updated in place) and the join discovery left out. current.Bootstrap
// is changed the same way.
func canUpdateForDiff(current, desired inplace.Objects) inplace.Objects {
	cur, want := &bootstrapv1.KubeadmConfig{}, &bootstrapv1.KubeadmConfig{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(current.Bootstrap.Object, cur) != nil ||
		runtime.DefaultUnstructuredConverter.FromUnstructured(desired.Bootstrap.Object, want) != nil {
		return desired
	}
	if init := cur.Spec.InitConfiguration; init != nil && cur.Spec.JoinConfiguration == nil {
		cur.Spec.JoinConfiguration = &bootstrapv1.JoinConfiguration{
			TypeMeta: init.TypeMeta, NodeRegistration: init.NodeRegistration, Patches: init.Patches, SkipPhases: init.SkipPhases,
			ControlPlane: &bootstrapv1.JoinControlPlane{LocalAPIEndpoint: init.LocalAPIEndpoint},
		}
		if want.Spec.JoinConfiguration != nil {
			cur.Spec.JoinConfiguration.TypeMeta = want.Spec.JoinConfiguration.TypeMeta
			cur.Spec.JoinConfiguration.CACertPath = want.Spec.JoinConfiguration.CACertPath
			if want.Spec.JoinConfiguration.ControlPlane == nil {
				cur.Spec.JoinConfiguration.ControlPlane = nil
			}
		}
		cur.Spec.InitConfiguration = nil
	}
	if cur.Spec.ClusterConfiguration != nil && want.Spec.ClusterConfiguration != nil {
		cur.Spec.ClusterConfiguration.DNS = want.Spec.ClusterConfiguration.DNS
		cur.Spec.ClusterConfiguration.ControlPlaneEndpoint = want.Spec.ClusterConfiguration.ControlPlaneEndpoint
	}
	for _, j := range []*bootstrapv1.JoinConfiguration{cur.Spec.JoinConfiguration, want.Spec.JoinConfiguration} {
		if j != nil {
			j.Discovery = bootstrapv1.Discovery{}
		}
	}
	curU, err1 := toUnstructured(cur)
	wantU, err2 := toUnstructured(want)
	if err1 != nil || err2 != nil {
		return desired
	}
	current.Bootstrap.Object["spec"] = curU.Object["spec"]
	out := desired
	out.Bootstrap = wantU
	return out
}

// toUnstructured returns a KubeadmConfig as an Unstructured, with its kind.
func toUnstructured(cfg *bootstrapv1.KubeadmConfig) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cfg)
	if err != nil {
		return nil, fmt.Errorf("converting KubeadmConfig %s: %w", cfg.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(bootstrapv1.GroupVersion.String())
	u.SetKind("KubeadmConfig")
	return u, nil
}

// triggerInPlaceUpdate starts the in-place update of m, as upstream: it marks the Machine with
// UpdateInProgressAnnotation first (from then on the update goes on), writes the desired InfraMachine and
// KubeadmConfig (both marked too), then the desired Machine with the UpdateMachine hook pending, which the
// Machine controller carries out. Called again for a Machine marked but not pending, it completes the
// trigger. Its writes are not this controller's field owner's, so that syncMachines never removes the
// annotations, which the Machine controller removes once the update is done.
func (r *Reconciler) triggerInPlaceUpdate(ctx context.Context, s *scope, m *clusterv1.Machine) error {
	log := ctrl.LoggerFrom(ctx).WithValues("Machine", klog.KObj(m))
	log.Info(fmt.Sprintf("Triggering in-place update for Machine %s", klog.KObj(m)))
	if _, ok := m.Annotations[clusterv1.UpdateInProgressAnnotation]; !ok {
		before := m.DeepCopy()
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[clusterv1.UpdateInProgressAnnotation] = ""
		if err := r.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("failed to trigger in-place update for Machine %s by setting the %s annotation: %w", klog.KObj(m), clusterv1.UpdateInProgressAnnotation, err)
		}
		s.machineWriters[m.Name] = newMachineWriter(m, r.Client)
	}
	failed := func(err error) error {
		return fmt.Errorf("failed to complete triggering in-place update for Machine %s: %w", klog.KObj(m), err)
	}
	_, desired, ok, err := r.inPlaceObjects(ctx, s, m)
	if err != nil {
		return failed(err)
	}
	if !ok {
		return failed(fmt.Errorf("its KubeadmConfig or %s is missing", m.Spec.InfrastructureRef.Kind))
	}

	// The InfraMachine first: its write is the most likely to fail.
	infra := s.infraMachines[m.Name]
	mark := func(obj metav1.Object) {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[clusterv1.UpdateInProgressAnnotation] = ""
		obj.SetAnnotations(annotations)
	}
	mark(desired.Infra)
	if err := r.Client.Patch(ctx, desired.Infra, client.MergeFrom(infra)); err != nil {
		return failed(err)
	}
	s.infraMachines[m.Name] = desired.Infra

	cfg := s.kubeadmConfigs[m.Name]
	wantCfg := desiredInPlaceKubeadmConfig(s.kcp, cfg)
	mark(wantCfg)
	if err := r.Client.Patch(ctx, wantCfg, client.MergeFrom(cfg)); err != nil {
		return failed(err)
	}
	s.kubeadmConfigs[m.Name] = wantCfg

	// The Machine with the hook pending: the Machine controller starts the update once it reads it.
	hooks.MarkPending(desired.Machine, runtimehooksv1.UpdateMachine)
	if err := r.Client.Patch(ctx, desired.Machine, client.MergeFrom(m)); err != nil {
		return failed(err)
	}
	s.machines[m.Name] = desired.Machine
	s.machineWriters[m.Name] = newMachineWriter(desired.Machine, r.Client)
	delete(s.notUpToDate, m.Name)
	log.Info(fmt.Sprintf("Completed triggering in-place update for Machine %s", klog.KObj(m)))
	r.recorder.Event(desired.Machine, corev1.EventTypeNormal, "SuccessfulStartInPlaceUpdate", "Machine starting in-place update")
	return nil
}

// completeInPlaceTriggers completes triggering the in-place updates that stopped half way (upstream's
// MachinesToCompleteTriggerInPlaceUpdate); done says one was found. Nothing without the gate.
func (r *Reconciler) completeInPlaceTriggers(ctx context.Context, s *scope) (done bool, _ error) {
	if !s.inPlaceUpdates {
		return false, nil
	}
	for _, m := range s.active() {
		if !inPlaceTriggerIncomplete(m) {
			continue
		}
		done = true
		if err := r.triggerInPlaceUpdate(ctx, s, m); err != nil {
			return true, err
		}
	}
	return done, nil
}

// inPlaceUpdatesInProgress returns the Machines whose in-place update is in progress; none without the gate.
func (s *scope) inPlaceUpdatesInProgress() []*clusterv1.Machine {
	if !s.inPlaceUpdates {
		return nil
	}
	return filter(s.all(), inPlaceUpdateInProgress)
}

// inPlaceUpdatingMessage is the message of a Machine's UpToDate condition while its in-place update is in
// progress: the Machine's Updating condition's message, when it has one.
func inPlaceUpdatingMessage(m *clusterv1.Machine) string {
	if c := conditions.GetV1Beta2(m, clusterv1.MachineUpdatingV1Beta2Condition); c != nil && c.Status == metav1.ConditionTrue && c.Message != "" {
		return "* " + c.Message
	}
	return "* In-place update in progress"
}

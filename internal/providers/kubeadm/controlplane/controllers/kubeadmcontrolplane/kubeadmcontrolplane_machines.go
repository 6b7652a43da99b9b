package kubeadmcontrolplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/labelformat"
	"github.com/capstan-dev/capstan/internal/rollout"
)

// fieldOwner is the field manager of the provider's writes, upstream's.
const fieldOwner = "capi-kubeadmcontrolplane"

// mandatoryReadinessGates are the v1beta2 conditions every control plane Machine's Ready waits for; the etcd
// ones only with stacked etcd.
var (
	mandatoryReadinessGates = []string{
		controlplanev1.KubeadmControlPlaneMachineAPIServerPodHealthyV1Beta2Condition,
		controlplanev1.KubeadmControlPlaneMachineControllerManagerPodHealthyV1Beta2Condition,
		controlplanev1.KubeadmControlPlaneMachineSchedulerPodHealthyV1Beta2Condition,
	}
	etcdReadinessGates = []string{
		controlplanev1.KubeadmControlPlaneMachineEtcdPodHealthyV1Beta2Condition,
		controlplanev1.KubeadmControlPlaneMachineEtcdMemberHealthyV1Beta2Condition,
	}
)

// machineLabels returns the labels of the control plane Machines and their KubeadmConfigs and InfraMachines:
// the machine template's, the cluster name, the control plane role and the control plane's name.
func machineLabels(kcp *controlplanev1.KubeadmControlPlane, clusterName string) map[string]string {
	out := maps.Clone(kcp.Spec.MachineTemplate.ObjectMeta.Labels)
	if out == nil {
		out = map[string]string{}
	}
	out[clusterv1.ClusterNameLabel] = clusterName
	out[clusterv1.MachineControlPlaneLabel] = ""
	out[clusterv1.MachineControlPlaneNameLabel] = labelformat.Value(kcp.Name)
	return out
}

// machineName generates the name of a new Machine from machineNamingStrategy.template.
func machineName(kcp *controlplanev1.KubeadmControlPlane, clusterName string) (string, error) {
	tpl := "{{ .kubeadmControlPlane.name }}-{{ .random }}"
	if kcp.Spec.MachineNamingStrategy != nil && kcp.Spec.MachineNamingStrategy.Template != "" {
		tpl = kcp.Spec.MachineNamingStrategy.Template
	}
	if !strings.Contains(tpl, "{{ .random }}") {
		return "", errors.New("cannot generate a Machine name: {{ .random }} is missing in machineNamingStrategy.template")
	}
	t, err := template.New("name").Parse(tpl)
	if err != nil {
		return "", fmt.Errorf("parsing machineNamingStrategy.template: %w", err)
	}
	var buf bytes.Buffer
	data := map[string]any{
		"cluster":             map[string]string{"name": clusterName},
		"kubeadmControlPlane": map[string]string{"name": kcp.Name},
		"random":              utilrand.String(5),
	}
	if err := t.Execute(&buf, data); err != nil {
		return "", fmt.Errorf("generating a Machine name from machineNamingStrategy.template: %w", err)
	}
	name := buf.String()
	if len(name) > 63 {
		name = name[:58] + utilrand.String(5)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("machineNamingStrategy.template generates an invalid Machine name %q: %s", name, strings.Join(errs, ", "))
	}
	return name, nil
}

// desiredMachine returns the Machine the KubeadmControlPlane wants: a new one (existing nil) or the in-place
// mutable fields of an existing one.
func desiredMachine(kcp *controlplanev1.KubeadmControlPlane, cluster *clusterv1.Cluster, name string, failureDomain *string, existing *clusterv1.Machine) (*clusterv1.Machine, error) {
	annotations := maps.Clone(kcp.Spec.MachineTemplate.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: kcp.Namespace,
			Labels:          machineLabels(kcp, cluster.Name),
			OwnerReferences: []metav1.OwnerReference{controllerRef(kcp)},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName:             cluster.Name,
			FailureDomain:           failureDomain,
			NodeDrainTimeout:        kcp.Spec.MachineTemplate.NodeDrainTimeout,
			NodeVolumeDetachTimeout: kcp.Spec.MachineTemplate.NodeVolumeDetachTimeout,
			NodeDeletionTimeout:     kcp.Spec.MachineTemplate.NodeDeletionTimeout,
			Taints:                  slices.Clone(kcp.Spec.MachineTemplate.Taints),
		},
	}
	if existing == nil {
		// Created with the core's finalizer, as upstream's MachineSet creates its Machines, so that the
		// Machine controller does not add it in a write of its own.
		m.Finalizers = []string{clusterv1.MachineFinalizer}
		m.Spec.Version = ptr.To(kcp.Spec.Version)
		cc, err := json.Marshal(kcp.Spec.KubeadmConfigSpec.ClusterConfiguration)
		if err != nil {
			return nil, fmt.Errorf("encoding the ClusterConfiguration: %w", err)
		}
		annotations[controlplanev1.KubeadmClusterConfigurationAnnotation] = string(cc)
		if v, ok := kcp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
			annotations[controlplanev1.RemediationForAnnotation] = v
		}
	} else {
		m.Spec.Version = existing.Spec.Version
		for _, k := range []string{controlplanev1.KubeadmClusterConfigurationAnnotation, controlplanev1.RemediationForAnnotation} {
			if v, ok := existing.Annotations[k]; ok {
				annotations[k] = v
			}
		}
	}
	annotations[controlplanev1.PreTerminateHookCleanupAnnotation] = ""
	m.Annotations = annotations
	gates := append([]string{}, mandatoryReadinessGates...)
	if cc := kcp.Spec.KubeadmConfigSpec.ClusterConfiguration; cc == nil || cc.Etcd.External == nil {
		gates = append(gates, etcdReadinessGates...)
	}
	seen := map[string]bool{}
	for _, g := range gates {
		seen[g] = true
		m.Spec.ReadinessGates = append(m.Spec.ReadinessGates, clusterv1.MachineReadinessGate{ConditionType: g})
	}
	for _, g := range kcp.Spec.MachineTemplate.ReadinessGates {
		if !seen[g.ConditionType] {
			seen[g.ConditionType] = true
			m.Spec.ReadinessGates = append(m.Spec.ReadinessGates, g)
		}
	}
	return m, nil
}

// createMachine creates a control plane Machine with an InfraMachine cloned from the machine template and a
// KubeadmConfig of spec; what was created is deleted again when a later step fails.
func (r *Reconciler) createMachine(ctx context.Context, s *scope, spec *bootstrapv1.KubeadmConfigSpec) (*clusterv1.Machine, error) {
	kcp, cluster := s.kcp, s.cluster
	name, err := machineName(kcp, cluster.Name)
	if err != nil {
		s.machinesCreatedFailure = &machinesCreatedFailure{controlplanev1.MachineGenerationFailedReason, err.Error()}
		return nil, err
	}
	m, err := desiredMachine(kcp, cluster, name, s.nextFailureDomain(), nil)
	if err != nil {
		return nil, err
	}
	owner := metav1.OwnerReference{APIVersion: controlplanev1.GroupVersion.String(), Kind: kubeadmControlPlaneKind, Name: kcp.Name, UID: kcp.UID}
	infraRef, err := external.Clone(ctx, r.Client, external.CloneInput{
		Template: &kcp.Spec.MachineTemplate.InfrastructureRef, Namespace: kcp.Namespace, Name: name,
		ClusterName: cluster.Name, Owner: &owner,
		Labels: machineLabels(kcp, cluster.Name), Annotations: kcp.Spec.MachineTemplate.ObjectMeta.Annotations,
	})
	if err != nil {
		s.machinesCreatedFailure = &machinesCreatedFailure{controlplanev1.InfrastructureTemplateCloningFailedReason, err.Error()}
		return nil, fmt.Errorf("cloning the infrastructure template: %w", err)
	}
	m.Spec.InfrastructureRef = *infraRef
	cfg := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: kcp.Namespace,
			Labels: machineLabels(kcp, cluster.Name), Annotations: maps.Clone(kcp.Spec.MachineTemplate.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: *spec,
	}
	if err := r.Client.Create(ctx, cfg, client.FieldOwner(fieldOwner)); err != nil {
		s.machinesCreatedFailure = &machinesCreatedFailure{controlplanev1.BootstrapTemplateCloningFailedReason, err.Error()}
		return nil, errors.Join(fmt.Errorf("creating KubeadmConfig %s: %w", name, err), r.cleanup(ctx, infraRef))
	}
	cfgRef := &corev1.ObjectReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: cfg.Name, Namespace: cfg.Namespace, UID: cfg.UID}
	m.Spec.Bootstrap.ConfigRef = cfgRef
	if err := r.Client.Create(ctx, m, client.FieldOwner(fieldOwner)); err != nil {
		s.machinesCreatedFailure = &machinesCreatedFailure{controlplanev1.MachineGenerationFailedReason, err.Error()}
		return nil, errors.Join(fmt.Errorf("creating Machine %s: %w", name, err), r.cleanup(ctx, infraRef, cfgRef))
	}
	r.machineWrites.created(client.ObjectKeyFromObject(kcp), m.Name)
	// The replacement of a remediated Machine exists: the remediation is complete.
	delete(kcp.Annotations, controlplanev1.RemediationInProgressAnnotation)
	return m, nil
}

func (r *Reconciler) cleanup(ctx context.Context, refs ...*corev1.ObjectReference) error {
	var errs []error
	for _, ref := range refs {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(ref.APIVersion)
		obj.SetKind(ref.Kind)
		obj.SetNamespace(ref.Namespace)
		obj.SetName(ref.Name)
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cleaning up %s %s after the failure: %w", ref.Kind, ref.Name, err))
		}
	}
	return errors.Join(errs...)
}

// syncMachines propagates in place what changes without a rollout: the machine template's labels and
// annotations (to the Machines, their KubeadmConfigs and InfraMachines), the node timeouts, the readiness
// gates and the taints (to the Machines; only the timeouts to Machines being deleted).
func (r *Reconciler) syncMachines(ctx context.Context, s *scope) error {
	log := ctrl.LoggerFrom(ctx)
	for _, m := range s.all() {
		before := m.DeepCopy()
		m.Spec.NodeDrainTimeout = s.kcp.Spec.MachineTemplate.NodeDrainTimeout
		m.Spec.NodeVolumeDetachTimeout = s.kcp.Spec.MachineTemplate.NodeVolumeDetachTimeout
		m.Spec.NodeDeletionTimeout = s.kcp.Spec.MachineTemplate.NodeDeletionTimeout
		if m.DeletionTimestamp.IsZero() {
			want, err := desiredMachine(s.kcp, s.cluster, m.Name, m.Spec.FailureDomain, m)
			if err != nil {
				return err
			}
			m.Labels = rollout.SyncMetadata(m.Labels, want.Labels, rollout.OwnedKeys(m, fieldOwner, "f:labels"))
			m.Annotations = rollout.SyncMetadata(m.Annotations, want.Annotations, rollout.OwnedKeys(m, fieldOwner, "f:annotations"))
			m.Spec.ReadinessGates = want.Spec.ReadinessGates
			m.Spec.Taints = want.Spec.Taints
		}
		if !reflect.DeepEqual(before.ObjectMeta, m.ObjectMeta) || !reflect.DeepEqual(before.Spec, m.Spec) {
			log.V(2).Info("Updating Machine in place", "Machine", klog.KObj(m))
			if err := r.Client.Patch(ctx, m, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return fmt.Errorf("updating Machine %s in place: %w", m.Name, err)
			}
			s.machineWriters[m.Name] = newMachineWriter(m, r.Client)
		}
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		labels, annotations := machineLabels(s.kcp, s.cluster.Name), s.kcp.Spec.MachineTemplate.ObjectMeta.Annotations
		if cfg, ok := s.kubeadmConfigs[m.Name]; ok {
			if err := r.syncObjectMetadata(ctx, cfg, labels, annotations); err != nil {
				return err
			}
		}
		if infra, ok := s.infraMachines[m.Name]; ok {
			if err := r.syncObjectMetadata(ctx, infra, labels, annotations); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncObjectMetadata sets labels and annotations on obj, removing those this controller set before and no
// longer wants; the cloned-from annotations and the cluster name label stay.
func (r *Reconciler) syncObjectMetadata(ctx context.Context, obj client.Object, labels, annotations map[string]string) error {
	base, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return nil
	}
	wantAnnotations := maps.Clone(annotations)
	if wantAnnotations == nil {
		wantAnnotations = map[string]string{}
	}
	for _, k := range []string{clusterv1.TemplateClonedFromNameAnnotation, clusterv1.TemplateClonedFromGroupKindAnnotation} {
		if v, ok := obj.GetAnnotations()[k]; ok {
			wantAnnotations[k] = v
		}
	}
	obj.SetLabels(rollout.SyncMetadata(obj.GetLabels(), labels, rollout.OwnedKeys(obj, fieldOwner, "f:labels")))
	obj.SetAnnotations(rollout.SyncMetadata(obj.GetAnnotations(), wantAnnotations, rollout.OwnedKeys(obj, fieldOwner, "f:annotations")))
	if reflect.DeepEqual(base.GetLabels(), obj.GetLabels()) && reflect.DeepEqual(base.GetAnnotations(), obj.GetAnnotations()) {
		return nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(base), client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating the labels and annotations of %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return nil
}

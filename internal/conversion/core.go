package conversion

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// Core returns the conversions of the eight cluster.x-k8s.io kinds: v1beta1 ⇄ v1beta2 (the hub). versions gives the
// apiVersion of the providers' objects that v1beta2's references name by group and kind alone.
//
// A v1beta1 reference converted to v1beta2 keeps its group, kind and name: its version, uid,
// resourceVersion and fieldPath are dropped, as upstream does (the version is the provider's contract
// version again on the way back, and the namespace the referring object's). What v1beta2 has and v1beta1
// lacks (fields added since v1beta1, unset values v1beta1 shows as false or 0) travels in DataAnnotation.
func Core(versions APIVersions) Kinds {
	c := core{versions: versions}
	gk := func(kind string) Kind {
		return Kind{GroupKind: clusterv1.GroupVersion.WithKind(kind).GroupKind()}
	}
	kinds := Kinds{
		gk("Cluster"), gk("Machine"), gk("MachineSet"), gk("MachineDeployment"),
		gk("MachineHealthCheck"), gk("MachinePool"), gk("MachineDrainRule"), gk("ClusterClass"),
	}
	kinds[0].Converter = crconversion.NewHubSpokeConverter(&clusterv1.Cluster{},
		crconversion.NewSpokeConverter(&clusterv1beta1.Cluster{}, c.clusterToV1beta1, c.clusterFromV1beta1))
	kinds[1].Converter = crconversion.NewHubSpokeConverter(&clusterv1.Machine{},
		crconversion.NewSpokeConverter(&clusterv1beta1.Machine{}, c.machineToV1beta1, c.machineFromV1beta1))
	kinds[2].Converter = crconversion.NewHubSpokeConverter(&clusterv1.MachineSet{},
		crconversion.NewSpokeConverter(&clusterv1beta1.MachineSet{}, c.machineSetToV1beta1, c.machineSetFromV1beta1))
	kinds[3].Converter = crconversion.NewHubSpokeConverter(&clusterv1.MachineDeployment{},
		crconversion.NewSpokeConverter(&clusterv1beta1.MachineDeployment{}, c.machineDeploymentToV1beta1, c.machineDeploymentFromV1beta1))
	kinds[4].Converter = crconversion.NewHubSpokeConverter(&clusterv1.MachineHealthCheck{},
		crconversion.NewSpokeConverter(&clusterv1beta1.MachineHealthCheck{}, machineHealthCheckToV1beta1, machineHealthCheckFromV1beta1))
	kinds[5].Converter = crconversion.NewHubSpokeConverter(&clusterv1.MachinePool{},
		crconversion.NewSpokeConverter(&clusterv1beta1.MachinePool{}, c.machinePoolToV1beta1, c.machinePoolFromV1beta1))
	kinds[6].Converter = crconversion.NewHubSpokeConverter(&clusterv1.MachineDrainRule{},
		crconversion.NewSpokeConverter(&clusterv1beta1.MachineDrainRule{},
			generated(clusterv1beta1.Convert_v1beta2_MachineDrainRule_To_v1beta1_MachineDrainRule),
			generated(clusterv1beta1.Convert_v1beta1_MachineDrainRule_To_v1beta2_MachineDrainRule)))
	kinds[7].Converter = crconversion.NewHubSpokeConverter(&clusterv1.ClusterClass{},
		crconversion.NewSpokeConverter(&clusterv1beta1.ClusterClass{}, clusterClassToV1beta1, clusterClassFromV1beta1))
	return kinds
}

// core holds what the conversions of references need.
type core struct {
	versions APIVersions
}

// boolFromV1beta1 is a v1beta1 bool as v1beta2's optional one: false is unset unless the v1beta2 object it
// came from (restored, when ok) said false.
func boolFromV1beta1(v bool, ok bool, restored *bool) *bool {
	if !v && (!ok || restored == nil || *restored) {
		return nil
	}
	return new(v)
}

// int32FromV1beta1 is a v1beta1 int32 as v1beta2's optional one: 0 is unset when the v1beta2 object it came
// from (restored, when ok) had it unset, or, for unknown, when there is no such object.
func int32FromV1beta1(v int32, ok bool, restored *int32, unknown bool) *int32 {
	if v == 0 && ((ok && restored == nil) || (!ok && unknown)) {
		return nil
	}
	return new(v)
}

func int32Value(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}

// machineSpecRefsToV1beta1 converts a Machine spec's references to v1beta1.
func (c core) machineSpecRefsToV1beta1(ctx context.Context, src *clusterv1.MachineSpec, dst *clusterv1beta1.MachineSpec, namespace string) error {
	infra, err := objectReference(ctx, c.versions, src.InfrastructureRef, namespace)
	if err != nil {
		return err
	}
	if infra != nil {
		dst.InfrastructureRef = *infra
	}
	dst.Bootstrap.ConfigRef, err = objectReference(ctx, c.versions, src.Bootstrap.ConfigRef, namespace)
	return err
}

// machineSpecRefsFromV1beta1 converts a Machine spec's references to v1beta2.
func machineSpecRefsFromV1beta1(src *clusterv1beta1.MachineSpec, dst *clusterv1.MachineSpec) error {
	var err error
	if dst.InfrastructureRef, err = contractReference(&src.InfrastructureRef); err != nil {
		return err
	}
	dst.Bootstrap.ConfigRef, err = contractReference(src.Bootstrap.ConfigRef)
	return err
}

// Machine: spec.minReadySeconds and status.failureDomain have no v1beta1 field; v1beta2's Updating
// phase is v1beta1's Running with the Updating condition True.

// MachineFromV1beta1 converts a v1beta1 Machine to v1beta2 as the conversion webhook does: for the requests
// of the Runtime SDK hooks, which carry v1beta2 Machines.
func MachineFromV1beta1(ctx context.Context, src *clusterv1beta1.Machine) (*clusterv1.Machine, error) {
	dst := &clusterv1.Machine{}
	if err := (core{}).machineFromV1beta1(ctx, src.DeepCopy(), dst); err != nil {
		return nil, err
	}
	dst.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
	return dst, nil
}

func (c core) machineToV1beta1(ctx context.Context, src *clusterv1.Machine, dst *clusterv1beta1.Machine) error {
	if err := clusterv1beta1.Convert_v1beta2_Machine_To_v1beta1_Machine(src, dst, nil); err != nil {
		return err
	}
	if err := c.machineSpecRefsToV1beta1(ctx, &src.Spec, &dst.Spec, src.Namespace); err != nil {
		return err
	}
	return MarshalData(src, dst)
}

func (c core) machineFromV1beta1(_ context.Context, src *clusterv1beta1.Machine, dst *clusterv1.Machine) error {
	if err := clusterv1beta1.Convert_v1beta1_Machine_To_v1beta2_Machine(src, dst, nil); err != nil {
		return err
	}
	if err := machineSpecRefsFromV1beta1(&src.Spec, &dst.Spec); err != nil {
		return err
	}
	restored := &clusterv1.Machine{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Status.Initialization = clusterv1.MachineInitializationStatus{
		BootstrapDataSecretCreated: boolFromV1beta1(src.Status.BootstrapReady, ok, restored.Status.Initialization.BootstrapDataSecretCreated),
		InfrastructureProvisioned:  boolFromV1beta1(src.Status.InfrastructureReady, ok, restored.Status.Initialization.InfrastructureProvisioned),
	}
	if !ok {
		return nil
	}
	dst.Spec.MinReadySeconds = restored.Spec.MinReadySeconds
	dst.Status.FailureDomain = restored.Status.FailureDomain
	return nil
}

// MachineSet: v1beta1 has minReadySeconds in the spec, v1beta2 in the template's spec.

func (c core) machineSetToV1beta1(ctx context.Context, src *clusterv1.MachineSet, dst *clusterv1beta1.MachineSet) error {
	if err := clusterv1beta1.Convert_v1beta2_MachineSet_To_v1beta1_MachineSet(src, dst, nil); err != nil {
		return err
	}
	if err := c.machineSpecRefsToV1beta1(ctx, &src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace); err != nil {
		return err
	}
	dst.Spec.MinReadySeconds = int32Value(src.Spec.Template.Spec.MinReadySeconds)
	return MarshalData(src, dst)
}

func (c core) machineSetFromV1beta1(_ context.Context, src *clusterv1beta1.MachineSet, dst *clusterv1.MachineSet) error {
	if err := clusterv1beta1.Convert_v1beta1_MachineSet_To_v1beta2_MachineSet(src, dst, nil); err != nil {
		return err
	}
	if err := machineSpecRefsFromV1beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
		return err
	}
	restored := &clusterv1.MachineSet{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.Template.Spec.MinReadySeconds = int32FromV1beta1(src.Spec.MinReadySeconds, ok, restored.Spec.Template.Spec.MinReadySeconds, true)
	dst.Status.Replicas = int32FromV1beta1(src.Status.Replicas, ok, restored.Status.Replicas, false)
	if ok {
		dst.Status.Deprecated = keepUnsetDeprecated(dst.Status.Deprecated, restored.Status.Deprecated == nil, &clusterv1.MachineSetDeprecatedStatus{V1Beta1: &clusterv1.MachineSetV1Beta1DeprecatedStatus{}})
	}
	return nil
}

// keepUnsetDeprecated is nil for a status.deprecated that v1beta1's counters filled with zeros when the
// v1beta2 object had none (unset), as a v1beta2 controller writes it.
func keepUnsetDeprecated[T any](deprecated *T, wasUnset bool, empty *T) *T {
	if wasUnset && apiequality.Semantic.DeepEqual(deprecated, empty) {
		return nil
	}
	return deprecated
}

// MachineDeployment: as MachineSet, and spec.paused is optional in v1beta2.

func (c core) machineDeploymentToV1beta1(ctx context.Context, src *clusterv1.MachineDeployment, dst *clusterv1beta1.MachineDeployment) error {
	if err := clusterv1beta1.Convert_v1beta2_MachineDeployment_To_v1beta1_MachineDeployment(src, dst, nil); err != nil {
		return err
	}
	if err := c.machineSpecRefsToV1beta1(ctx, &src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace); err != nil {
		return err
	}
	dst.Spec.MinReadySeconds = src.Spec.Template.Spec.MinReadySeconds
	return MarshalData(src, dst)
}

func (c core) machineDeploymentFromV1beta1(_ context.Context, src *clusterv1beta1.MachineDeployment, dst *clusterv1.MachineDeployment) error {
	if err := clusterv1beta1.Convert_v1beta1_MachineDeployment_To_v1beta2_MachineDeployment(src, dst, nil); err != nil {
		return err
	}
	if err := machineSpecRefsFromV1beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
		return err
	}
	dst.Spec.Template.Spec.MinReadySeconds = src.Spec.MinReadySeconds
	restored := &clusterv1.MachineDeployment{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.Paused = boolFromV1beta1(src.Spec.Paused, ok, restored.Spec.Paused)
	dst.Status.Replicas = int32FromV1beta1(src.Status.Replicas, ok, restored.Status.Replicas, false)
	if ok {
		dst.Status.Deprecated = keepUnsetDeprecated(dst.Status.Deprecated, restored.Status.Deprecated == nil, &clusterv1.MachineDeploymentDeprecatedStatus{V1Beta1: &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{}})
	}
	return nil
}

// MachineHealthCheck: the status's counters are optional in v1beta2; the remediation template is in the
// MachineHealthCheck's namespace.

func machineHealthCheckToV1beta1(_ context.Context, src *clusterv1.MachineHealthCheck, dst *clusterv1beta1.MachineHealthCheck) error {
	if err := clusterv1beta1.Convert_v1beta2_MachineHealthCheck_To_v1beta1_MachineHealthCheck(src, dst, nil); err != nil {
		return err
	}
	if dst.Spec.RemediationTemplate != nil {
		dst.Spec.RemediationTemplate.Namespace = src.Namespace
	}
	return MarshalData(src, dst)
}

func machineHealthCheckFromV1beta1(_ context.Context, src *clusterv1beta1.MachineHealthCheck, dst *clusterv1.MachineHealthCheck) error {
	if err := clusterv1beta1.Convert_v1beta1_MachineHealthCheck_To_v1beta2_MachineHealthCheck(src, dst, nil); err != nil {
		return err
	}
	restored := &clusterv1.MachineHealthCheck{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Status.ExpectedMachines = int32FromV1beta1(src.Status.ExpectedMachines, ok, restored.Status.ExpectedMachines, false)
	dst.Status.CurrentHealthy = int32FromV1beta1(src.Status.CurrentHealthy, ok, restored.Status.CurrentHealthy, false)
	dst.Status.RemediationsAllowed = int32FromV1beta1(src.Status.RemediationsAllowed, ok, restored.Status.RemediationsAllowed, false)
	return nil
}

// MachinePool: v1beta1 has minReadySeconds in the spec, v1beta2 in the template's spec.

func (c core) machinePoolToV1beta1(ctx context.Context, src *clusterv1.MachinePool, dst *clusterv1beta1.MachinePool) error {
	if err := clusterv1beta1.Convert_v1beta2_MachinePool_To_v1beta1_MachinePool(src, dst, nil); err != nil {
		return err
	}
	if err := c.machineSpecRefsToV1beta1(ctx, &src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace); err != nil {
		return err
	}
	dst.Spec.MinReadySeconds = src.Spec.Template.Spec.MinReadySeconds
	return MarshalData(src, dst)
}

func (c core) machinePoolFromV1beta1(_ context.Context, src *clusterv1beta1.MachinePool, dst *clusterv1.MachinePool) error {
	if err := clusterv1beta1.Convert_v1beta1_MachinePool_To_v1beta2_MachinePool(src, dst, nil); err != nil {
		return err
	}
	if err := machineSpecRefsFromV1beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
		return err
	}
	dst.Spec.Template.Spec.MinReadySeconds = src.Spec.MinReadySeconds
	restored := &clusterv1.MachinePool{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Status.Initialization = clusterv1.MachinePoolInitializationStatus{
		BootstrapDataSecretCreated: boolFromV1beta1(src.Status.BootstrapReady, ok, restored.Status.Initialization.BootstrapDataSecretCreated),
		InfrastructureProvisioned:  boolFromV1beta1(src.Status.InfrastructureReady, ok, restored.Status.Initialization.InfrastructureProvisioned),
	}
	dst.Status.Replicas = int32FromV1beta1(src.Status.Replicas, ok, restored.Status.Replicas, false)
	if ok {
		dst.Status.Deprecated = keepUnsetDeprecated(dst.Status.Deprecated, restored.Status.Deprecated == nil, &clusterv1.MachinePoolDeprecatedStatus{V1Beta1: &clusterv1.MachinePoolV1Beta1DeprecatedStatus{}})
	}
	return nil
}

// MachineDrainRule: both versions have the same fields.

// Cluster: the infrastructure and control plane references.

func (c core) clusterToV1beta1(ctx context.Context, src *clusterv1.Cluster, dst *clusterv1beta1.Cluster) error {
	if err := clusterv1beta1.Convert_v1beta2_Cluster_To_v1beta1_Cluster(src, dst, nil); err != nil {
		return err
	}
	var err error
	if dst.Spec.InfrastructureRef, err = objectReference(ctx, c.versions, src.Spec.InfrastructureRef, src.Namespace); err != nil {
		return err
	}
	if dst.Spec.ControlPlaneRef, err = objectReference(ctx, c.versions, src.Spec.ControlPlaneRef, src.Namespace); err != nil {
		return err
	}
	if t := dst.Spec.Topology; t != nil {
		setRemediationNamespace(t.ControlPlane.MachineHealthCheck, src.Namespace)
		if t.Workers != nil {
			for _, md := range t.Workers.MachineDeployments {
				setRemediationNamespace(md.MachineHealthCheck, src.Namespace)
			}
		}
	}
	return MarshalData(src, dst)
}

func setRemediationNamespace(hc *clusterv1beta1.MachineHealthCheckTopology, namespace string) {
	if hc != nil && hc.RemediationTemplate != nil {
		hc.RemediationTemplate.Namespace = namespace
	}
}

func (c core) clusterFromV1beta1(_ context.Context, src *clusterv1beta1.Cluster, dst *clusterv1.Cluster) error {
	if err := clusterv1beta1.Convert_v1beta1_Cluster_To_v1beta2_Cluster(src, dst, nil); err != nil {
		return err
	}
	var err error
	if dst.Spec.InfrastructureRef, err = contractReference(src.Spec.InfrastructureRef); err != nil {
		return err
	}
	if dst.Spec.ControlPlaneRef, err = contractReference(src.Spec.ControlPlaneRef); err != nil {
		return err
	}
	restored := &clusterv1.Cluster{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.Paused = boolFromV1beta1(src.Spec.Paused, ok, restored.Spec.Paused)
	dst.Status.Initialization = clusterv1.ClusterInitializationStatus{
		InfrastructureProvisioned: boolFromV1beta1(src.Status.InfrastructureReady, ok, restored.Status.Initialization.InfrastructureProvisioned),
		ControlPlaneInitialized:   boolFromV1beta1(src.Status.ControlPlaneReady, ok, restored.Status.Initialization.ControlPlaneInitialized),
	}
	return nil
}

// ClusterClass: v1beta2's optional booleans of variables' schemas and patches' selectors are false in
// v1beta1: a variable, status variable or patch v1beta1 shows unchanged is restored whole.

func clusterClassToV1beta1(_ context.Context, src *clusterv1.ClusterClass, dst *clusterv1beta1.ClusterClass) error {
	if err := clusterv1beta1.Convert_v1beta2_ClusterClass_To_v1beta1_ClusterClass(src, dst, nil); err != nil {
		return err
	}
	ns := src.Namespace
	setTemplateNamespace(&dst.Spec.Infrastructure, ns)
	setTemplateNamespace(&dst.Spec.ControlPlane.LocalObjectTemplate, ns)
	setTemplateNamespace(dst.Spec.ControlPlane.MachineInfrastructure, ns)
	setClassRemediationNamespace(dst.Spec.ControlPlane.MachineHealthCheck, ns)
	for i := range dst.Spec.Workers.MachineDeployments {
		md := &dst.Spec.Workers.MachineDeployments[i]
		setTemplateNamespace(&md.Template.Bootstrap, ns)
		setTemplateNamespace(&md.Template.Infrastructure, ns)
		setClassRemediationNamespace(md.MachineHealthCheck, ns)
	}
	for i := range dst.Spec.Workers.MachinePools {
		mp := &dst.Spec.Workers.MachinePools[i]
		setTemplateNamespace(&mp.Template.Bootstrap, ns)
		setTemplateNamespace(&mp.Template.Infrastructure, ns)
	}
	for i := range dst.Spec.Patches {
		p := &dst.Spec.Patches[i]
		dropEmpty(&p.EnabledIf)
		if p.External != nil {
			dropEmpty(&p.External.DiscoverVariablesExtension)
		}
		for j := range p.Definitions {
			for k := range p.Definitions[j].JSONPatches {
				if v := p.Definitions[j].JSONPatches[k].ValueFrom; v != nil {
					dropEmpty(&v.Variable)
					dropEmpty(&v.Template)
				}
			}
		}
	}
	return MarshalData(src, dst)
}

func setTemplateNamespace(t *clusterv1beta1.LocalObjectTemplate, namespace string) {
	if t != nil && t.Ref != nil {
		t.Ref.Namespace = namespace
	}
}

func setClassRemediationNamespace(hc *clusterv1beta1.MachineHealthCheckClass, namespace string) {
	if hc != nil && hc.RemediationTemplate != nil {
		hc.RemediationTemplate.Namespace = namespace
	}
}

// dropEmpty unsets a v1beta1 optional string that v1beta2's value made "".
func dropEmpty(s **string) {
	if *s != nil && **s == "" {
		*s = nil
	}
}

func clusterClassFromV1beta1(_ context.Context, src *clusterv1beta1.ClusterClass, dst *clusterv1.ClusterClass) error {
	if err := clusterv1beta1.Convert_v1beta1_ClusterClass_To_v1beta2_ClusterClass(src, dst, nil); err != nil {
		return err
	}
	restored := &clusterv1.ClusterClass{}
	ok, err := UnmarshalData(dst, restored)
	if err != nil || !ok {
		return err
	}
	restoreUnchanged(dst.Spec.Variables, restored.Spec.Variables, clusterv1beta1.Convert_v1beta2_ClusterClassVariable_To_v1beta1_ClusterClassVariable,
		func(v clusterv1.ClusterClassVariable) string { return v.Name })
	restoreUnchanged(dst.Spec.Patches, restored.Spec.Patches, clusterv1beta1.Convert_v1beta2_ClusterClassPatch_To_v1beta1_ClusterClassPatch,
		func(p clusterv1.ClusterClassPatch) string { return p.Name })
	restoreUnchanged(dst.Status.Variables, restored.Status.Variables, clusterv1beta1.Convert_v1beta2_ClusterClassStatusVariable_To_v1beta1_ClusterClassStatusVariable,
		func(v clusterv1.ClusterClassStatusVariable) string { return v.Name })
	return nil
}

// restoreUnchanged replaces each item of dst (converted from v1beta1) by the item of restored (the v1beta2
// object the v1beta1 one came from) with the same key when both show the same in v1beta1: v1beta1 cannot
// express all of the item, and its client did not change it.
func restoreUnchanged[H any, S any](dst, restored []H, toV1beta1 func(*H, *S, apimachineryconversion.Scope) error, key func(H) string) {
	for i := range dst {
		for j := range restored {
			if key(restored[j]) != key(dst[i]) {
				continue
			}
			var fromDst, fromRestored S
			if toV1beta1(&dst[i], &fromDst, nil) == nil && toV1beta1(&restored[j], &fromRestored, nil) == nil &&
				apiequality.Semantic.DeepEqual(fromDst, fromRestored) {
				dst[i] = restored[j]
			}
			break
		}
	}
}

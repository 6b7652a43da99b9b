package conversion

import (
	"context"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiconversion "k8s.io/apimachinery/pkg/conversion"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	bootstrapv1beta1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta2"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// kubeadmV1beta1DataAnnotation holds, on a v1beta2 object of the kubeadm groups converted from v1beta1, what
// the v1beta1 object had that v1beta2 cannot express (JSON, the fields of the kind's kubeadm*V1beta1Data),
// so that reading the object in v1beta1 again shows it: the kubeadm configuration's kubernetesVersion,
// clusterName, networking, apiVersion and kind, useExperimentalRetryJoin; durations that are not whole
// seconds; a status's ready where v1beta2 derives another; the control plane's infrastructureRef where its
// group, kind and name do not give it back. It is DataAnnotation's counterpart: DataAnnotation keeps on the
// v1beta1 object what v1beta2 has and v1beta1 cannot express. Capstan's name: upstream v1.14 drops these
// (its v1beta2 controllers take the version, the cluster's name and networking from the Machine and the
// Cluster), but a v1beta1 client reads back what it wrote, and the v1beta1 controllers honour them.
// The annotation is written only when there is something to keep.
const kubeadmV1beta1DataAnnotation = "conversion.cluster.x-k8s.io/v1beta1-data"

// KubeadmBootstrap returns the conversions of the bootstrap.cluster.x-k8s.io kinds: v1beta1 ⇄ v1beta2 (the
// hub).
func KubeadmBootstrap() Kinds {
	return Kinds{
		{GroupKind: bootstrapv1.GroupVersion.WithKind("KubeadmConfig").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&bootstrapv1.KubeadmConfig{},
			crconversion.NewSpokeConverter(&bootstrapv1beta1.KubeadmConfig{}, kubeadmConfigToV1beta1, kubeadmConfigFromV1beta1))},
		{GroupKind: bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&bootstrapv1.KubeadmConfigTemplate{},
			crconversion.NewSpokeConverter(&bootstrapv1beta1.KubeadmConfigTemplate{}, kubeadmConfigTemplateToV1beta1, kubeadmConfigTemplateFromV1beta1))},
	}
}

// kubeadmConfigV1beta1Data is what kubeadmV1beta1DataAnnotation keeps of a v1beta1 KubeadmConfig.
type kubeadmConfigV1beta1Data struct {
	Spec   *bootstrapv1beta1.KubeadmConfigSpec `json:"spec,omitempty"`
	Status *kubeadmConfigV1beta1Readiness      `json:"status,omitempty"`
}

// kubeadmConfigV1beta1Readiness is a v1beta1 status's ready and initialization where they are not what
// v1beta2's initialization.dataSecretCreated gives back (ready alone, or the two disagreeing).
type kubeadmConfigV1beta1Readiness struct {
	Ready          bool                                                `json:"ready"`
	Initialization *bootstrapv1beta1.KubeadmConfigInitializationStatus `json:"initialization"`
}

func kubeadmConfigToV1beta1(_ context.Context, src *bootstrapv1.KubeadmConfig, dst *bootstrapv1beta1.KubeadmConfig) error {
	var data kubeadmConfigV1beta1Data
	if _, err := kubeadmToV1beta1(src, dst, bootstrapv1beta1.Convert_v1beta2_KubeadmConfig_To_v1beta1_KubeadmConfig, &data); err != nil {
		return err
	}
	restoreKubeadmV1beta1Spec(data.Spec, &src.Spec, &dst.Spec)
	if r := data.Status; r != nil && reflect.DeepEqual(r.dataSecretCreated(), src.Status.Initialization.DataSecretCreated) {
		dst.Status.Ready, dst.Status.Initialization = r.Ready, r.Initialization
	}
	return MarshalData(src, dst)
}

func kubeadmConfigFromV1beta1(_ context.Context, src *bootstrapv1beta1.KubeadmConfig, dst *bootstrapv1.KubeadmConfig) error {
	restored := &bootstrapv1.KubeadmConfig{}
	ok, err := kubeadmFromV1beta1(src, dst, bootstrapv1beta1.Convert_v1beta1_KubeadmConfig_To_v1beta2_KubeadmConfig, restored)
	if err != nil {
		return err
	}
	if ok {
		if err := restoreKubeadmV1beta2Spec(&restored.Spec, &src.Spec, &dst.Spec); err != nil {
			return err
		}
		status := bootstrapv1beta1.KubeadmConfigStatus{}
		if err := bootstrapv1beta1.Convert_v1beta2_KubeadmConfigStatus_To_v1beta1_KubeadmConfigStatus(&restored.Status, &status, nil); err != nil {
			return err
		}
		if apiequality.Semantic.DeepEqual(status, src.Status) {
			dst.Status = restored.Status
		}
	}
	data := kubeadmConfigV1beta1Data{Spec: kubeadmV1beta1SpecData(&src.Spec), Status: kubeadmConfigReadiness(&src.Status)}
	return setKubeadmV1beta1Data(dst, data, data != kubeadmConfigV1beta1Data{})
}

// kubeadmConfigReadiness returns the v1beta1 status's ready and initialization if v1beta2's
// initialization.dataSecretCreated (which the conversion takes from initialization, or else from ready)
// does not give them back: ready without initialization (older controllers), or the two disagreeing.
func kubeadmConfigReadiness(status *bootstrapv1beta1.KubeadmConfigStatus) *kubeadmConfigV1beta1Readiness {
	switch i := status.Initialization; {
	case i == nil && !status.Ready, i != nil && i.DataSecretCreated != nil && *i.DataSecretCreated == status.Ready:
		return nil
	}
	return &kubeadmConfigV1beta1Readiness{Ready: status.Ready, Initialization: status.Initialization}
}

// dataSecretCreated is v1beta2's initialization.dataSecretCreated for the v1beta1 readiness.
func (r *kubeadmConfigV1beta1Readiness) dataSecretCreated() *bool {
	if r.Initialization != nil && r.Initialization.DataSecretCreated != nil {
		return r.Initialization.DataSecretCreated
	}
	if r.Ready {
		return &r.Ready
	}
	return nil
}

func kubeadmConfigTemplateToV1beta1(_ context.Context, src *bootstrapv1.KubeadmConfigTemplate, dst *bootstrapv1beta1.KubeadmConfigTemplate) error {
	var data bootstrapv1beta1.KubeadmConfigSpec
	ok, err := kubeadmToV1beta1(src, dst, bootstrapv1beta1.Convert_v1beta2_KubeadmConfigTemplate_To_v1beta1_KubeadmConfigTemplate, &data)
	if err != nil {
		return err
	}
	if ok {
		restoreKubeadmV1beta1Spec(&data, &src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	}
	return MarshalData(src, dst)
}

func kubeadmConfigTemplateFromV1beta1(_ context.Context, src *bootstrapv1beta1.KubeadmConfigTemplate, dst *bootstrapv1.KubeadmConfigTemplate) error {
	restored := &bootstrapv1.KubeadmConfigTemplate{}
	ok, err := kubeadmFromV1beta1(src, dst, bootstrapv1beta1.Convert_v1beta1_KubeadmConfigTemplate_To_v1beta2_KubeadmConfigTemplate, restored)
	if err != nil {
		return err
	}
	if ok {
		if err := restoreKubeadmV1beta2Spec(&restored.Spec.Template.Spec, &src.Spec.Template.Spec, &dst.Spec.Template.Spec); err != nil {
			return err
		}
	}
	data := kubeadmV1beta1SpecData(&src.Spec.Template.Spec)
	return setKubeadmV1beta1Data(dst, data, data != nil)
}

// kubeadmV1beta1SpecData returns what of a v1beta1 KubeadmConfigSpec its v1beta2 conversion loses, as a
// spec with those fields alone; nil if nothing.
func kubeadmV1beta1SpecData(in *bootstrapv1beta1.KubeadmConfigSpec) *bootstrapv1beta1.KubeadmConfigSpec {
	out := &bootstrapv1beta1.KubeadmConfigSpec{UseExperimentalRetryJoin: in.UseExperimentalRetryJoin} //nolint:staticcheck // a v1beta1 object may still have it
	if c := in.ClusterConfiguration; c != nil {
		data := bootstrapv1beta1.ClusterConfiguration{TypeMeta: c.TypeMeta, Networking: c.Networking,
			KubernetesVersion: c.KubernetesVersion, ClusterName: c.ClusterName}
		data.APIServer.TimeoutForControlPlane = inexactDuration(c.APIServer.TimeoutForControlPlane)
		if !reflect.ValueOf(data).IsZero() {
			out.ClusterConfiguration = &data
		}
	}
	if c := in.InitConfiguration; c != nil {
		data := bootstrapv1beta1.InitConfiguration{TypeMeta: c.TypeMeta}
		for i, token := range c.BootstrapTokens {
			if ttl := inexactDuration(token.TTL); ttl != nil {
				if data.BootstrapTokens == nil {
					data.BootstrapTokens = make([]bootstrapv1beta1.BootstrapToken, len(c.BootstrapTokens))
				}
				data.BootstrapTokens[i].TTL = ttl
			}
		}
		if !reflect.ValueOf(data).IsZero() {
			out.InitConfiguration = &data
		}
	}
	if c := in.JoinConfiguration; c != nil {
		data := bootstrapv1beta1.JoinConfiguration{TypeMeta: c.TypeMeta}
		data.Discovery.Timeout = inexactDuration(c.Discovery.Timeout)
		if !reflect.ValueOf(data).IsZero() {
			out.JoinConfiguration = &data
		}
	}
	if reflect.ValueOf(*out).IsZero() {
		return nil
	}
	return out
}

// inexactDuration returns d if v1beta2's whole seconds do not give it back.
func inexactDuration(d *metav1.Duration) *metav1.Duration {
	if d == nil || *bootstrapv1beta1.SecondsToDuration(bootstrapv1beta1.DurationToSeconds(d)) == *d {
		return nil
	}
	return d
}

// restoreKubeadmV1beta1Spec sets on out, the v1beta1 conversion of hub, what kubeadmV1beta1SpecData kept:
// the fields v1beta2 lacks, and the exact durations where hub's seconds are still theirs.
func restoreKubeadmV1beta1Spec(data *bootstrapv1beta1.KubeadmConfigSpec, hub *bootstrapv1.KubeadmConfigSpec, out *bootstrapv1beta1.KubeadmConfigSpec) {
	if data == nil {
		return
	}
	out.UseExperimentalRetryJoin = data.UseExperimentalRetryJoin //nolint:staticcheck // a v1beta1 object may still have it
	if c := data.ClusterConfiguration; c != nil {
		if out.ClusterConfiguration == nil {
			out.ClusterConfiguration = &bootstrapv1beta1.ClusterConfiguration{}
		}
		out.ClusterConfiguration.TypeMeta = c.TypeMeta
		out.ClusterConfiguration.Networking = c.Networking
		out.ClusterConfiguration.KubernetesVersion = c.KubernetesVersion
		out.ClusterConfiguration.ClusterName = c.ClusterName
		if d := c.APIServer.TimeoutForControlPlane; sameSeconds(d, hub.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds) {
			out.ClusterConfiguration.APIServer.TimeoutForControlPlane = d
		}
	}
	if c := data.InitConfiguration; c != nil {
		if out.InitConfiguration == nil {
			out.InitConfiguration = &bootstrapv1beta1.InitConfiguration{}
		}
		out.InitConfiguration.TypeMeta = c.TypeMeta
		if len(c.BootstrapTokens) == len(out.InitConfiguration.BootstrapTokens) {
			for i, token := range c.BootstrapTokens {
				if sameSeconds(token.TTL, hub.InitConfiguration.BootstrapTokens[i].TTLSeconds) {
					out.InitConfiguration.BootstrapTokens[i].TTL = token.TTL
				}
			}
		}
	}
	if c := data.JoinConfiguration; c != nil {
		if out.JoinConfiguration == nil {
			out.JoinConfiguration = &bootstrapv1beta1.JoinConfiguration{}
		}
		out.JoinConfiguration.TypeMeta = c.TypeMeta
		if d := c.Discovery.Timeout; sameSeconds(d, hub.JoinConfiguration.Timeouts.TLSBootstrapSeconds) {
			out.JoinConfiguration.Discovery.Timeout = d
		}
	}
}

// sameSeconds reports whether d is set and is seconds in v1beta2.
func sameSeconds(d *metav1.Duration, seconds *int32) bool {
	return d != nil && seconds != nil && *bootstrapv1beta1.DurationToSeconds(d) == *seconds
}

// restoreKubeadmV1beta2Spec sets on out, the v1beta2 conversion of spoke, what restored (the v1beta2 spec
// spoke was converted from) has that v1beta1 cannot express. If spoke is still restored's conversion, that
// is restored itself; if spoke was changed in v1beta1, restored's values of the fields v1beta1 lacks, and
// restored's extraArgs lists where they are the same arguments as spoke's (their order and duplicates).
func restoreKubeadmV1beta2Spec(restored *bootstrapv1.KubeadmConfigSpec, spoke *bootstrapv1beta1.KubeadmConfigSpec, out *bootstrapv1.KubeadmConfigSpec) error {
	restoredSpoke := &bootstrapv1beta1.KubeadmConfigSpec{}
	if err := bootstrapv1beta1.Convert_v1beta2_KubeadmConfigSpec_To_v1beta1_KubeadmConfigSpec(restored, restoredSpoke, nil); err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(restoredSpoke, withoutKubeadmV1beta1Data(spoke)) {
		restored.DeepCopyInto(out)
		return nil
	}

	// Timeouts: v1beta2's, but for those v1beta1 has and changed.
	init, join := &out.InitConfiguration.Timeouts, &out.JoinConfiguration.Timeouts
	changedInit := !reflect.DeepEqual(init.ControlPlaneComponentHealthCheckSeconds, restored.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds)
	changedTLS := !reflect.DeepEqual(join.TLSBootstrapSeconds, restored.JoinConfiguration.Timeouts.TLSBootstrapSeconds)
	controlPlane, tls := init.ControlPlaneComponentHealthCheckSeconds, join.TLSBootstrapSeconds
	*init = *restored.InitConfiguration.Timeouts.DeepCopy()
	*join = *restored.JoinConfiguration.Timeouts.DeepCopy()
	if changedInit {
		init.ControlPlaneComponentHealthCheckSeconds = controlPlane
		join.ControlPlaneComponentHealthCheckSeconds = controlPlane
	}
	if changedTLS {
		join.TLSBootstrapSeconds = tls
	}

	c, rc := &out.ClusterConfiguration, &restored.ClusterConfiguration
	restoreArgs(&c.APIServer.ExtraArgs, rc.APIServer.ExtraArgs)
	restoreArgs(&c.ControllerManager.ExtraArgs, rc.ControllerManager.ExtraArgs)
	restoreArgs(&c.Scheduler.ExtraArgs, rc.Scheduler.ExtraArgs)
	restoreArgs(&c.Etcd.Local.ExtraArgs, rc.Etcd.Local.ExtraArgs)
	restoreArgs(&out.InitConfiguration.NodeRegistration.KubeletExtraArgs, restored.InitConfiguration.NodeRegistration.KubeletExtraArgs)
	restoreArgs(&out.JoinConfiguration.NodeRegistration.KubeletExtraArgs, restored.JoinConfiguration.NodeRegistration.KubeletExtraArgs)

	for i := range out.Files {
		for _, f := range restored.Files {
			if f.Path == out.Files[i].Path {
				restoreUnsetBool(&out.Files[i].Append, f.Append)
				break
			}
		}
	}
	for i := range out.DiskSetup.Partitions {
		p := &out.DiskSetup.Partitions[i]
		for _, rp := range restored.DiskSetup.Partitions {
			if rp.Device == p.Device {
				restoreUnsetBool(&p.Layout, rp.Layout)
				break
			}
		}
	}
	restoreVolumes(c.APIServer.ExtraVolumes, rc.APIServer.ExtraVolumes)
	restoreVolumes(c.ControllerManager.ExtraVolumes, rc.ControllerManager.ExtraVolumes)
	restoreVolumes(c.Scheduler.ExtraVolumes, rc.Scheduler.ExtraVolumes)
	d, rd := &out.JoinConfiguration.Discovery, &restored.JoinConfiguration.Discovery
	restoreUnsetBool(&d.BootstrapToken.UnsafeSkipCAVerification, rd.BootstrapToken.UnsafeSkipCAVerification)
	restoreUnsetBool(&d.File.KubeConfig.Cluster.InsecureSkipTLSVerify, rd.File.KubeConfig.Cluster.InsecureSkipTLSVerify)
	restoreUnsetBool(&d.File.KubeConfig.User.Exec.ProvideClusterInfo, rd.File.KubeConfig.User.Exec.ProvideClusterInfo)
	restoreUnsetBool(&out.Ignition.ContainerLinuxConfig.Strict, restored.Ignition.ContainerLinuxConfig.Strict)
	return nil
}

// restoreUnsetBool unsets a v1beta2 flag that v1beta1's false set, where restored had it unset.
func restoreUnsetBool(b **bool, restored *bool) {
	if *b != nil && !**b && restored == nil {
		*b = nil
	}
}

func restoreVolumes(volumes, restored []bootstrapv1.HostPathMount) {
	for i := range volumes {
		for _, r := range restored {
			if r.Name == volumes[i].Name && r.HostPath == volumes[i].HostPath {
				restoreUnsetBool(&volumes[i].ReadOnly, r.ReadOnly)
				break
			}
		}
	}
}

// withoutKubeadmV1beta1Data returns spoke without the fields kubeadmV1beta1SpecData keeps (which v1beta2
// has not), as a v1beta2 spec's conversion would be.
func withoutKubeadmV1beta1Data(spoke *bootstrapv1beta1.KubeadmConfigSpec) *bootstrapv1beta1.KubeadmConfigSpec {
	out := spoke.DeepCopy()
	out.UseExperimentalRetryJoin = false //nolint:staticcheck // a v1beta1 object may still have it
	if c := out.ClusterConfiguration; c != nil {
		c.TypeMeta, c.Networking, c.KubernetesVersion, c.ClusterName = metav1.TypeMeta{}, bootstrapv1beta1.Networking{}, "", ""
		if reflect.ValueOf(*c).IsZero() {
			out.ClusterConfiguration = nil
		}
	}
	if c := out.InitConfiguration; c != nil {
		c.TypeMeta = metav1.TypeMeta{}
		if reflect.ValueOf(*c).IsZero() {
			out.InitConfiguration = nil
		}
	}
	if c := out.JoinConfiguration; c != nil {
		c.TypeMeta = metav1.TypeMeta{}
		if reflect.ValueOf(*c).IsZero() {
			out.JoinConfiguration = nil
		}
	}
	return out
}

// restoreArgs sets args to restored if they are the same arguments (v1beta1's map of them): v1beta2's order
// and repeated names.
func restoreArgs(args *[]bootstrapv1.Arg, restored []bootstrapv1.Arg) {
	if restored != nil && maps.Equal(argsMap(*args), argsMap(restored)) {
		*args = restored
	}
}

func argsMap(args []bootstrapv1.Arg) map[string]string {
	out := make(map[string]string, len(args))
	for _, a := range args {
		out[a.Name] = ""
		if a.Value != nil {
			out[a.Name] = *a.Value
		}
	}
	return out
}

// setKubeadmV1beta1Data keeps data in dst's kubeadmV1beta1DataAnnotation if keep.
func setKubeadmV1beta1Data(dst metav1.Object, data any, keep bool) error {
	if !keep {
		return nil
	}
	return setAnnotationJSON(dst, kubeadmV1beta1DataAnnotation, data)
}

// kubeadmToV1beta1 is the start of a kubeadm kind's v1beta2 → v1beta1 conversion: the generated conversion
// of src into dst, src's metadata, and what kubeadmV1beta1DataAnnotation kept of an earlier v1beta1 object
// taken from dst into data.
func kubeadmToV1beta1[S, D metav1.ObjectMetaAccessor](src S, dst D, convert func(S, D, apiconversion.Scope) error, data any) (bool, error) {
	if err := convert(src, dst, nil); err != nil {
		return false, err
	}
	copyObjectMeta(src, dst)
	return takeAnnotationJSON(dst.GetObjectMeta(), kubeadmV1beta1DataAnnotation, data)
}

// kubeadmFromV1beta1 is the start of a kubeadm kind's v1beta1 → v1beta2 conversion: the generated
// conversion of src into dst, src's metadata but for kubeadmV1beta1DataAnnotation (a v1beta1 client
// writing it back), and what DataAnnotation kept of the v1beta2 object taken from dst into restored.
func kubeadmFromV1beta1[S, D metav1.ObjectMetaAccessor](src S, dst D, convert func(S, D, apiconversion.Scope) error, restored any) (bool, error) {
	if err := convert(src, dst, nil); err != nil {
		return false, err
	}
	copyObjectMeta(src, dst)
	meta := dst.GetObjectMeta()
	if annotations := meta.GetAnnotations(); annotations != nil {
		delete(annotations, kubeadmV1beta1DataAnnotation)
	}
	return UnmarshalData(meta, restored)
}

// copyObjectMeta gives dst a deep copy of src's metadata.
func copyObjectMeta(src, dst metav1.ObjectMetaAccessor) {
	src.GetObjectMeta().(*metav1.ObjectMeta).DeepCopyInto(dst.GetObjectMeta().(*metav1.ObjectMeta))
}

// KubeadmControlPlane returns the conversions of the controlplane.cluster.x-k8s.io kinds: v1beta1 ⇄ v1beta2
// (the hub). versions gives the apiVersion of the machine template's infrastructureRef in v1beta1.
func KubeadmControlPlane(versions APIVersions) Kinds {
	return Kinds{
		{GroupKind: controlplanev1.GroupVersion.WithKind("KubeadmControlPlane").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&controlplanev1.KubeadmControlPlane{},
			crconversion.NewSpokeConverter(&controlplanev1beta1.KubeadmControlPlane{}, kubeadmControlPlaneToV1beta1(versions), kubeadmControlPlaneFromV1beta1(versions)))},
		{GroupKind: controlplanev1.GroupVersion.WithKind("KubeadmControlPlaneTemplate").GroupKind(), Converter: crconversion.NewHubSpokeConverter(&controlplanev1.KubeadmControlPlaneTemplate{},
			crconversion.NewSpokeConverter(&controlplanev1beta1.KubeadmControlPlaneTemplate{}, kubeadmControlPlaneTemplateToV1beta1, kubeadmControlPlaneTemplateFromV1beta1))},
	}
}

// kubeadmControlPlaneV1beta1Data is what kubeadmV1beta1DataAnnotation keeps of a v1beta1 KubeadmControlPlane
// or KubeadmControlPlaneTemplate.
type kubeadmControlPlaneV1beta1Data struct {
	KubeadmConfigSpec *bootstrapv1beta1.KubeadmConfigSpec `json:"kubeadmConfigSpec,omitempty"`
	// InfrastructureRef is the machine template's reference where v1beta2's (group, kind and name) does
	// not give it back: another apiVersion than the contract's, another namespace, a uid...
	InfrastructureRef *corev1.ObjectReference `json:"infrastructureRef,omitempty"`
	// The durations that are not whole seconds.
	NodeDrainTimeout        *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	NodeDeletionTimeout     *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	RetryPeriod             *metav1.Duration `json:"retryPeriod,omitempty"`
	MinHealthyPeriod        *metav1.Duration `json:"minHealthyPeriod,omitempty"`
	// RolloutStrategyTypeUnset says the rollout strategy had no type (v1beta2's is RollingUpdate).
	RolloutStrategyTypeUnset bool `json:"rolloutStrategyTypeUnset,omitempty"`
	// Ready is status.ready where it is not readyReplicas > 0.
	Ready *bool `json:"ready,omitempty"`
}

func (d *kubeadmControlPlaneV1beta1Data) keepRolloutStrategyType(strategy *controlplanev1beta1.RolloutStrategy) {
	d.RolloutStrategyTypeUnset = strategy != nil && strategy.Type == ""
}

func (d *kubeadmControlPlaneV1beta1Data) restoreRolloutStrategyType(strategy *controlplanev1beta1.RolloutStrategy) {
	if d.RolloutStrategyTypeUnset && strategy != nil && strategy.Type == controlplanev1beta1.RollingUpdateStrategyType {
		strategy.Type = ""
	}
}

// kubeadmControlPlaneTimeouts are the v1beta1 durations of a control plane's spec and their v1beta2 seconds.
type kubeadmControlPlaneTimeouts struct {
	drain, detach, deletion, retry, minHealthy *metav1.Duration
}

func (t kubeadmControlPlaneTimeouts) data(d *kubeadmControlPlaneV1beta1Data) {
	d.NodeDrainTimeout, d.NodeVolumeDetachTimeout, d.NodeDeletionTimeout = inexactDuration(t.drain), inexactDuration(t.detach), inexactDuration(t.deletion)
	d.RetryPeriod, d.MinHealthyPeriod = inexactDuration(t.retry), inexactDuration(t.minHealthy)
}

func machineTemplateTimeouts(drain, detach, deletion *metav1.Duration, remediation *controlplanev1beta1.RemediationStrategy) kubeadmControlPlaneTimeouts {
	t := kubeadmControlPlaneTimeouts{drain: drain, detach: detach, deletion: deletion}
	if remediation != nil {
		t.retry, t.minHealthy = &remediation.RetryPeriod, remediation.MinHealthyPeriod
	}
	return t
}

// restoreDuration sets *d to kept if kept is still v1beta2's seconds.
func restoreDuration(d **metav1.Duration, kept *metav1.Duration, seconds *int32) {
	if sameSeconds(kept, seconds) {
		*d = kept
	}
}

func restoreControlPlaneTimeouts(data *kubeadmControlPlaneV1beta1Data, drain, detach, deletion **metav1.Duration, remediation *controlplanev1beta1.RemediationStrategy,
	deletionSpec controlplanev1.KubeadmControlPlaneMachineTemplateDeletionSpec, hubRemediation *controlplanev1.KubeadmControlPlaneRemediationSpec) {
	restoreDuration(drain, data.NodeDrainTimeout, deletionSpec.NodeDrainTimeoutSeconds)
	restoreDuration(detach, data.NodeVolumeDetachTimeout, deletionSpec.NodeVolumeDetachTimeoutSeconds)
	restoreDuration(deletion, data.NodeDeletionTimeout, deletionSpec.NodeDeletionTimeoutSeconds)
	if remediation != nil {
		retry := &remediation.RetryPeriod
		restoreDuration(&retry, data.RetryPeriod, hubRemediation.RetryPeriodSeconds)
		remediation.RetryPeriod = *retry
		restoreDuration(&remediation.MinHealthyPeriod, data.MinHealthyPeriod, hubRemediation.MinHealthyPeriodSeconds)
	}
}

func kubeadmControlPlaneToV1beta1(versions APIVersions) func(context.Context, *controlplanev1.KubeadmControlPlane, *controlplanev1beta1.KubeadmControlPlane) error {
	return func(ctx context.Context, src *controlplanev1.KubeadmControlPlane, dst *controlplanev1beta1.KubeadmControlPlane) error {
		var data kubeadmControlPlaneV1beta1Data
		if _, err := kubeadmToV1beta1(src, dst, controlplanev1beta1.Convert_v1beta2_KubeadmControlPlane_To_v1beta1_KubeadmControlPlane, &data); err != nil {
			return err
		}
		ref := src.Spec.MachineTemplate.Spec.InfrastructureRef
		if kept := data.InfrastructureRef; kept != nil && sameReference(kept, ref) {
			dst.Spec.MachineTemplate.InfrastructureRef = *kept
		} else {
			infra, err := objectReference(ctx, versions, ref, src.Namespace)
			if err != nil {
				return err
			}
			dst.Spec.MachineTemplate.InfrastructureRef = corev1.ObjectReference{}
			if infra != nil {
				dst.Spec.MachineTemplate.InfrastructureRef = *infra
			}
		}
		restoreKubeadmV1beta1Spec(data.KubeadmConfigSpec, &src.Spec.KubeadmConfigSpec, &dst.Spec.KubeadmConfigSpec)
		mt := &dst.Spec.MachineTemplate
		restoreControlPlaneTimeouts(&data, &mt.NodeDrainTimeout, &mt.NodeVolumeDetachTimeout, &mt.NodeDeletionTimeout, dst.Spec.RemediationStrategy,
			src.Spec.MachineTemplate.Spec.Deletion, &src.Spec.Remediation)
		data.restoreRolloutStrategyType(dst.Spec.RolloutStrategy)
		if data.Ready != nil && *data.Ready != dst.Status.Ready {
			dst.Status.Ready = *data.Ready
		}
		return MarshalData(src, dst)
	}
}

// sameReference reports whether the v1beta1 reference is the v1beta2 one: the same group, kind and name.
func sameReference(v1beta1Ref *corev1.ObjectReference, ref clusterv1.ContractVersionedObjectReference) bool {
	converted, err := contractReference(v1beta1Ref)
	return err == nil && converted == ref
}

func kubeadmControlPlaneFromV1beta1(versions APIVersions) func(context.Context, *controlplanev1beta1.KubeadmControlPlane, *controlplanev1.KubeadmControlPlane) error {
	return func(ctx context.Context, src *controlplanev1beta1.KubeadmControlPlane, dst *controlplanev1.KubeadmControlPlane) error {
		restored := &controlplanev1.KubeadmControlPlane{}
		ok, err := kubeadmFromV1beta1(src, dst, controlplanev1beta1.Convert_v1beta1_KubeadmControlPlane_To_v1beta2_KubeadmControlPlane, restored)
		if err != nil {
			return err
		}
		srcRef := src.Spec.MachineTemplate.InfrastructureRef
		ref, err := contractReference(&srcRef)
		if err != nil {
			return err
		}
		if ok {
			if err := restoreKubeadmControlPlaneSpec(&restored.Spec, &src.Spec, &dst.Spec); err != nil {
				return err
			}
			status := controlplanev1beta1.KubeadmControlPlaneStatus{}
			if err := controlplanev1beta1.Convert_v1beta2_KubeadmControlPlaneStatus_To_v1beta1_KubeadmControlPlaneStatus(&restored.Status, &status, nil); err != nil {
				return err
			}
			status.Ready = src.Status.Ready // kept apart
			if apiequality.Semantic.DeepEqual(status, src.Status) {
				dst.Status = restored.Status
			}
		}
		dst.Spec.MachineTemplate.Spec.InfrastructureRef = ref

		data := kubeadmControlPlaneV1beta1Data{KubeadmConfigSpec: kubeadmV1beta1SpecData(&src.Spec.KubeadmConfigSpec)}
		mt := &src.Spec.MachineTemplate
		machineTemplateTimeouts(mt.NodeDrainTimeout, mt.NodeVolumeDetachTimeout, mt.NodeDeletionTimeout, src.Spec.RemediationStrategy).data(&data)
		if srcRef != (corev1.ObjectReference{}) && !derivedReference(ctx, versions, srcRef, ref, src.Namespace) {
			data.InfrastructureRef = &srcRef
		}
		data.keepRolloutStrategyType(src.Spec.RolloutStrategy)
		if ready := src.Status.ReadyReplicas > 0; src.Status.Ready != ready {
			data.Ready = &src.Status.Ready
		}
		return setKubeadmV1beta1Data(dst, data, data != kubeadmControlPlaneV1beta1Data{})
	}
}

// derivedReference reports whether converting ref back to v1beta1 gives v1beta1Ref.
func derivedReference(ctx context.Context, versions APIVersions, v1beta1Ref corev1.ObjectReference, ref clusterv1.ContractVersionedObjectReference, namespace string) bool {
	derived, err := objectReference(ctx, versions, ref, namespace)
	return err == nil && derived != nil && *derived == v1beta1Ref
}

// restoreKubeadmControlPlaneSpec sets on out, the v1beta2 conversion of spoke, what restored (the v1beta2
// spec spoke was converted from) has that v1beta1 cannot express: restored itself if spoke is still its
// conversion (but for the infrastructureRef, which the caller sets), else the kubeadm configuration's as
// restoreKubeadmV1beta2Spec does.
func restoreKubeadmControlPlaneSpec(restored *controlplanev1.KubeadmControlPlaneSpec, spoke *controlplanev1beta1.KubeadmControlPlaneSpec, out *controlplanev1.KubeadmControlPlaneSpec) error {
	restoredSpoke := &controlplanev1beta1.KubeadmControlPlaneSpec{}
	if err := controlplanev1beta1.Convert_v1beta2_KubeadmControlPlaneSpec_To_v1beta1_KubeadmControlPlaneSpec(restored, restoredSpoke, nil); err != nil {
		return err
	}
	spokeWithout := spoke.DeepCopy()
	spokeWithout.MachineTemplate.InfrastructureRef = corev1.ObjectReference{}
	spokeWithout.KubeadmConfigSpec = *withoutKubeadmV1beta1Data(&spoke.KubeadmConfigSpec)
	if apiequality.Semantic.DeepEqual(restoredSpoke, spokeWithout) {
		restored.DeepCopyInto(out)
		return nil
	}
	if err := restoreKubeadmV1beta2Spec(&restored.KubeadmConfigSpec, &spoke.KubeadmConfigSpec, &out.KubeadmConfigSpec); err != nil {
		return err
	}
	restoreUnsetSeconds(&out.Remediation.RetryPeriodSeconds, restored.Remediation.RetryPeriodSeconds)
	return nil
}

// restoreUnsetSeconds unsets v1beta2 seconds that v1beta1's zero duration (a value, not a pointer) set,
// where restored had them unset.
func restoreUnsetSeconds(seconds **int32, restored *int32) {
	if *seconds != nil && **seconds == 0 && restored == nil {
		*seconds = nil
	}
}

func kubeadmControlPlaneTemplateToV1beta1(_ context.Context, src *controlplanev1.KubeadmControlPlaneTemplate, dst *controlplanev1beta1.KubeadmControlPlaneTemplate) error {
	var data kubeadmControlPlaneV1beta1Data
	if _, err := kubeadmToV1beta1(src, dst, controlplanev1beta1.Convert_v1beta2_KubeadmControlPlaneTemplate_To_v1beta1_KubeadmControlPlaneTemplate, &data); err != nil {
		return err
	}
	in, out := &src.Spec.Template.Spec, &dst.Spec.Template.Spec
	restoreKubeadmV1beta1Spec(data.KubeadmConfigSpec, &in.KubeadmConfigSpec, &out.KubeadmConfigSpec)
	var drain, detach, deletion *metav1.Duration
	if out.MachineTemplate != nil {
		drain, detach, deletion = out.MachineTemplate.NodeDrainTimeout, out.MachineTemplate.NodeVolumeDetachTimeout, out.MachineTemplate.NodeDeletionTimeout
	}
	d := in.MachineTemplate.Spec.Deletion
	restoreControlPlaneTimeouts(&data, &drain, &detach, &deletion, out.RemediationStrategy,
		controlplanev1.KubeadmControlPlaneMachineTemplateDeletionSpec(d),
		&in.Remediation)
	if out.MachineTemplate != nil {
		out.MachineTemplate.NodeDrainTimeout, out.MachineTemplate.NodeVolumeDetachTimeout, out.MachineTemplate.NodeDeletionTimeout = drain, detach, deletion
	}
	data.restoreRolloutStrategyType(out.RolloutStrategy)
	return MarshalData(src, dst)
}

func kubeadmControlPlaneTemplateFromV1beta1(_ context.Context, src *controlplanev1beta1.KubeadmControlPlaneTemplate, dst *controlplanev1.KubeadmControlPlaneTemplate) error {
	restored := &controlplanev1.KubeadmControlPlaneTemplate{}
	ok, err := kubeadmFromV1beta1(src, dst, controlplanev1beta1.Convert_v1beta1_KubeadmControlPlaneTemplate_To_v1beta2_KubeadmControlPlaneTemplate, restored)
	if err != nil {
		return err
	}
	in, out := &src.Spec.Template.Spec, &dst.Spec.Template.Spec
	if ok {
		if err := restoreKubeadmControlPlaneTemplateSpec(&restored.Spec.Template.Spec, in, out); err != nil {
			return err
		}
	}
	data := kubeadmControlPlaneV1beta1Data{KubeadmConfigSpec: kubeadmV1beta1SpecData(&in.KubeadmConfigSpec)}
	if mt := in.MachineTemplate; mt != nil {
		machineTemplateTimeouts(mt.NodeDrainTimeout, mt.NodeVolumeDetachTimeout, mt.NodeDeletionTimeout, in.RemediationStrategy).data(&data)
	} else {
		machineTemplateTimeouts(nil, nil, nil, in.RemediationStrategy).data(&data)
	}
	data.keepRolloutStrategyType(in.RolloutStrategy)
	return setKubeadmV1beta1Data(dst, data, data != kubeadmControlPlaneV1beta1Data{})
}

// restoreKubeadmControlPlaneTemplateSpec is restoreKubeadmControlPlaneSpec for the template.
func restoreKubeadmControlPlaneTemplateSpec(restored *controlplanev1.KubeadmControlPlaneTemplateResourceSpec, spoke *controlplanev1beta1.KubeadmControlPlaneTemplateResourceSpec, out *controlplanev1.KubeadmControlPlaneTemplateResourceSpec) error {
	restoredSpoke := &controlplanev1beta1.KubeadmControlPlaneTemplateResourceSpec{}
	if err := controlplanev1beta1.Convert_v1beta2_KubeadmControlPlaneTemplateResourceSpec_To_v1beta1_KubeadmControlPlaneTemplateResourceSpec(restored, restoredSpoke, nil); err != nil {
		return err
	}
	spokeWithout := spoke.DeepCopy()
	spokeWithout.KubeadmConfigSpec = *withoutKubeadmV1beta1Data(&spoke.KubeadmConfigSpec)
	if apiequality.Semantic.DeepEqual(restoredSpoke, spokeWithout) {
		restored.DeepCopyInto(out)
		return nil
	}
	if err := restoreKubeadmV1beta2Spec(&restored.KubeadmConfigSpec, &spoke.KubeadmConfigSpec, &out.KubeadmConfigSpec); err != nil {
		return err
	}
	restoreUnsetSeconds(&out.Remediation.RetryPeriodSeconds, restored.Remediation.RetryPeriodSeconds)
	return nil
}

package v1beta1

import (
	"math"
	"reflect"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta2"
	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// The hand-written halves of the conversion between this package and bootstrap v1beta2 (the hub), which
// zz_generated.conversion.go calls: field mapping alone (upstream's names, which conversion-gen looks for).
// The two timeouts v1beta1 has elsewhere are moved to and from v1beta2's timeouts here (the spec's
// conversion). What one version cannot express is kept in an annotation and restored by internal/conversion:
// v1beta2's new fields and other timeouts, the order and repeated names of v1beta2's extraArgs lists,
// v1beta1's fields v1beta2 dropped (kubernetesVersion, clusterName, networking...), durations that are not
// whole seconds.

// Convert_v1beta1_KubeadmConfigSpec_To_v1beta2_KubeadmConfigSpec converts the spec; useExperimentalRetryJoin
// has no v1beta2 field.
func Convert_v1beta1_KubeadmConfigSpec_To_v1beta2_KubeadmConfigSpec(in *KubeadmConfigSpec, out *bootstrapv1.KubeadmConfigSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmConfigSpec_To_v1beta2_KubeadmConfigSpec(in, out, s); err != nil {
		return err
	}
	if in.ClusterConfiguration != nil {
		if err := Convert_v1beta1_ClusterConfiguration_To_v1beta2_ClusterConfiguration(in.ClusterConfiguration, &out.ClusterConfiguration, s); err != nil {
			return err
		}
	}
	if in.InitConfiguration != nil {
		if err := Convert_v1beta1_InitConfiguration_To_v1beta2_InitConfiguration(in.InitConfiguration, &out.InitConfiguration, s); err != nil {
			return err
		}
	}
	if in.JoinConfiguration != nil {
		if err := Convert_v1beta1_JoinConfiguration_To_v1beta2_JoinConfiguration(in.JoinConfiguration, &out.JoinConfiguration, s); err != nil {
			return err
		}
	}
	if in.DiskSetup != nil {
		if err := Convert_v1beta1_DiskSetup_To_v1beta2_DiskSetup(in.DiskSetup, &out.DiskSetup, s); err != nil {
			return err
		}
	}
	if in.NTP != nil {
		if err := Convert_v1beta1_NTP_To_v1beta2_NTP(in.NTP, &out.NTP, s); err != nil {
			return err
		}
	}
	if in.Ignition != nil {
		if err := Convert_v1beta1_IgnitionSpec_To_v1beta2_IgnitionSpec(in.Ignition, &out.Ignition, s); err != nil {
			return err
		}
	}
	// v1beta1's two timeouts are in v1beta2's timeouts: apiServer.timeoutForControlPlane is the control plane
	// components' health check on init and on join (one ClusterConfiguration serves both), discovery.timeout
	// the join's TLS bootstrap.
	if in.ClusterConfiguration != nil && in.ClusterConfiguration.APIServer.TimeoutForControlPlane != nil {
		seconds := DurationToSeconds(in.ClusterConfiguration.APIServer.TimeoutForControlPlane)
		out.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds = seconds
		out.JoinConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds = seconds
	}
	if in.JoinConfiguration != nil && in.JoinConfiguration.Discovery.Timeout != nil {
		out.JoinConfiguration.Timeouts.TLSBootstrapSeconds = DurationToSeconds(in.JoinConfiguration.Discovery.Timeout)
	}
	return nil
}

// Convert_v1beta2_KubeadmConfigSpec_To_v1beta1_KubeadmConfigSpec converts the spec; a v1beta2 struct left
// empty is an unset v1beta1 pointer.
func Convert_v1beta2_KubeadmConfigSpec_To_v1beta1_KubeadmConfigSpec(in *bootstrapv1.KubeadmConfigSpec, out *KubeadmConfigSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmConfigSpec_To_v1beta1_KubeadmConfigSpec(in, out, s); err != nil {
		return err
	}
	var err error
	if out.ClusterConfiguration, err = convertUnlessEmpty(&in.ClusterConfiguration, Convert_v1beta2_ClusterConfiguration_To_v1beta1_ClusterConfiguration, s); err != nil {
		return err
	}
	if out.InitConfiguration, err = convertUnlessEmpty(&in.InitConfiguration, Convert_v1beta2_InitConfiguration_To_v1beta1_InitConfiguration, s); err != nil {
		return err
	}
	if out.JoinConfiguration, err = convertUnlessEmpty(&in.JoinConfiguration, Convert_v1beta2_JoinConfiguration_To_v1beta1_JoinConfiguration, s); err != nil {
		return err
	}
	if out.DiskSetup, err = convertUnlessEmpty(&in.DiskSetup, Convert_v1beta2_DiskSetup_To_v1beta1_DiskSetup, s); err != nil {
		return err
	}
	if out.NTP, err = convertUnlessEmpty(&in.NTP, Convert_v1beta2_NTP_To_v1beta1_NTP, s); err != nil {
		return err
	}
	if out.Ignition, err = convertUnlessEmpty(&in.Ignition, Convert_v1beta2_IgnitionSpec_To_v1beta1_IgnitionSpec, s); err != nil {
		return err
	}
	// The timeouts v1beta1 has (the others are lost; the join's control plane health check is the init's).
	if seconds := in.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds; seconds != nil {
		if out.ClusterConfiguration == nil {
			out.ClusterConfiguration = &ClusterConfiguration{}
		}
		out.ClusterConfiguration.APIServer.TimeoutForControlPlane = SecondsToDuration(seconds)
	}
	if seconds := in.JoinConfiguration.Timeouts.TLSBootstrapSeconds; seconds != nil {
		if out.JoinConfiguration == nil {
			out.JoinConfiguration = &JoinConfiguration{}
		}
		out.JoinConfiguration.Discovery.Timeout = SecondsToDuration(seconds)
	}
	// A configuration that had timeouts alone is none.
	if out.InitConfiguration != nil && reflect.ValueOf(*out.InitConfiguration).IsZero() {
		out.InitConfiguration = nil
	}
	if out.JoinConfiguration != nil && reflect.ValueOf(*out.JoinConfiguration).IsZero() {
		out.JoinConfiguration = nil
	}
	return nil
}

// Convert_v1beta1_ClusterConfiguration_To_v1beta2_ClusterConfiguration converts the cluster configuration;
// v1beta2 has no apiVersion and kind, kubernetesVersion, networking nor clusterName (the controllers take them
// from the Cluster and the Machine), and apiServer.timeoutForControlPlane is
// initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds, which the spec's conversion moves.
func Convert_v1beta1_ClusterConfiguration_To_v1beta2_ClusterConfiguration(in *ClusterConfiguration, out *bootstrapv1.ClusterConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta1_ClusterConfiguration_To_v1beta2_ClusterConfiguration(in, out, s)
}

// Convert_v1beta2_ClusterConfiguration_To_v1beta1_ClusterConfiguration converts the cluster configuration;
// v1beta1 has no encryptionAlgorithm nor certificate validity periods.
func Convert_v1beta2_ClusterConfiguration_To_v1beta1_ClusterConfiguration(in *bootstrapv1.ClusterConfiguration, out *ClusterConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	return autoConvert_v1beta2_ClusterConfiguration_To_v1beta1_ClusterConfiguration(in, out, s)
}

// Convert_v1beta1_APIServer_To_v1beta2_APIServer converts the API server's settings; timeoutForControlPlane
// is moved by the spec's conversion.
func Convert_v1beta1_APIServer_To_v1beta2_APIServer(in *APIServer, out *bootstrapv1.APIServer, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta2(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta2(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta2(in.ExtraVolumes)
	return autoConvert_v1beta1_APIServer_To_v1beta2_APIServer(in, out, s)
}

// Convert_v1beta2_APIServer_To_v1beta1_APIServer converts the API server's settings.
func Convert_v1beta2_APIServer_To_v1beta1_APIServer(in *bootstrapv1.APIServer, out *APIServer, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta1(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta1(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta1(in.ExtraVolumes)
	return autoConvert_v1beta2_APIServer_To_v1beta1_APIServer(in, out, s)
}

// Convert_v1beta1_ControlPlaneComponent_To_v1beta2_ControllerManager converts the controller manager's settings.
func Convert_v1beta1_ControlPlaneComponent_To_v1beta2_ControllerManager(in *ControlPlaneComponent, out *bootstrapv1.ControllerManager, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta2(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta2(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta2(in.ExtraVolumes)
	return nil
}

// Convert_v1beta2_ControllerManager_To_v1beta1_ControlPlaneComponent converts the controller manager's settings.
func Convert_v1beta2_ControllerManager_To_v1beta1_ControlPlaneComponent(in *bootstrapv1.ControllerManager, out *ControlPlaneComponent, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta1(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta1(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta1(in.ExtraVolumes)
	return nil
}

// Convert_v1beta1_ControlPlaneComponent_To_v1beta2_Scheduler converts the scheduler's settings.
func Convert_v1beta1_ControlPlaneComponent_To_v1beta2_Scheduler(in *ControlPlaneComponent, out *bootstrapv1.Scheduler, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta2(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta2(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta2(in.ExtraVolumes)
	return nil
}

// Convert_v1beta2_Scheduler_To_v1beta1_ControlPlaneComponent converts the scheduler's settings.
func Convert_v1beta2_Scheduler_To_v1beta1_ControlPlaneComponent(in *bootstrapv1.Scheduler, out *ControlPlaneComponent, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ExtraArgs = argsToV1beta1(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta1(in.ExtraEnvs)
	out.ExtraVolumes = volumesToV1beta1(in.ExtraVolumes)
	return nil
}

// Convert_v1beta1_LocalEtcd_To_v1beta2_LocalEtcd converts the local etcd's settings.
func Convert_v1beta1_LocalEtcd_To_v1beta2_LocalEtcd(in *LocalEtcd, out *bootstrapv1.LocalEtcd, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ImageRepository, out.ImageTag = in.ImageRepository, in.ImageTag
	out.ExtraArgs = argsToV1beta2(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta2(in.ExtraEnvs)
	return autoConvert_v1beta1_LocalEtcd_To_v1beta2_LocalEtcd(in, out, s)
}

// Convert_v1beta2_LocalEtcd_To_v1beta1_LocalEtcd converts the local etcd's settings.
func Convert_v1beta2_LocalEtcd_To_v1beta1_LocalEtcd(in *bootstrapv1.LocalEtcd, out *LocalEtcd, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ImageRepository, out.ImageTag = in.ImageRepository, in.ImageTag
	out.ExtraArgs = argsToV1beta1(in.ExtraArgs)
	out.ExtraEnvs = envsToV1beta1(in.ExtraEnvs)
	return autoConvert_v1beta2_LocalEtcd_To_v1beta1_LocalEtcd(in, out, s)
}

// Convert_v1beta1_DNS_To_v1beta2_DNS converts the DNS add-on's image.
func Convert_v1beta1_DNS_To_v1beta2_DNS(in *DNS, out *bootstrapv1.DNS, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ImageRepository, out.ImageTag = in.ImageRepository, in.ImageTag
	return nil
}

// Convert_v1beta2_DNS_To_v1beta1_DNS converts the DNS add-on's image.
func Convert_v1beta2_DNS_To_v1beta1_DNS(in *bootstrapv1.DNS, out *DNS, _ apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.ImageRepository, out.ImageTag = in.ImageRepository, in.ImageTag
	return nil
}

// Convert_v1beta1_Etcd_To_v1beta2_Etcd converts the etcd settings.
func Convert_v1beta1_Etcd_To_v1beta2_Etcd(in *Etcd, out *bootstrapv1.Etcd, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if in.Local != nil {
		if err := Convert_v1beta1_LocalEtcd_To_v1beta2_LocalEtcd(in.Local, &out.Local, s); err != nil {
			return err
		}
	}
	if in.External != nil {
		return Convert_v1beta1_ExternalEtcd_To_v1beta2_ExternalEtcd(in.External, &out.External, s)
	}
	return nil
}

// Convert_v1beta2_Etcd_To_v1beta1_Etcd converts the etcd settings.
func Convert_v1beta2_Etcd_To_v1beta1_Etcd(in *bootstrapv1.Etcd, out *Etcd, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	var err error
	if out.Local, err = convertUnlessEmpty(&in.Local, Convert_v1beta2_LocalEtcd_To_v1beta1_LocalEtcd, s); err != nil {
		return err
	}
	out.External, err = convertUnlessEmpty(&in.External, Convert_v1beta2_ExternalEtcd_To_v1beta1_ExternalEtcd, s)
	return err
}

// Convert_v1beta1_NodeRegistrationOptions_To_v1beta2_NodeRegistrationOptions converts the node's
// registration; an empty list of taints (no taints at all, not kubeadm's default) stays one.
func Convert_v1beta1_NodeRegistrationOptions_To_v1beta2_NodeRegistrationOptions(in *NodeRegistrationOptions, out *bootstrapv1.NodeRegistrationOptions, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.KubeletExtraArgs = argsToV1beta2(in.KubeletExtraArgs)
	out.Taints = nil
	if in.Taints != nil {
		taints := in.Taints
		out.Taints = &taints
	}
	return autoConvert_v1beta1_NodeRegistrationOptions_To_v1beta2_NodeRegistrationOptions(in, out, s)
}

// Convert_v1beta2_NodeRegistrationOptions_To_v1beta1_NodeRegistrationOptions converts the node's registration.
func Convert_v1beta2_NodeRegistrationOptions_To_v1beta1_NodeRegistrationOptions(in *bootstrapv1.NodeRegistrationOptions, out *NodeRegistrationOptions, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	out.KubeletExtraArgs = argsToV1beta1(in.KubeletExtraArgs)
	out.Taints = nil
	if in.Taints != nil {
		out.Taints = *in.Taints
		if out.Taints == nil {
			out.Taints = []corev1.Taint{}
		}
	}
	return autoConvert_v1beta2_NodeRegistrationOptions_To_v1beta1_NodeRegistrationOptions(in, out, s)
}

// Convert_v1beta1_BootstrapToken_To_v1beta2_BootstrapToken converts a bootstrap token; its ttl is in seconds
// in v1beta2.
func Convert_v1beta1_BootstrapToken_To_v1beta2_BootstrapToken(in *BootstrapToken, out *bootstrapv1.BootstrapToken, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_BootstrapToken_To_v1beta2_BootstrapToken(in, out, s); err != nil {
		return err
	}
	out.TTLSeconds = DurationToSeconds(in.TTL)
	out.Expires = metav1.Time{}
	if in.Expires != nil {
		out.Expires = *in.Expires
	}
	out.Token = bootstrapv1.BootstrapTokenString{}
	if in.Token != nil {
		out.Token = bootstrapv1.BootstrapTokenString{ID: in.Token.ID, Secret: in.Token.Secret}
	}
	return nil
}

// Convert_v1beta2_BootstrapToken_To_v1beta1_BootstrapToken converts a bootstrap token.
func Convert_v1beta2_BootstrapToken_To_v1beta1_BootstrapToken(in *bootstrapv1.BootstrapToken, out *BootstrapToken, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_BootstrapToken_To_v1beta1_BootstrapToken(in, out, s); err != nil {
		return err
	}
	out.TTL = SecondsToDuration(in.TTLSeconds)
	out.Expires = nil
	if !in.Expires.IsZero() {
		expires := in.Expires
		out.Expires = &expires
	}
	out.Token = nil
	if in.Token != (bootstrapv1.BootstrapTokenString{}) {
		out.Token = &BootstrapTokenString{ID: in.Token.ID, Secret: in.Token.Secret}
	}
	return nil
}

// Convert_v1beta1_InitConfiguration_To_v1beta2_InitConfiguration converts the init configuration; v1beta2
// has no apiVersion and kind.
func Convert_v1beta1_InitConfiguration_To_v1beta2_InitConfiguration(in *InitConfiguration, out *bootstrapv1.InitConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_InitConfiguration_To_v1beta2_InitConfiguration(in, out, s); err != nil {
		return err
	}
	if in.Patches != nil {
		return Convert_v1beta1_Patches_To_v1beta2_Patches(in.Patches, &out.Patches, s)
	}
	return nil
}

// Convert_v1beta2_InitConfiguration_To_v1beta1_InitConfiguration converts the init configuration; its
// timeouts are converted with the spec, as v1beta1 has one of them elsewhere (apiServer.timeoutForControlPlane).
func Convert_v1beta2_InitConfiguration_To_v1beta1_InitConfiguration(in *bootstrapv1.InitConfiguration, out *InitConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_InitConfiguration_To_v1beta1_InitConfiguration(in, out, s); err != nil {
		return err
	}
	var err error
	out.Patches, err = convertUnlessEmpty(&in.Patches, Convert_v1beta2_Patches_To_v1beta1_Patches, s)
	return err
}

// Convert_v1beta1_JoinConfiguration_To_v1beta2_JoinConfiguration converts the join configuration; v1beta2
// has no apiVersion and kind.
func Convert_v1beta1_JoinConfiguration_To_v1beta2_JoinConfiguration(in *JoinConfiguration, out *bootstrapv1.JoinConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_JoinConfiguration_To_v1beta2_JoinConfiguration(in, out, s); err != nil {
		return err
	}
	if in.Patches != nil {
		return Convert_v1beta1_Patches_To_v1beta2_Patches(in.Patches, &out.Patches, s)
	}
	return nil
}

// Convert_v1beta2_JoinConfiguration_To_v1beta1_JoinConfiguration converts the join configuration; its
// timeouts are converted with the spec, where v1beta1 has one of them (discovery.timeout).
func Convert_v1beta2_JoinConfiguration_To_v1beta1_JoinConfiguration(in *bootstrapv1.JoinConfiguration, out *JoinConfiguration, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_JoinConfiguration_To_v1beta1_JoinConfiguration(in, out, s); err != nil {
		return err
	}
	var err error
	out.Patches, err = convertUnlessEmpty(&in.Patches, Convert_v1beta2_Patches_To_v1beta1_Patches, s)
	return err
}

// Convert_v1beta1_Discovery_To_v1beta2_Discovery converts the discovery; its timeout is
// joinConfiguration.timeouts.tlsBootstrapSeconds in v1beta2, which the spec's conversion moves.
func Convert_v1beta1_Discovery_To_v1beta2_Discovery(in *Discovery, out *bootstrapv1.Discovery, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_Discovery_To_v1beta2_Discovery(in, out, s); err != nil {
		return err
	}
	if in.BootstrapToken != nil {
		if err := Convert_v1beta1_BootstrapTokenDiscovery_To_v1beta2_BootstrapTokenDiscovery(in.BootstrapToken, &out.BootstrapToken, s); err != nil {
			return err
		}
	}
	if in.File != nil {
		return Convert_v1beta1_FileDiscovery_To_v1beta2_FileDiscovery(in.File, &out.File, s)
	}
	return nil
}

// Convert_v1beta2_Discovery_To_v1beta1_Discovery converts the discovery.
func Convert_v1beta2_Discovery_To_v1beta1_Discovery(in *bootstrapv1.Discovery, out *Discovery, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_Discovery_To_v1beta1_Discovery(in, out, s); err != nil {
		return err
	}
	var err error
	if out.BootstrapToken, err = convertUnlessEmpty(&in.BootstrapToken, Convert_v1beta2_BootstrapTokenDiscovery_To_v1beta1_BootstrapTokenDiscovery, s); err != nil {
		return err
	}
	out.File, err = convertUnlessEmpty(&in.File, Convert_v1beta2_FileDiscovery_To_v1beta1_FileDiscovery, s)
	return err
}

// Convert_v1beta1_FileDiscovery_To_v1beta2_FileDiscovery converts the file discovery.
func Convert_v1beta1_FileDiscovery_To_v1beta2_FileDiscovery(in *FileDiscovery, out *bootstrapv1.FileDiscovery, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_FileDiscovery_To_v1beta2_FileDiscovery(in, out, s); err != nil {
		return err
	}
	if in.KubeConfig != nil {
		return Convert_v1beta1_FileDiscoveryKubeConfig_To_v1beta2_FileDiscoveryKubeConfig(in.KubeConfig, &out.KubeConfig, s)
	}
	return nil
}

// Convert_v1beta2_FileDiscovery_To_v1beta1_FileDiscovery converts the file discovery.
func Convert_v1beta2_FileDiscovery_To_v1beta1_FileDiscovery(in *bootstrapv1.FileDiscovery, out *FileDiscovery, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_FileDiscovery_To_v1beta1_FileDiscovery(in, out, s); err != nil {
		return err
	}
	var err error
	out.KubeConfig, err = convertUnlessEmpty(&in.KubeConfig, Convert_v1beta2_FileDiscoveryKubeConfig_To_v1beta1_FileDiscoveryKubeConfig, s)
	return err
}

// Convert_v1beta1_FileDiscoveryKubeConfig_To_v1beta2_FileDiscoveryKubeConfig converts the discovery's kubeconfig.
func Convert_v1beta1_FileDiscoveryKubeConfig_To_v1beta2_FileDiscoveryKubeConfig(in *FileDiscoveryKubeConfig, out *bootstrapv1.FileDiscoveryKubeConfig, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_FileDiscoveryKubeConfig_To_v1beta2_FileDiscoveryKubeConfig(in, out, s); err != nil {
		return err
	}
	if in.Cluster != nil {
		return Convert_v1beta1_KubeConfigCluster_To_v1beta2_KubeConfigCluster(in.Cluster, &out.Cluster, s)
	}
	return nil
}

// Convert_v1beta2_FileDiscoveryKubeConfig_To_v1beta1_FileDiscoveryKubeConfig converts the discovery's kubeconfig.
func Convert_v1beta2_FileDiscoveryKubeConfig_To_v1beta1_FileDiscoveryKubeConfig(in *bootstrapv1.FileDiscoveryKubeConfig, out *FileDiscoveryKubeConfig, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_FileDiscoveryKubeConfig_To_v1beta1_FileDiscoveryKubeConfig(in, out, s); err != nil {
		return err
	}
	var err error
	out.Cluster, err = convertUnlessEmpty(&in.Cluster, Convert_v1beta2_KubeConfigCluster_To_v1beta1_KubeConfigCluster, s)
	return err
}

// Convert_v1beta1_KubeConfigUser_To_v1beta2_KubeConfigUser converts the kubeconfig's user.
func Convert_v1beta1_KubeConfigUser_To_v1beta2_KubeConfigUser(in *KubeConfigUser, out *bootstrapv1.KubeConfigUser, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if in.AuthProvider != nil {
		if err := Convert_v1beta1_KubeConfigAuthProvider_To_v1beta2_KubeConfigAuthProvider(in.AuthProvider, &out.AuthProvider, s); err != nil {
			return err
		}
	}
	if in.Exec != nil {
		return Convert_v1beta1_KubeConfigAuthExec_To_v1beta2_KubeConfigAuthExec(in.Exec, &out.Exec, s)
	}
	return nil
}

// Convert_v1beta2_KubeConfigUser_To_v1beta1_KubeConfigUser converts the kubeconfig's user.
func Convert_v1beta2_KubeConfigUser_To_v1beta1_KubeConfigUser(in *bootstrapv1.KubeConfigUser, out *KubeConfigUser, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	var err error
	if out.AuthProvider, err = convertUnlessEmpty(&in.AuthProvider, Convert_v1beta2_KubeConfigAuthProvider_To_v1beta1_KubeConfigAuthProvider, s); err != nil {
		return err
	}
	out.Exec, err = convertUnlessEmpty(&in.Exec, Convert_v1beta2_KubeConfigAuthExec_To_v1beta1_KubeConfigAuthExec, s)
	return err
}

// Convert_v1beta1_IgnitionSpec_To_v1beta2_IgnitionSpec converts the Ignition settings.
func Convert_v1beta1_IgnitionSpec_To_v1beta2_IgnitionSpec(in *IgnitionSpec, out *bootstrapv1.IgnitionSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if in.ContainerLinuxConfig != nil {
		return Convert_v1beta1_ContainerLinuxConfig_To_v1beta2_ContainerLinuxConfig(in.ContainerLinuxConfig, &out.ContainerLinuxConfig, s)
	}
	return nil
}

// Convert_v1beta2_IgnitionSpec_To_v1beta1_IgnitionSpec converts the Ignition settings.
func Convert_v1beta2_IgnitionSpec_To_v1beta1_IgnitionSpec(in *bootstrapv1.IgnitionSpec, out *IgnitionSpec, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	var err error
	out.ContainerLinuxConfig, err = convertUnlessEmpty(&in.ContainerLinuxConfig, Convert_v1beta2_ContainerLinuxConfig_To_v1beta1_ContainerLinuxConfig, s)
	return err
}

// Convert_v1beta1_File_To_v1beta2_File converts a file.
func Convert_v1beta1_File_To_v1beta2_File(in *File, out *bootstrapv1.File, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_File_To_v1beta2_File(in, out, s); err != nil {
		return err
	}
	if in.ContentFrom != nil {
		return Convert_v1beta1_FileSource_To_v1beta2_FileSource(in.ContentFrom, &out.ContentFrom, s)
	}
	return nil
}

// Convert_v1beta2_File_To_v1beta1_File converts a file; v1beta1 has no contentFormat.
func Convert_v1beta2_File_To_v1beta1_File(in *bootstrapv1.File, out *File, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_File_To_v1beta1_File(in, out, s); err != nil {
		return err
	}
	var err error
	out.ContentFrom, err = convertUnlessEmpty(&in.ContentFrom, Convert_v1beta2_FileSource_To_v1beta1_FileSource, s)
	return err
}

// Convert_v1beta1_User_To_v1beta2_User converts a user.
func Convert_v1beta1_User_To_v1beta2_User(in *User, out *bootstrapv1.User, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_User_To_v1beta2_User(in, out, s); err != nil {
		return err
	}
	if in.PasswdFrom != nil {
		return Convert_v1beta1_PasswdSource_To_v1beta2_PasswdSource(in.PasswdFrom, &out.PasswdFrom, s)
	}
	return nil
}

// Convert_v1beta2_User_To_v1beta1_User converts a user; an empty string is an unset v1beta1 field (which
// may not be empty).
func Convert_v1beta2_User_To_v1beta1_User(in *bootstrapv1.User, out *User, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_User_To_v1beta1_User(in, out, s); err != nil {
		return err
	}
	for _, field := range []**string{&out.Gecos, &out.Groups, &out.HomeDir, &out.Shell, &out.Passwd, &out.PrimaryGroup, &out.Sudo} {
		dropEmpty(field)
	}
	var err error
	out.PasswdFrom, err = convertUnlessEmpty(&in.PasswdFrom, Convert_v1beta2_PasswdSource_To_v1beta1_PasswdSource, s)
	return err
}

// Convert_v1beta1_Partition_To_v1beta2_Partition converts a partition: a diskLayout's partition has no
// layout in v1beta2 (exactly one of the two), false in v1beta1.
func Convert_v1beta1_Partition_To_v1beta2_Partition(in *Partition, out *bootstrapv1.Partition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_Partition_To_v1beta2_Partition(in, out, s); err != nil {
		return err
	}
	if len(in.DiskLayout) > 0 && !in.Layout {
		out.Layout = nil
	}
	return nil
}

// Convert_v1beta2_Partition_To_v1beta1_Partition converts a partition (an unset layout is false).
func Convert_v1beta2_Partition_To_v1beta1_Partition(in *bootstrapv1.Partition, out *Partition, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_Partition_To_v1beta1_Partition(in, out, s); err != nil {
		return err
	}
	dropEmpty(&out.TableType)
	return nil
}

// Convert_v1beta2_Filesystem_To_v1beta1_Filesystem converts a filesystem.
func Convert_v1beta2_Filesystem_To_v1beta1_Filesystem(in *bootstrapv1.Filesystem, out *Filesystem, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_Filesystem_To_v1beta1_Filesystem(in, out, s); err != nil {
		return err
	}
	dropEmpty(&out.Partition)
	dropEmpty(&out.ReplaceFS)
	return nil
}

// Convert_v1beta1_KubeadmConfigStatus_To_v1beta2_KubeadmConfigStatus converts the status: v1beta1's
// conditions, failureReason and failureMessage are v1beta2's status.deprecated.v1beta1, its
// status.v1beta2.conditions v1beta2's conditions. ready is initialization.dataSecretCreated where v1beta1's
// initialization does not say.
func Convert_v1beta1_KubeadmConfigStatus_To_v1beta2_KubeadmConfigStatus(in *KubeadmConfigStatus, out *bootstrapv1.KubeadmConfigStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta1_KubeadmConfigStatus_To_v1beta2_KubeadmConfigStatus(in, out, s); err != nil {
		return err
	}
	out.Conditions = nil
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	out.Initialization = bootstrapv1.KubeadmConfigInitializationStatus{}
	switch {
	case in.Initialization != nil && in.Initialization.DataSecretCreated != nil:
		out.Initialization.DataSecretCreated = in.Initialization.DataSecretCreated
	case in.Ready:
		out.Initialization.DataSecretCreated = &in.Ready
	}
	out.Deprecated = nil
	if in.Conditions != nil || in.FailureReason != "" || in.FailureMessage != "" {
		deprecated := &bootstrapv1.KubeadmConfigV1Beta1DeprecatedStatus{FailureReason: in.FailureReason, FailureMessage: in.FailureMessage}
		clusterv1beta1.Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions(&in.Conditions, &deprecated.Conditions)
		out.Deprecated = &bootstrapv1.KubeadmConfigDeprecatedStatus{V1Beta1: deprecated}
	}
	return nil
}

// Convert_v1beta2_KubeadmConfigStatus_To_v1beta1_KubeadmConfigStatus converts the status back; ready is
// initialization.dataSecretCreated.
func Convert_v1beta2_KubeadmConfigStatus_To_v1beta1_KubeadmConfigStatus(in *bootstrapv1.KubeadmConfigStatus, out *KubeadmConfigStatus, s apimachineryconversion.Scope) error { //nolint:revive // conversion-gen's naming
	if err := autoConvert_v1beta2_KubeadmConfigStatus_To_v1beta1_KubeadmConfigStatus(in, out, s); err != nil {
		return err
	}
	dropEmpty(&out.DataSecretName)
	out.Conditions, out.FailureReason, out.FailureMessage = nil, "", ""
	if in.Deprecated != nil && in.Deprecated.V1Beta1 != nil {
		clusterv1beta1.Convert_v1beta2_Deprecated_V1Beta1_Conditions_To_v1beta1_Conditions(&in.Deprecated.V1Beta1.Conditions, &out.Conditions)
		out.FailureReason, out.FailureMessage = in.Deprecated.V1Beta1.FailureReason, in.Deprecated.V1Beta1.FailureMessage
	}
	out.Initialization = nil
	out.Ready = false
	if in.Initialization.DataSecretCreated != nil {
		out.Initialization = &KubeadmConfigInitializationStatus{DataSecretCreated: in.Initialization.DataSecretCreated}
		out.Ready = *in.Initialization.DataSecretCreated
	}
	out.V1Beta2 = nil
	if in.Conditions != nil {
		out.V1Beta2 = &KubeadmConfigV1Beta2Status{Conditions: in.Conditions}
	}
	return nil
}

// DurationToSeconds converts a v1beta1 duration to v1beta2's whole seconds: truncated, at most MaxInt32.
func DurationToSeconds(d *metav1.Duration) *int32 {
	if d == nil {
		return nil
	}
	seconds := math.Trunc(d.Seconds())
	switch {
	case seconds > math.MaxInt32:
		seconds = math.MaxInt32
	case seconds < math.MinInt32:
		seconds = math.MinInt32
	}
	out := int32(seconds)
	return &out
}

// SecondsToDuration converts v1beta2's seconds to a v1beta1 duration.
func SecondsToDuration(seconds *int32) *metav1.Duration {
	if seconds == nil {
		return nil
	}
	return &metav1.Duration{Duration: time.Duration(*seconds) * time.Second}
}

// argsToV1beta1 converts v1beta2's list of arguments to v1beta1's map: of arguments of the same name, the
// last wins.
func argsToV1beta1(in []bootstrapv1.Arg) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, a := range in {
		out[a.Name] = ""
		if a.Value != nil {
			out[a.Name] = *a.Value
		}
	}
	return out
}

// argsToV1beta2 converts v1beta1's map of arguments to v1beta2's list, sorted by name.
func argsToV1beta2(in map[string]string) []bootstrapv1.Arg {
	if in == nil {
		return nil
	}
	out := make([]bootstrapv1.Arg, 0, len(in))
	for name, value := range in {
		out = append(out, bootstrapv1.Arg{Name: name, Value: &value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func envsToV1beta2(in []EnvVar) *[]bootstrapv1.EnvVar {
	if in == nil {
		return nil
	}
	out := make([]bootstrapv1.EnvVar, len(in))
	for i := range in {
		out[i] = bootstrapv1.EnvVar{EnvVar: in[i].EnvVar}
	}
	return &out
}

func envsToV1beta1(in *[]bootstrapv1.EnvVar) []EnvVar {
	if in == nil {
		return nil
	}
	out := make([]EnvVar, len(*in))
	for i := range *in {
		out[i] = EnvVar{EnvVar: (*in)[i].EnvVar}
	}
	return out
}

func volumesToV1beta2(in []HostPathMount) []bootstrapv1.HostPathMount {
	if in == nil {
		return nil
	}
	out := make([]bootstrapv1.HostPathMount, len(in))
	for i := range in {
		_ = Convert_v1beta1_HostPathMount_To_v1beta2_HostPathMount(&in[i], &out[i], nil)
	}
	return out
}

func volumesToV1beta1(in []bootstrapv1.HostPathMount) []HostPathMount {
	if in == nil {
		return nil
	}
	out := make([]HostPathMount, len(in))
	for i := range in {
		_ = Convert_v1beta2_HostPathMount_To_v1beta1_HostPathMount(&in[i], &out[i], nil)
	}
	return out
}

// dropEmpty unsets an empty string: conversion-gen converts v1beta2's unset string to an empty one.
func dropEmpty(s **string) {
	if *s != nil && **s == "" {
		*s = nil
	}
}

// convertUnlessEmpty converts a v1beta2 struct to a v1beta1 pointer, nil for the struct's zero value.
func convertUnlessEmpty[In, Out any](in *In, convert func(*In, *Out, apimachineryconversion.Scope) error, s apimachineryconversion.Scope) (*Out, error) {
	if reflect.ValueOf(in).Elem().IsZero() {
		return nil, nil
	}
	out := new(Out)
	if err := convert(in, out, s); err != nil {
		return nil, err
	}
	return out, nil
}

package v1beta1

import (
	"encoding/json"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubeadm configuration types below are Cluster API's own copy of kubeadm's configuration API (the
// kubeadm.k8s.io v1beta1..v1beta4 types), which the bootstrap provider translates into the kubeadm API
// version that the Machine's Kubernetes version understands.

// InitConfiguration is the part of the kubeadm configuration that only `kubeadm init` reads.
type InitConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// bootstrapTokens are bootstrap tokens `kubeadm init` creates. They are not uploaded to the cluster's
	// kubeadm-config ConfigMap.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	BootstrapTokens []BootstrapToken `json:"bootstrapTokens,omitempty"`

	// nodeRegistration configures how the first control plane node registers itself. For control plane
	// nodes it should agree with the JoinConfiguration's nodeRegistration.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`

	// localAPIEndpoint is the address and port the API server of this node advertises and binds; unlike
	// the cluster's controlPlaneEndpoint it is specific to this node. kubeadm detects the address of the
	// default interface when it is empty.
	// +optional
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`

	// skipPhases lists `kubeadm init` phases to skip (see `kubeadm init --help`).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	SkipPhases []string `json:"skipPhases,omitempty"`

	// patches configures the patches kubeadm applies to the components it deploys during `kubeadm init`.
	// +optional
	Patches *Patches `json:"patches,omitempty"`
}

// ClusterConfiguration is the cluster-wide part of the kubeadm configuration.
// +kubebuilder:validation:XValidation:rule="!has(self.etcd) || !(has(self.etcd.local) && has(self.etcd.external))",message="cannot have both external and local etcd",fieldPath=".etcd"
type ClusterConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// etcd configures etcd; a local (stacked) etcd when empty.
	// +optional
	Etcd Etcd `json:"etcd,omitempty"`

	// networking configures the cluster's networks; the bootstrap provider fills it from the Cluster's
	// spec.clusterNetwork when empty.
	// +optional
	Networking Networking `json:"networking,omitempty"`

	// kubernetesVersion is the version of the control plane; the bootstrap provider sets it to the
	// Machine's spec.version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// controlPlaneEndpoint is the stable address (IP or DNS name, optionally with a port) of the control
	// plane, typically a load balancer in front of the API servers; the bootstrap provider sets it from
	// the Cluster's spec.controlPlaneEndpoint.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`

	// apiServer holds extra settings of the API server.
	// +optional
	APIServer APIServer `json:"apiServer,omitempty"`

	// controllerManager holds extra settings of the controller manager.
	// +optional
	ControllerManager ControlPlaneComponent `json:"controllerManager,omitempty"`

	// scheduler holds extra settings of the scheduler.
	// +optional
	Scheduler ControlPlaneComponent `json:"scheduler,omitempty"`

	// dns configures the DNS add-on.
	// +optional
	DNS DNS `json:"dns,omitempty"`

	// certificatesDir is where the certificates are stored; kubeadm uses /etc/kubernetes/pki when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	CertificatesDir string `json:"certificatesDir,omitempty"`

	// imageRepository is the registry the control plane images are pulled from; kubeadm's default
	// registry (registry.k8s.io) when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ImageRepository string `json:"imageRepository,omitempty"`

	// featureGates are kubeadm feature gates.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// clusterName is the name of the cluster; the bootstrap provider sets it to the Cluster's name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName,omitempty"`

	// certificateValidityPeriodDays is how long the non-CA certificates kubeadm generates are valid; 365 days
	// when unset. Kubernetes v1.31 or later. Upstream v1.14's v1beta1 field.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1095
	CertificateValidityPeriodDays int32 `json:"certificateValidityPeriodDays,omitempty"`

	// caCertificateValidityPeriodDays is how long the CA certificates the provider generates are valid;
	// 3650 days when unset. It applies when the CAs are generated. Upstream v1.14's v1beta1 field.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=36500
	CACertificateValidityPeriodDays int32 `json:"caCertificateValidityPeriodDays,omitempty"`

	// encryptionAlgorithm is the key algorithm of the keys and certificates generated from now on (CAs and
	// service account keys already issued stay): RSA-2048 (when unset), RSA-3072, RSA-4096, ECDSA-P256 or
	// ECDSA-P384 (Kubernetes v1.34 or later); the field itself needs Kubernetes v1.31 or later. Upstream
	// v1.14's v1beta1 field.
	// +optional
	EncryptionAlgorithm EncryptionAlgorithmType `json:"encryptionAlgorithm,omitempty"`
}

// ControlPlaneComponent holds the settings every control plane component accepts.
type ControlPlaneComponent struct {
	// extraArgs are extra command line flags of the component, without the leading dashes.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// extraVolumes are extra host paths mounted into the component.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	ExtraVolumes []HostPathMount `json:"extraVolumes,omitempty"`

	// extraEnvs are extra environment variables of the component; they override the ones kubeadm sets.
	// kubeadm honours them from Kubernetes v1.31.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	ExtraEnvs []EnvVar `json:"extraEnvs,omitempty"`
}

// APIServer holds the settings of the API server.
type APIServer struct {
	ControlPlaneComponent `json:",inline"`

	// certSANs are extra Subject Alternative Names of the API server's serving certificate.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	CertSANs []string `json:"certSANs,omitempty"`

	// timeoutForControlPlane is how long kubeadm waits for the API server to come up.
	// +optional
	TimeoutForControlPlane *metav1.Duration `json:"timeoutForControlPlane,omitempty"`
}

// DNS configures the DNS add-on.
type DNS struct {
	// ImageMeta selects the image of the DNS add-on.
	ImageMeta `json:",inline"`
}

// ImageMeta selects the image of a component that is not released with Kubernetes itself.
type ImageMeta struct {
	// imageRepository is the registry of the image; the ClusterConfiguration's imageRepository when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ImageRepository string `json:"imageRepository,omitempty"`

	// imageTag is the tag of the image. When set, kubeadm no longer changes it on upgrades.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ImageTag string `json:"imageTag,omitempty"`
}

// APIEndpoint is the address and port of one API server.
type APIEndpoint struct {
	// advertiseAddress is the IP address the API server advertises.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=39
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`

	// bindPort is the secure port the API server binds; 6443 when zero.
	// +optional
	BindPort int32 `json:"bindPort,omitempty"`
}

// NodeRegistrationOptions configures how a node registers itself, with `kubeadm init` or `kubeadm join`.
type NodeRegistrationOptions struct {
	// name is the name of the Node object, also the common name of the kubelet's client certificate; the
	// host name of the machine when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// criSocket is the container runtime socket kubeadm talks to.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	CRISocket string `json:"criSocket,omitempty"`

	// taints are the taints the Node registers with. When unset, `kubeadm init` taints a control plane node
	// with node-role.kubernetes.io/control-plane:NoSchedule; an empty list (`taints: []`) registers no taint.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Taints []corev1.Taint `json:"taints,omitempty"`

	// kubeletExtraArgs are extra kubelet flags, without the leading dashes, that kubeadm writes to the
	// kubelet's environment file for this node; they take precedence over the cluster-wide kubelet
	// configuration.
	// +optional
	KubeletExtraArgs map[string]string `json:"kubeletExtraArgs,omitempty"`

	// ignorePreflightErrors are kubeadm preflight checks whose errors are ignored on this node.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`

	// imagePullPolicy is how kubeadm pulls images during init and join: Always, IfNotPresent (the
	// default) or Never.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`

	// imagePullSerial says whether kubeadm pulls images one at a time (kubeadm's default) or in parallel.
	// kubeadm honours it from Kubernetes v1.31.
	// +optional
	ImagePullSerial *bool `json:"imagePullSerial,omitempty"`
}

// MarshalJSON keeps an empty, non-nil list of taints in the output (`taints: []`), which kubeadm reads as
// "no taints" while an absent list means kubeadm's default taint.
func (n NodeRegistrationOptions) MarshalJSON() ([]byte, error) {
	type plain NodeRegistrationOptions
	if n.Taints == nil || len(n.Taints) > 0 {
		return json.Marshal(plain(n))
	}
	// The outer Taints field, without omitempty, wins over the embedded one of the same JSON name.
	return json.Marshal(struct {
		plain
		Taints []corev1.Taint `json:"taints"`
	}{plain: plain(n), Taints: n.Taints})
}

// Networking configures the cluster's networks.
type Networking struct {
	// serviceSubnet is the subnet (or comma-separated subnets) of Services; the Cluster's
	// spec.clusterNetwork.services.cidrBlocks, else 10.96.0.0/12.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	ServiceSubnet string `json:"serviceSubnet,omitempty"`

	// podSubnet is the subnet (or comma-separated subnets) of Pods; the Cluster's
	// spec.clusterNetwork.pods.cidrBlocks when set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	PodSubnet string `json:"podSubnet,omitempty"`

	// dnsDomain is the DNS domain of Services; cluster.local when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DNSDomain string `json:"dnsDomain,omitempty"`
}

// BootstrapToken is a bootstrap token `kubeadm init` creates as a Secret in the cluster.
type BootstrapToken struct {
	// token is the token, of the form [a-z0-9]{6}.[a-z0-9]{16}.
	// +required
	Token *BootstrapTokenString `json:"token"`

	// description says what the token is for.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Description string `json:"description,omitempty"`

	// ttl is how long the token is valid; 24h when neither ttl nor expires is set. Exclusive with expires.
	// +optional
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// expires is when the token expires. Exclusive with ttl.
	// +optional
	Expires *metav1.Time `json:"expires,omitempty"`

	// usages are the ways the token may be used (authentication, signing).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Usages []string `json:"usages,omitempty"`

	// groups are the extra groups the token authenticates as.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Groups []string `json:"groups,omitempty"`
}

// Etcd configures etcd: either local (stacked on the control plane nodes) or external.
type Etcd struct {
	// local configures the etcd members kubeadm runs on the control plane nodes. Exclusive with external.
	// +optional
	Local *LocalEtcd `json:"local,omitempty"`

	// external points at an etcd cluster that kubeadm does not manage. Exclusive with local.
	// +optional
	External *ExternalEtcd `json:"external,omitempty"`
}

// LocalEtcd configures the etcd members kubeadm runs on the control plane nodes.
type LocalEtcd struct {
	// ImageMeta selects the etcd image.
	ImageMeta `json:",inline"`

	// dataDir is etcd's data directory; /var/lib/etcd when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DataDir string `json:"dataDir,omitempty"`

	// extraArgs are extra etcd flags, without the leading dashes.
	// +optional
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`

	// extraEnvs are extra environment variables of etcd; they override the ones kubeadm sets. kubeadm
	// honours them from Kubernetes v1.31.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	ExtraEnvs []EnvVar `json:"extraEnvs,omitempty"`

	// serverCertSANs are extra Subject Alternative Names of etcd's serving certificate.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	ServerCertSANs []string `json:"serverCertSANs,omitempty"`

	// peerCertSANs are extra Subject Alternative Names of etcd's peer certificate.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	PeerCertSANs []string `json:"peerCertSANs,omitempty"`
}

// ExternalEtcd points at an etcd cluster that kubeadm does not manage; its certificates must be supplied
// as files.
type ExternalEtcd struct {
	// endpoints are the client URLs of the etcd members.
	// +required
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Endpoints []string `json:"endpoints"`

	// caFile is the path of the CA certificate that signed etcd's serving certificate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	CAFile string `json:"caFile"`

	// certFile is the path of the client certificate the API server presents to etcd.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	CertFile string `json:"certFile"`

	// keyFile is the path of the key of certFile.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	KeyFile string `json:"keyFile"`
}

// JoinConfiguration is the part of the kubeadm configuration that `kubeadm join` reads.
type JoinConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// nodeRegistration configures how the joining node registers itself. For control plane nodes it
	// should agree with the InitConfiguration's nodeRegistration.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`

	// caCertPath is where the cluster CA certificate is written on the node;
	// /etc/kubernetes/pki/ca.crt when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	CACertPath string `json:"caCertPath,omitempty"`

	// discovery says how the joining node finds and trusts the cluster. The bootstrap provider fills a
	// bootstrap token discovery when it is empty.
	// +optional
	Discovery Discovery `json:"discovery,omitempty"`

	// controlPlane, when set, makes the joining node an additional control plane node.
	// +optional
	ControlPlane *JoinControlPlane `json:"controlPlane,omitempty"`

	// skipPhases lists `kubeadm join` phases to skip (see `kubeadm join --help`).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	SkipPhases []string `json:"skipPhases,omitempty"`

	// patches configures the patches kubeadm applies to the components it deploys during `kubeadm join`.
	// +optional
	Patches *Patches `json:"patches,omitempty"`
}

// JoinControlPlane configures the control plane instance of a joining control plane node.
type JoinControlPlane struct {
	// localAPIEndpoint is the address and port the API server of this node advertises and binds.
	// +optional
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`
}

// Discovery says how a joining node finds the cluster and trusts it during the TLS bootstrap.
type Discovery struct {
	// bootstrapToken discovers the cluster with a bootstrap token. Exclusive with file.
	// +optional
	BootstrapToken *BootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`

	// file discovers the cluster from a kubeconfig file or URL. Exclusive with bootstrapToken.
	// +optional
	File *FileDiscovery `json:"file,omitempty"`

	// tlsBootstrapToken is the token of the TLS bootstrap; bootstrapToken.token when empty. With file
	// discovery it is needed when the kubeconfig has no other credentials.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	TLSBootstrapToken string `json:"tlsBootstrapToken,omitempty"`

	// timeout is how long discovery may take.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// BootstrapTokenDiscovery discovers the cluster with a bootstrap token.
type BootstrapTokenDiscovery struct {
	// token validates the cluster information fetched from the control plane.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Token string `json:"token,omitempty"`

	// apiServerEndpoint is the address (host:port) of the API server the information is fetched from.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIServerEndpoint string `json:"apiServerEndpoint,omitempty"`

	// caCertHashes pin the cluster CA: each is "sha256:<hex>", the SHA-256 of the CA's DER-encoded Subject
	// Public Key Info. The CA found during discovery must match one of them.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	CACertHashes []string `json:"caCertHashes,omitempty"`

	// unsafeSkipCAVerification allows discovery without caCertHashes, which lets another machine
	// impersonate the control plane.
	// +optional
	UnsafeSkipCAVerification bool `json:"unsafeSkipCAVerification,omitempty"`
}

// FileDiscovery discovers the cluster from a kubeconfig file or URL.
type FileDiscovery struct {
	// kubeConfigPath is the path or URL of the kubeconfig.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	KubeConfigPath string `json:"kubeConfigPath"`

	// kubeConfig, when set, makes the bootstrap provider write the kubeconfig to kubeConfigPath, with the
	// server and CA of the Cluster unless given here.
	// +optional
	KubeConfig *FileDiscoveryKubeConfig `json:"kubeConfig,omitempty"`
}

// FileDiscoveryKubeConfig describes the kubeconfig the bootstrap provider writes for file discovery.
type FileDiscoveryKubeConfig struct {
	// cluster says how to reach the cluster; the server and CA default to the Cluster's
	// controlPlaneEndpoint and CA certificate.
	// +optional
	Cluster *KubeConfigCluster `json:"cluster,omitempty"`

	// user is the identity presented to the cluster.
	// +required
	User KubeConfigUser `json:"user"`
}

// KubeConfigCluster says how to reach a cluster, as a kubeconfig's cluster entry does.
type KubeConfigCluster struct {
	// server is the URL of the API server; https://<Cluster's controlPlaneEndpoint> when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Server string `json:"server,omitempty"`

	// tlsServerName is the name checked against the server's certificate; the host of server when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	TLSServerName string `json:"tlsServerName,omitempty"`

	// insecureSkipTLSVerify skips the verification of the server's certificate.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`

	// certificateAuthorityData is the PEM-encoded CA bundle; the Cluster's CA certificate when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=51200
	CertificateAuthorityData []byte `json:"certificateAuthorityData,omitempty"`

	// proxyURL is the http, https or socks5 proxy of the client; the proxy environment variables when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProxyURL string `json:"proxyURL,omitempty"`
}

// KubeConfigUser is the identity presented to a cluster: exactly one of authProvider and exec.
// +kubebuilder:validation:XValidation:rule="has(self.authProvider) || has(self.exec)",message="at least one of authProvider or exec must be defined"
// +kubebuilder:validation:XValidation:rule="!(has(self.authProvider) && has(self.exec))",message="either authProvider or exec must be defined"
type KubeConfigUser struct {
	// authProvider is an authentication provider plugin.
	// +optional
	AuthProvider *KubeConfigAuthProvider `json:"authProvider,omitempty"`

	// exec is a credential plugin command.
	// +optional
	Exec *KubeConfigAuthExec `json:"exec,omitempty"`
}

// KubeConfigAuthProvider configures an authentication provider plugin.
type KubeConfigAuthProvider struct {
	// name is the name of the plugin.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// config holds the plugin's parameters.
	// +optional
	Config map[string]string `json:"config,omitempty"`
}

// KubeConfigAuthExec configures a credential plugin: a command that prints an ExecCredential of the
// client.authentication.k8s.io API group.
type KubeConfigAuthExec struct {
	// command is the command to run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Command string `json:"command"`

	// args are the arguments of the command.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Args []string `json:"args,omitempty"`

	// env are extra environment variables of the command.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Env []KubeConfigAuthExecEnv `json:"env,omitempty"`

	// apiVersion is the version of ExecCredential the plugin reads and writes;
	// client.authentication.k8s.io/v1 when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIVersion string `json:"apiVersion,omitempty"`

	// provideClusterInfo passes the cluster information, CA data included, to the plugin in the
	// KUBERNETES_EXEC_INFO environment variable.
	// +optional
	ProvideClusterInfo bool `json:"provideClusterInfo,omitempty"`
}

// KubeConfigAuthExecEnv is an environment variable of a credential plugin.
type KubeConfigAuthExecEnv struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`

	// value of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Value string `json:"value"`
}

// HostPathMount is a host path mounted into a control plane component.
type HostPathMount struct {
	// name of the volume in the component's Pod.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`

	// hostPath is the path on the host.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	HostPath string `json:"hostPath"`

	// mountPath is where hostPath appears inside the component's container.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	MountPath string `json:"mountPath"`

	// readOnly mounts the volume read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// pathType is the type of hostPath.
	// +optional
	PathType corev1.HostPathType `json:"pathType,omitempty"`
}

// bootstrapTokenPattern is the form of a bootstrap token: a 6-character ID, a dot, a 16-character secret.
var bootstrapTokenPattern = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// BootstrapTokenString is a bootstrap token, "<id>.<secret>", with which a joining node authenticates
// during the TLS bootstrap and checks the cluster information it discovers. It is serialised as a string.
//
// +kubebuilder:validation:Type=string
type BootstrapTokenString struct {
	// ID is the public part of the token, [a-z0-9]{6}.
	ID string `json:"-"`
	// Secret is the secret part of the token, [a-z0-9]{16}.
	Secret string `json:"-"`
}

// NewBootstrapTokenString parses a token of the form [a-z0-9]{6}.[a-z0-9]{16}.
func NewBootstrapTokenString(token string) (*BootstrapTokenString, error) {
	parts := bootstrapTokenPattern.FindStringSubmatch(token)
	if parts == nil {
		return nil, fmt.Errorf("the bootstrap token %q is not of the form [a-z0-9]{6}.[a-z0-9]{16}", token)
	}
	return &BootstrapTokenString{ID: parts[1], Secret: parts[2]}, nil
}

// String returns "<id>.<secret>", or "" for an incomplete token.
func (t BootstrapTokenString) String() string {
	if t.ID == "" || t.Secret == "" {
		return ""
	}
	return t.ID + "." + t.Secret
}

// MarshalJSON writes the token as a JSON string.
func (t BootstrapTokenString) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.String())
}

// UnmarshalJSON reads the token from a JSON string; an empty string leaves it empty.
func (t *BootstrapTokenString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		*t = BootstrapTokenString{}
		return nil
	}
	parsed, err := NewBootstrapTokenString(s)
	if err != nil {
		return err
	}
	*t = *parsed
	return nil
}

// Patches configures the patches kubeadm applies to the static Pod manifests it writes.
type Patches struct {
	// directory holds patch files named "target[suffix][+patchtype].extension", where target is
	// kube-apiserver, kube-controller-manager, kube-scheduler or etcd, patchtype is strategic (the
	// default), merge or json, and extension is json or yaml; for example kube-apiserver0+merge.yaml. The
	// files can be written with the KubeadmConfig's files.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Directory string `json:"directory,omitempty"`
}

// EnvVar is an environment variable of a control plane component.
type EnvVar struct {
	corev1.EnvVar `json:",inline"`
}

// EncryptionAlgorithmType is the key algorithm of the keys and certificates kubeadm and the providers
// generate.
// +kubebuilder:validation:Enum=ECDSA-P256;ECDSA-P384;RSA-2048;RSA-3072;RSA-4096
type EncryptionAlgorithmType string

// The encryption algorithms.
const (
	EncryptionAlgorithmECDSAP256 EncryptionAlgorithmType = "ECDSA-P256"
	EncryptionAlgorithmECDSAP384 EncryptionAlgorithmType = "ECDSA-P384"
	EncryptionAlgorithmRSA2048   EncryptionAlgorithmType = "RSA-2048"
	EncryptionAlgorithmRSA3072   EncryptionAlgorithmType = "RSA-3072"
	EncryptionAlgorithmRSA4096   EncryptionAlgorithmType = "RSA-4096"
)

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Format is the format of the bootstrap data.
// +kubebuilder:validation:Enum=cloud-config;ignition
type Format string

const (
	// CloudConfig is cloud-init's #cloud-config format, the default.
	CloudConfig Format = "cloud-config"

	// Ignition is the Ignition v3 JSON format (Flatcar, Fedora CoreOS).
	Ignition Format = "ignition"
)

// KubeadmConfigSpec is the desired state of a KubeadmConfig: the kubeadm configuration of one machine and
// what else its first boot sets up. The first control plane machine needs clusterConfiguration and
// initConfiguration; the machines that join later need joinConfiguration.
//
// The rules below are the ones upstream's admission webhook enforces.
// +kubebuilder:validation:XValidation:rule="!has(self.ignition) || (has(self.format) && self.format == 'ignition')",message="must be set to \"ignition\" if spec.ignition is set",fieldPath=".format"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.users) || self.users.all(u, !has(u.inactive) || !u.inactive)",message="users[].inactive is not supported when spec.format is set to \"ignition\"",fieldPath=".users"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.useExperimentalRetryJoin) || !self.useExperimentalRetryJoin",message="not supported when spec.format is set to \"ignition\"",fieldPath=".useExperimentalRetryJoin"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.files) || self.files.all(f, !has(f.encoding) || f.encoding == 'base64')",message="files[].encoding gzip and gzip+base64 are not supported when spec.format is set to \"ignition\"",fieldPath=".files"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.bootCommands)",message="not supported when spec.format is set to \"ignition\"",fieldPath=".bootCommands"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.diskSetup) || !has(self.diskSetup.partitions) || self.diskSetup.partitions.all(p, !has(p.tableType) || p.tableType == 'gpt')",message="diskSetup.partitions[].tableType: only partition type \"gpt\" is supported when spec.format is set to \"ignition\"",fieldPath=".diskSetup"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.diskSetup) || !has(self.diskSetup.filesystems) || self.diskSetup.filesystems.all(f, !has(f.replaceFS) && !has(f.partition))",message="diskSetup.filesystems[].replaceFS and partition are not supported when spec.format is set to \"ignition\"",fieldPath=".diskSetup"
type KubeadmConfigSpec struct {
	// clusterConfiguration is the cluster-wide kubeadm configuration, read by `kubeadm init`.
	// +optional
	ClusterConfiguration *ClusterConfiguration `json:"clusterConfiguration,omitempty"`

	// initConfiguration is the kubeadm configuration of `kubeadm init`, for the first control plane machine.
	// +optional
	InitConfiguration *InitConfiguration `json:"initConfiguration,omitempty"`

	// joinConfiguration is the kubeadm configuration of `kubeadm join`, for the other machines.
	// +optional
	JoinConfiguration *JoinConfiguration `json:"joinConfiguration,omitempty"`

	// files are written on the machine before kubeadm runs; each path at most once.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.exists_one(g, g.path == f.path))",message="path property must be unique among all files"
	Files []File `json:"files,omitempty"`

	// diskSetup partitions devices and creates file systems.
	// +optional
	DiskSetup *DiskSetup `json:"diskSetup,omitempty"`

	// mounts are the mount points to set up, each a cloud-init mounts entry.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Mounts []MountPoints `json:"mounts,omitempty"`

	// bootCommands run very early, on every boot, through cloud-init's bootcmd module (`cloud-init-per`
	// makes a command run once). Not supported with Ignition.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	BootCommands []string `json:"bootCommands,omitempty"`

	// preKubeadmCommands run before kubeadm: at the start of cloud-init's runcmd, or of /etc/kubeadm.sh
	// with Ignition.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PreKubeadmCommands []string `json:"preKubeadmCommands,omitempty"`

	// postKubeadmCommands run after kubeadm: at the end of cloud-init's runcmd, or of /etc/kubeadm.sh
	// with Ignition.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PostKubeadmCommands []string `json:"postKubeadmCommands,omitempty"`

	// users are extra users to create.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Users []User `json:"users,omitempty"`

	// ntp configures time synchronisation.
	// +optional
	NTP *NTP `json:"ntp,omitempty"`

	// format of the bootstrap data: cloud-config (the default) or ignition.
	// +optional
	Format Format `json:"format,omitempty"`

	// verbosity is kubeadm's log level (its --v flag).
	// +optional
	Verbosity *int32 `json:"verbosity,omitempty"`

	// useExperimentalRetryJoin runs `kubeadm join` through a script that retries it. Not supported with
	// Ignition.
	// +optional
	//
	// Deprecated: kubeadm retries by itself; upstream will remove this field.
	UseExperimentalRetryJoin bool `json:"useExperimentalRetryJoin,omitempty"`

	// ignition holds settings that only apply with format ignition.
	// +optional
	Ignition *IgnitionSpec `json:"ignition,omitempty"`
}

// IgnitionSpec holds settings that only apply with format ignition.
type IgnitionSpec struct {
	// containerLinuxConfig configures the Ignition output.
	// +optional
	ContainerLinuxConfig *ContainerLinuxConfig `json:"containerLinuxConfig,omitempty"`
}

// ContainerLinuxConfig configures the Ignition output.
type ContainerLinuxConfig struct {
	// additionalConfig is a Container Linux Config (YAML) merged into the Ignition configuration the
	// bootstrap provider generates, as Ignition merges configurations
	// (https://coreos.github.io/ignition/operator-notes/#config-merging).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	AdditionalConfig string `json:"additionalConfig,omitempty"`

	// strict makes warnings about additionalConfig errors.
	// +optional
	Strict bool `json:"strict,omitempty"`
}

// KubeadmConfigStatus is the observed state of a KubeadmConfig.
type KubeadmConfigStatus struct {
	// ready says the bootstrap data Secret named by dataSecretName exists (v1beta1 bootstrap contract).
	// +optional
	Ready bool `json:"ready"`

	// dataSecretName is the name of the Secret holding the bootstrap data, under the key "value" (its
	// format under "format").
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName *string `json:"dataSecretName,omitempty"`

	// initialization reports the v1beta2 bootstrap contract's initialization fields.
	// +optional
	Initialization *KubeadmConfigInitializationStatus `json:"initialization,omitempty"`

	// failureReason is set on errors that cannot be retried.
	//
	// Deprecated: conditions report problems; upstream removes this field in v1beta2.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureReason string `json:"failureReason,omitempty"`

	// failureMessage describes failureReason.
	//
	// Deprecated: conditions report problems; upstream removes this field in v1beta2.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage string `json:"failureMessage,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the v1beta1 conditions: Ready, DataSecretAvailable and CertificatesAvailable.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// v1beta2 groups the status fields of the v1beta2 API.
	// +optional
	V1Beta2 *KubeadmConfigV1Beta2Status `json:"v1beta2,omitempty"`
}

// KubeadmConfigInitializationStatus is the initialization block of the v1beta2 bootstrap contract.
type KubeadmConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data Secret exists.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// KubeadmConfigV1Beta2Status groups the status fields of the v1beta2 API.
type KubeadmConfigV1Beta2Status struct {
	// conditions are the v1beta2 conditions: Ready, DataSecretAvailable, CertificatesAvailable and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmConfig"

// KubeadmConfig is the bootstrap configuration of one Machine: the bootstrap provider renders it, with the
// Machine's Cluster, into the bootstrap data the machine runs on its first boot (`kubeadm init` or
// `kubeadm join`).
type KubeadmConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmConfig.
	// +optional
	Spec KubeadmConfigSpec `json:"spec,omitempty"`
	// status is the observed state of the KubeadmConfig.
	// +optional
	Status KubeadmConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KubeadmConfigList is a list of KubeadmConfigs.
type KubeadmConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmConfig `json:"items"`
}

// GetConditions returns the v1beta1 conditions.
func (c *KubeadmConfig) GetConditions() clusterv1.Conditions { return c.Status.Conditions }

// SetConditions sets the v1beta1 conditions.
func (c *KubeadmConfig) SetConditions(conditions clusterv1.Conditions) {
	c.Status.Conditions = conditions
}

// GetV1Beta2Conditions returns the v1beta2 conditions.
func (c *KubeadmConfig) GetV1Beta2Conditions() []metav1.Condition {
	if c.Status.V1Beta2 == nil {
		return nil
	}
	return c.Status.V1Beta2.Conditions
}

// SetV1Beta2Conditions sets the v1beta2 conditions.
func (c *KubeadmConfig) SetV1Beta2Conditions(conditions []metav1.Condition) {
	if c.Status.V1Beta2 == nil {
		c.Status.V1Beta2 = &KubeadmConfigV1Beta2Status{}
	}
	c.Status.V1Beta2.Conditions = conditions
}

// Encoding is the encoding of a file's content.
// +kubebuilder:validation:Enum=base64;gzip;gzip+base64
type Encoding string

const (
	// Base64 content is base64-encoded.
	Base64 Encoding = "base64"
	// Gzip content is gzip-compressed.
	Gzip Encoding = "gzip"
	// GzipBase64 content is gzip-compressed, then base64-encoded.
	GzipBase64 Encoding = "gzip+base64"
)

// File is a file written on the machine, a cloud-init write_files entry.
// +kubebuilder:validation:XValidation:rule="!(has(self.content) && has(self.contentFrom))",message="only one of content or contentFrom may be specified for a single file"
type File struct {
	// path is the absolute path of the file.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// owner of the file, for example "root:root".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Owner string `json:"owner,omitempty"`

	// permissions of the file, for example "0640".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	Permissions string `json:"permissions,omitempty"`

	// encoding of content.
	// +optional
	Encoding Encoding `json:"encoding,omitempty"`

	// append appends the content to the file when it exists.
	// +optional
	Append bool `json:"append,omitempty"`

	// content of the file. Exclusive with contentFrom.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Content string `json:"content,omitempty"`

	// contentFrom reads the content from a Secret. Exclusive with content.
	// +optional
	ContentFrom *FileSource `json:"contentFrom,omitempty"`

	// contentFormat is Raw (the content is written as it is, the default) or Template (the content, inline
	// or from contentFrom, is rendered as a Go text/template; .controlPlane.version is the control plane's
	// Kubernetes version when the Cluster's control plane has a spec.version). Upstream v1.14's v1beta1 field.
	// +optional
	ContentFormat FileContentFormat `json:"contentFormat,omitempty"`
}

// FileContentFormat says how a file's content is written: as it is, or rendered as a Go template.
// +kubebuilder:validation:Enum=Raw;Template
type FileContentFormat string

// The file content formats.
const (
	FileContentFormatRaw      FileContentFormat = "Raw"
	FileContentFormatTemplate FileContentFormat = "Template"
)

// FileSource is where a file's content comes from.
type FileSource struct {
	// secret names a key of a Secret.
	// +required
	Secret SecretFileSource `json:"secret"`
}

// SecretFileSource names a key of a Secret in the KubeadmConfig's namespace.
type SecretFileSource struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key"`
}

// PasswdSource is where a user's password hash comes from.
type PasswdSource struct {
	// secret names a key of a Secret.
	// +required
	Secret SecretPasswdSource `json:"secret"`
}

// SecretPasswdSource names a key of a Secret in the KubeadmConfig's namespace.
type SecretPasswdSource struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key"`
}

// User is a user created on the machine, a cloud-init users entry.
// +kubebuilder:validation:XValidation:rule="!(has(self.passwd) && has(self.passwdFrom))",message="only one of passwd or passwdFrom may be specified for a single user"
type User struct {
	// name of the user.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// gecos is the user's GECOS (full name) field.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Gecos *string `json:"gecos,omitempty"`

	// groups are the user's additional groups, comma-separated.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Groups *string `json:"groups,omitempty"`

	// homeDir is the user's home directory.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	HomeDir *string `json:"homeDir,omitempty"`

	// inactive creates the user inactive. Not supported with Ignition.
	// +optional
	Inactive *bool `json:"inactive,omitempty"`

	// shell is the user's login shell.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Shell *string `json:"shell,omitempty"`

	// passwd is the user's password hash. Exclusive with passwdFrom.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Passwd *string `json:"passwd,omitempty"`

	// passwdFrom reads the password hash from a Secret. Exclusive with passwd.
	// +optional
	PasswdFrom *PasswdSource `json:"passwdFrom,omitempty"`

	// primaryGroup is the user's primary group.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	PrimaryGroup *string `json:"primaryGroup,omitempty"`

	// lockPassword disables password login.
	// +optional
	LockPassword *bool `json:"lockPassword,omitempty"`

	// sudo is the user's sudoers rule, for example "ALL=(ALL) NOPASSWD:ALL".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Sudo *string `json:"sudo,omitempty"`

	// sshAuthorizedKeys are the user's authorised SSH public keys.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=2048
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

// NTP configures time synchronisation.
type NTP struct {
	// servers are the NTP servers to use.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Servers []string `json:"servers,omitempty"`

	// enabled turns NTP on or off.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DiskSetup partitions devices and creates file systems (cloud-init's disk_setup and fs_setup).
type DiskSetup struct {
	// partitions are the partition tables to create.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Partitions []Partition `json:"partitions,omitempty"`

	// filesystems are the file systems to create.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Filesystems []Filesystem `json:"filesystems,omitempty"`
}

// Partition is the partition table of one device.
// +kubebuilder:validation:XValidation:rule="!has(self.diskLayout) || self.diskLayout.map(l, l.percentage).sum() <= 100",message="the sum of all partition percentages must not be greater than 100",fieldPath=".diskLayout"
type Partition struct {
	// device is the device, for example /dev/sdb.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Device string `json:"device"`

	// layout true creates one partition over the whole device; false leaves the device unpartitioned.
	// +required
	Layout bool `json:"layout"`

	// overwrite partitions the device even when it already has a partition table or file system.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// tableType is the partition table: mbr (the default) or gpt. Only gpt with Ignition.
	// +optional
	// +kubebuilder:validation:Enum=mbr;gpt
	TableType *string `json:"tableType,omitempty"`

	// diskLayout lists the partitions to create, each a share of the device, instead of layout (whose value
	// is then ignored; leave it false). The shares add up to 100 at most. Upstream v1.14's v1beta1 field;
	// cloud-init only (with Ignition, as upstream, the device gets no partitions).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	DiskLayout []PartitionSpec `json:"diskLayout,omitempty"`
}

// PartitionSpec is one partition of a diskLayout.
type PartitionSpec struct {
	// percentage is the share of the device the partition takes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Percentage int32 `json:"percentage"`

	// partitionType is the partition's type: a cloud-init name (Linux, the default, LinuxSwap, LinuxRAID,
	// LVM, Fat32, NTFS, LinuxExtended) or a GPT partition type GUID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self.matches('^(Linux|LinuxSwap|LinuxRAID|LVM|Fat32|NTFS|LinuxExtended|[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})$')",message="partitionType must be one of Linux, LinuxSwap, LinuxRAID, LVM, Fat32, NTFS, LinuxExtended or a full GPT partition GUID"
	PartitionType string `json:"partitionType,omitempty"`
}

// Filesystem is a file system to create.
type Filesystem struct {
	// device is the device, for example /dev/sdb1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Device string `json:"device"`

	// filesystem is the file system type, for example ext4.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Filesystem string `json:"filesystem"`

	// label of the file system; "None" for no label.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Label string `json:"label,omitempty"`

	// partition is the partition to use: "auto|any", "auto", "any", "none" or a partition number. Not
	// supported with Ignition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Partition *string `json:"partition,omitempty"`

	// overwrite destroys an existing file system.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// replaceFS replaces a file system of this type (a cloud-init directive for Microsoft Azure). Not
	// supported with Ignition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ReplaceFS *string `json:"replaceFS,omitempty"`

	// extraOpts are extra options of the mkfs command.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	ExtraOpts []string `json:"extraOpts,omitempty"`
}

// MountPoints is one cloud-init mounts entry: device, mount point, file system type, options...
// +kubebuilder:validation:items:MinLength=1
// +kubebuilder:validation:items:MaxLength=512
type MountPoints []string

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
)

// Format is the format of the bootstrap data.
// +kubebuilder:validation:Enum=cloud-config;ignition
type Format string

// The bootstrap data formats.
const (
	CloudConfig Format = "cloud-config"
	Ignition    Format = "ignition"
)

// KubeadmConfigSpec is the desired state of a KubeadmConfig: the kubeadm configuration of one machine and
// what else its first boot sets up. The first control plane machine needs clusterConfiguration and
// initConfiguration; the machines that join later need joinConfiguration.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="!has(self.ignition) || (has(self.format) && self.format == 'ignition')",message="must be set to \"ignition\" if spec.ignition is set",fieldPath=".format"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.users) || self.users.all(u, !has(u.inactive) || !u.inactive)",message="users[].inactive is not supported when spec.format is set to \"ignition\"",fieldPath=".users"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.files) || self.files.all(f, !has(f.encoding) || f.encoding == 'base64')",message="files[].encoding gzip and gzip+base64 are not supported when spec.format is set to \"ignition\"",fieldPath=".files"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.bootCommands)",message="not supported when spec.format is set to \"ignition\"",fieldPath=".bootCommands"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.diskSetup) || !has(self.diskSetup.partitions) || self.diskSetup.partitions.all(p, !has(p.tableType) || p.tableType == 'gpt')",message="diskSetup.partitions[].tableType: only partition type \"gpt\" is supported when spec.format is set to \"ignition\"",fieldPath=".diskSetup"
// +kubebuilder:validation:XValidation:rule="!has(self.format) || self.format != 'ignition' || !has(self.diskSetup) || !has(self.diskSetup.filesystems) || self.diskSetup.filesystems.all(f, !has(f.replaceFS) && !has(f.partition))",message="diskSetup.filesystems[].replaceFS and partition are not supported when spec.format is set to \"ignition\"",fieldPath=".diskSetup"
type KubeadmConfigSpec struct {
	// clusterConfiguration is the cluster-wide kubeadm configuration, read by `kubeadm init`.
	// +optional
	ClusterConfiguration ClusterConfiguration `json:"clusterConfiguration,omitempty,omitzero"`

	// initConfiguration is the kubeadm configuration of `kubeadm init`, for the first control plane machine.
	// +optional
	InitConfiguration InitConfiguration `json:"initConfiguration,omitempty,omitzero"`

	// joinConfiguration is the kubeadm configuration of `kubeadm join`, for the other machines.
	// +optional
	JoinConfiguration JoinConfiguration `json:"joinConfiguration,omitempty,omitzero"`

	// files are written on the machine before kubeadm runs; each path at most once.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=200
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.exists_one(g, g.path == f.path))",message="path property must be unique among all files"
	Files []File `json:"files,omitempty"`

	// diskSetup partitions devices and creates file systems.
	// +optional
	DiskSetup DiskSetup `json:"diskSetup,omitempty,omitzero"`

	// mounts are the mount points to set up, each a cloud-init mounts entry.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Mounts []MountPoints `json:"mounts,omitempty"`

	// bootCommands run very early, on every boot, through cloud-init's bootcmd module (`cloud-init-per`
	// makes a command run once). Not supported with Ignition.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	BootCommands []string `json:"bootCommands,omitempty"`

	// preKubeadmCommands run before kubeadm: at the start of cloud-init's runcmd, or of /etc/kubeadm.sh
	// with Ignition.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PreKubeadmCommands []string `json:"preKubeadmCommands,omitempty"`

	// postKubeadmCommands run after kubeadm: at the end of cloud-init's runcmd, or of /etc/kubeadm.sh
	// with Ignition.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=10240
	PostKubeadmCommands []string `json:"postKubeadmCommands,omitempty"`

	// users are extra users to create.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Users []User `json:"users,omitempty"`

	// ntp configures time synchronisation.
	// +optional
	NTP NTP `json:"ntp,omitempty,omitzero"`

	// format of the bootstrap data: cloud-config (the default) or ignition.
	// +optional
	Format Format `json:"format,omitempty"`

	// verbosity is kubeadm's log level (its --v flag).
	// +optional
	Verbosity *int32 `json:"verbosity,omitempty"`

	// ignition holds settings that only apply with format ignition.
	// +optional
	Ignition IgnitionSpec `json:"ignition,omitempty,omitzero"`
}

// IgnitionSpec holds settings that only apply with format ignition.
// +kubebuilder:validation:MinProperties=1
type IgnitionSpec struct {
	// containerLinuxConfig configures the Ignition output.
	// +optional
	ContainerLinuxConfig ContainerLinuxConfig `json:"containerLinuxConfig,omitempty,omitzero"`
}

// ContainerLinuxConfig configures the Ignition output.
// +kubebuilder:validation:MinProperties=1
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
	Strict *bool `json:"strict,omitempty"`
}

// KubeadmConfigStatus is the observed state of a KubeadmConfig.
// +kubebuilder:validation:MinProperties=1
type KubeadmConfigStatus struct {
	// conditions of the KubeadmConfig: Ready, DataSecretAvailable, CertificatesAvailable, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization reports the v1beta2 bootstrap contract's initialization fields.
	// +optional
	Initialization KubeadmConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the name of the Secret holding the bootstrap data, under the key "value" (its
	// format under "format").
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// deprecated groups the status fields that go away with v1beta1.
	// +optional
	Deprecated *KubeadmConfigDeprecatedStatus `json:"deprecated,omitempty"`
}

// KubeadmConfigInitializationStatus is the initialization block of the v1beta2 bootstrap contract.
// +kubebuilder:validation:MinProperties=1
type KubeadmConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data Secret exists.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// KubeadmConfigDeprecatedStatus groups the status fields that go away with v1beta1.
type KubeadmConfigDeprecatedStatus struct {
	// v1beta1 holds the status fields of v1beta1.
	// +optional
	V1Beta1 *KubeadmConfigV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// KubeadmConfigV1Beta1DeprecatedStatus is the status of v1beta1 that v1beta2 does not have.
type KubeadmConfigV1Beta1DeprecatedStatus struct {
	// conditions are the v1beta1 conditions.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`

	// failureReason is the kind of a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureReason string `json:"failureReason,omitempty"`

	// failureMessage describes a terminal failure.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	FailureMessage string `json:"failureMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=`.status.conditions[?(@.type=="Paused")].status`,description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Data secret created",type="string",JSONPath=`.status.initialization.dataSecretCreated`,description="Boostrap secret is created"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of KubeadmConfig"

// KubeadmConfig is the bootstrap configuration of one Machine: the bootstrap provider renders it, with the
// Machine's Cluster, into the bootstrap data the machine runs on its first boot (`kubeadm init` or
// `kubeadm join`).
type KubeadmConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the KubeadmConfig.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubeadmConfig.
	// +optional
	Spec KubeadmConfigSpec `json:"spec,omitempty,omitzero"`
	// status is the observed state of the KubeadmConfig.
	// +optional
	Status KubeadmConfigStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubeadmConfigList is a list of KubeadmConfigs.
type KubeadmConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubeadmConfig `json:"items"`
}

// Encoding is the encoding of a file's content.
// +kubebuilder:validation:Enum=base64;gzip;gzip+base64
type Encoding string

// The file encodings.
const (
	Base64     Encoding = "base64"
	Gzip       Encoding = "gzip"
	GzipBase64 Encoding = "gzip+base64"
)

// FileContentFormat says how a file's content is written: as it is, or rendered as a Go template.
// +kubebuilder:validation:Enum=Raw;Template
type FileContentFormat string

// The file content formats.
const (
	FileContentFormatRaw      FileContentFormat = "Raw"
	FileContentFormatTemplate FileContentFormat = "Template"
)

// File is a file written on the machine, a cloud-init write_files entry.
// +kubebuilder:validation:XValidation:rule="!(has(self.content) && has(self.contentFrom))",message="only one of content or contentFrom may be specified for a single file"
type File struct {
	// path is the absolute path of the file.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path,omitempty"`

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
	Append *bool `json:"append,omitempty"`

	// content of the file. Exclusive with contentFrom.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=10240
	Content string `json:"content,omitempty"`

	// contentFrom reads the content from a Secret. Exclusive with content.
	// +optional
	ContentFrom FileSource `json:"contentFrom,omitempty,omitzero"`

	// contentFormat is Raw (the content is written as it is, the default) or Template (the content, inline
	// or from contentFrom, is rendered as a Go text/template; .controlPlane.version is the control plane's
	// Kubernetes version when the Cluster's control plane has a spec.version).
	// +optional
	ContentFormat FileContentFormat `json:"contentFormat,omitempty"`
}

// FileSource is where a file's content comes from.
type FileSource struct {
	// secret names a key of a Secret.
	// +required
	Secret SecretFileSource `json:"secret,omitempty,omitzero"`
}

// SecretFileSource names a key of a Secret in the KubeadmConfig's namespace.
type SecretFileSource struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key,omitempty"`
}

// PasswdSource is where a user's password hash comes from.
type PasswdSource struct {
	// secret names a key of a Secret.
	// +required
	Secret SecretPasswdSource `json:"secret,omitempty,omitzero"`
}

// SecretPasswdSource names a key of a Secret in the KubeadmConfig's namespace.
type SecretPasswdSource struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Key string `json:"key,omitempty"`
}

// User is a user created on the machine, a cloud-init users entry.
// +kubebuilder:validation:XValidation:rule="!(has(self.passwd) && has(self.passwdFrom))",message="only one of passwd or passwdFrom may be specified for a single user"
type User struct {
	// name of the user.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// gecos is the user's GECOS (full name) field.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Gecos string `json:"gecos,omitempty"`

	// groups are the user's additional groups, comma-separated.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Groups string `json:"groups,omitempty"`

	// homeDir is the user's home directory.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	HomeDir string `json:"homeDir,omitempty"`

	// inactive creates the user inactive. Not supported with Ignition.
	// +optional
	Inactive *bool `json:"inactive,omitempty"`

	// shell is the user's login shell.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Shell string `json:"shell,omitempty"`

	// passwd is the user's password hash. Exclusive with passwdFrom.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Passwd string `json:"passwd,omitempty"`

	// passwdFrom reads the password hash from a Secret. Exclusive with passwd.
	// +optional
	PasswdFrom PasswdSource `json:"passwdFrom,omitempty,omitzero"`

	// primaryGroup is the user's primary group.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	PrimaryGroup string `json:"primaryGroup,omitempty"`

	// lockPassword disables password login.
	// +optional
	LockPassword *bool `json:"lockPassword,omitempty"`

	// sudo is the user's sudoers rule, for example "ALL=(ALL) NOPASSWD:ALL".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Sudo string `json:"sudo,omitempty"`

	// sshAuthorizedKeys are the user's authorised SSH public keys.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=2048
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

// NTP configures time synchronisation.
// +kubebuilder:validation:MinProperties=1
type NTP struct {
	// servers are the NTP servers to use.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Servers []string `json:"servers,omitempty"`

	// enabled turns NTP on or off.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DiskSetup partitions devices and creates file systems (cloud-init's disk_setup and fs_setup).
// +kubebuilder:validation:MinProperties=1
type DiskSetup struct {
	// partitions are the partition tables to create.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Partitions []Partition `json:"partitions,omitempty"`

	// filesystems are the file systems to create.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Filesystems []Filesystem `json:"filesystems,omitempty"`
}

// Upstream's marker is ExactlyOneOf=layout;diskLayout; the controller-gen capstan uses writes that check in
// another form, so the rule upstream's CRD has is spelled out.
// +kubebuilder:validation:XValidation:rule="[has(self.layout),has(self.diskLayout)].filter(x,x==true).size() == 1",message="exactly one of the fields in [layout diskLayout] must be set"

// Partition is the partition table of one device: either layout or diskLayout.
// +kubebuilder:validation:XValidation:rule="!has(self.diskLayout) || self.diskLayout.map(l, l.percentage).sum() <= 100",message="the sum of all partition percentages must not be greater than 100",fieldPath=".diskLayout"
type Partition struct {
	// device is the device, for example /dev/sdb.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Device string `json:"device,omitempty"`

	// layout true creates one partition over the whole device; false leaves the device unpartitioned.
	// +optional
	Layout *bool `json:"layout,omitempty"`

	// overwrite partitions the device even when it already has a partition table or file system.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// tableType is the partition table: mbr (the default) or gpt. Only gpt with Ignition.
	// +optional
	// +kubebuilder:validation:Enum=mbr;gpt
	TableType string `json:"tableType,omitempty"`

	// diskLayout lists the partitions to create, each a share of the device. Exclusive with layout.
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
	Percentage int32 `json:"percentage,omitempty"`

	// partitionType is the partition's type: a cloud-init name (Linux, the default, LinuxSwap, LinuxRAID,
	// LVM, Fat32, NTFS, LinuxExtended) or a GPT partition type GUID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self.matches('^(Linux|LinuxSwap|LinuxRAID|LVM|Fat32|NTFS|LinuxExtended|[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})$')",message="partitionType must be one of Linux, LinuxSwap, LinuxRAID, LVM, Fat32, NTFS, LinuxExtended or a full GPT partition GUID"
	PartitionType string `json:"partitionType,omitempty"`
}

// The partition types a diskLayout accepts by name (cloud-init's); any GPT partition type GUID is accepted
// too.
const (
	PartitionTypeLinux         = "Linux"
	PartitionTypeLinuxSwap     = "LinuxSwap"
	PartitionTypeLinuxRAID     = "LinuxRAID"
	PartitionTypeLVM           = "LVM"
	PartitionTypeFat32         = "Fat32"
	PartitionTypeNTFS          = "NTFS"
	PartitionTypeLinuxExtended = "LinuxExtended"
)

// Filesystem is a file system to create.
type Filesystem struct {
	// device is the device, for example /dev/sdb1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Device string `json:"device,omitempty"`

	// filesystem is the file system type, for example ext4.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Filesystem string `json:"filesystem,omitempty"`

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
	Partition string `json:"partition,omitempty"`

	// overwrite destroys an existing file system.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// replaceFS replaces a file system of this type (a cloud-init directive for Microsoft Azure). Not
	// supported with Ignition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ReplaceFS string `json:"replaceFS,omitempty"`

	// extraOpts are extra options of the mkfs command.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	ExtraOpts []string `json:"extraOpts,omitempty"`
}

// MountPoints is one cloud-init mounts entry: device, mount point, file system type, options...
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:MaxItems=100
// +kubebuilder:validation:items:MinLength=1
// +kubebuilder:validation:items:MaxLength=512
type MountPoints []string

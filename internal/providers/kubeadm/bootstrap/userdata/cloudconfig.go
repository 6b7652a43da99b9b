package userdata

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
)

// cloudConfigHeader starts the user data: a #cloud-config document that cloud-init renders as a Jinja
// template first (so that files may use instance data such as {{ ds.meta_data.local_hostname }}).
const cloudConfigHeader = "## template: jinja\n#cloud-config\n"

// placeholderContent is the content upstream gives PlaceholderFile.
const placeholderContent = "This placeholder file is used to create the /run/cluster-api sub directory in a way that is " +
	"compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"

// cloudConfig is the part of cloud-init's configuration the bootstrap data uses, in the order it is written.
type cloudConfig struct {
	WriteFiles []cloudFile               `yaml:"write_files"`
	BootCmd    []string                  `yaml:"bootcmd,omitempty"`
	RunCmd     []string                  `yaml:"runcmd"`
	NTP        *cloudNTP                 `yaml:"ntp,omitempty"`
	Users      []cloudUser               `yaml:"users,omitempty"`
	DiskSetup  map[string]cloudDisk      `yaml:"disk_setup,omitempty"`
	FSSetup    []cloudFilesystem         `yaml:"fs_setup,omitempty"`
	Mounts     []bootstrapv1.MountPoints `yaml:"mounts,omitempty"`
}

type cloudFile struct {
	Path        string `yaml:"path"`
	Encoding    string `yaml:"encoding,omitempty"`
	Owner       string `yaml:"owner,omitempty"`
	Permissions string `yaml:"permissions,omitempty"`
	Append      bool   `yaml:"append,omitempty"`
	Content     string `yaml:"content"`
}

type cloudNTP struct {
	Enabled *bool    `yaml:"enabled,omitempty"`
	Servers []string `yaml:"servers"`
}

type cloudUser struct {
	Name              string   `yaml:"name"`
	Passwd            *string  `yaml:"passwd,omitempty"`
	Gecos             *string  `yaml:"gecos,omitempty"`
	Groups            *string  `yaml:"groups,omitempty"`
	HomeDir           *string  `yaml:"homedir,omitempty"`
	Inactive          *bool    `yaml:"inactive,omitempty"`
	LockPasswd        *bool    `yaml:"lock_passwd,omitempty"`
	Shell             *string  `yaml:"shell,omitempty"`
	PrimaryGroup      *string  `yaml:"primary_group,omitempty"`
	Sudo              *string  `yaml:"sudo,omitempty"`
	SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys,omitempty"`
}

type cloudDisk struct {
	TableType *string `yaml:"table_type,omitempty"`
	// Layout is a partition's layout (true or false), or its diskLayout: one entry a partition, its
	// percentage or [percentage, cloud-init partition type].
	Layout    any   `yaml:"layout"`
	Overwrite *bool `yaml:"overwrite,omitempty"`
}

type cloudFilesystem struct {
	Label      string   `yaml:"label,omitempty"`
	Filesystem string   `yaml:"filesystem"`
	Device     string   `yaml:"device"`
	Partition  *string  `yaml:"partition,omitempty"`
	Overwrite  *bool    `yaml:"overwrite,omitempty"`
	ReplaceFS  *string  `yaml:"replace_fs,omitempty"`
	ExtraOpts  []string `yaml:"extra_opts,omitempty"`
}

// CloudConfig renders input as cloud-init user data.
func CloudConfig(in *Input) ([]byte, error) {
	cc := cloudConfig{BootCmd: in.BootCommands}
	for _, f := range in.Files {
		cc.WriteFiles = append(cc.WriteFiles, cloudFile{
			Path: f.Path, Encoding: string(f.Encoding), Owner: f.Owner, Permissions: f.Permissions, Append: f.Append, Content: f.Content,
		})
	}

	kubeadm := fmt.Sprintf("kubeadm %s --config %s %s", in.subcommand(), CloudInitKubeadmJoinConfig, in.verbosityFlag())
	switch in.Step {
	case Init:
		kubeadm = fmt.Sprintf("kubeadm init --config %s %s", CloudInitKubeadmInitConfig, in.verbosityFlag())
		cc.WriteFiles = append(cc.WriteFiles, kubeadmFile(CloudInitKubeadmInitConfig,
			"---\n"+withNewline(in.ClusterConfiguration)+"---\n"+withNewline(in.InitConfiguration)))
	case JoinControlPlane:
		cc.WriteFiles = append(cc.WriteFiles, kubeadmFile(CloudInitKubeadmJoinConfig, withNewline(in.JoinConfiguration)))
	case JoinWorker:
		cc.WriteFiles = append(cc.WriteFiles, kubeadmFile(CloudInitKubeadmJoinConfig, "---\n"+withNewline(in.JoinConfiguration)))
	}
	if in.Step != Init && in.UseExperimentalRetryJoin {
		cc.WriteFiles = append(cc.WriteFiles, cloudFile{
			Path: RetryJoinScript, Owner: "root", Permissions: "0755", Content: retryJoinScript(in.verbosityFlag()),
		})
		kubeadm = RetryJoinScript
	}
	cc.WriteFiles = append(cc.WriteFiles, cloudFile{
		Path: PlaceholderFile, Owner: "root:root", Permissions: "0640", Content: placeholderContent,
	})

	cc.RunCmd = append(cc.RunCmd, in.PreKubeadmCommands...)
	cc.RunCmd = append(cc.RunCmd, kubeadm+" && echo success > "+SentinelFile)
	cc.RunCmd = append(cc.RunCmd, in.PostKubeadmCommands...)

	if in.NTP != nil {
		cc.NTP = &cloudNTP{Servers: in.NTP.Servers}
		if in.NTP.Enabled != nil && *in.NTP.Enabled {
			cc.NTP.Enabled = in.NTP.Enabled
		}
	}
	for _, u := range in.Users {
		cc.Users = append(cc.Users, cloudUser{
			Name: u.Name, Passwd: u.Passwd, Gecos: u.Gecos, Groups: u.Groups, HomeDir: u.HomeDir, Inactive: trueOnly(u.Inactive),
			LockPasswd: u.LockPassword, Shell: u.Shell, PrimaryGroup: u.PrimaryGroup, Sudo: u.Sudo, SSHAuthorizedKeys: u.SSHAuthorizedKeys,
		})
	}
	if in.DiskSetup != nil {
		for _, p := range in.DiskSetup.Partitions {
			if cc.DiskSetup == nil {
				cc.DiskSetup = map[string]cloudDisk{}
			}
			cc.DiskSetup[p.Device] = cloudDisk{TableType: p.TableType, Layout: diskLayout(p), Overwrite: trueOnly(p.Overwrite)}
		}
		for _, fs := range in.DiskSetup.Filesystems {
			cc.FSSetup = append(cc.FSSetup, cloudFilesystem{
				Label: fs.Label, Filesystem: fs.Filesystem, Device: fs.Device, Partition: fs.Partition,
				Overwrite: trueOnly(fs.Overwrite), ReplaceFS: fs.ReplaceFS, ExtraOpts: fs.ExtraOpts,
			})
		}
	}
	cc.Mounts = in.Mounts

	var out bytes.Buffer
	out.WriteString(cloudConfigHeader)
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&cc); err != nil {
		return nil, fmt.Errorf("encoding the cloud-config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding the cloud-config: %w", err)
	}
	return out.Bytes(), nil
}

func kubeadmFile(path, content string) cloudFile {
	return cloudFile{Path: path, Owner: "root:root", Permissions: "0640", Content: content}
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// trueOnly keeps a flag only when it is true, as upstream writes these cloud-init keys.
func trueOnly(b *bool) *bool {
	if b == nil || !*b {
		return nil
	}
	return b
}

// retryJoinScript is the script of useExperimentalRetryJoin: `kubeadm join`, retried after a
// `kubeadm reset` up to ten times.
func retryJoinScript(verbosity string) string {
	return `#!/bin/bash
# Written by the kubeadm bootstrap provider (useExperimentalRetryJoin): runs kubeadm join, and after a
# failure resets the node and tries again, up to 10 times.
set -o nounset -o pipefail
for attempt in $(seq 1 10); do
  if kubeadm join --config ` + CloudInitKubeadmJoinConfig + ` ` + verbosity + `; then
    exit 0
  fi
  echo "kubeadm join failed (attempt ${attempt} of 10): resetting the node and retrying in 10s" >&2
  kubeadm reset --force || true
  sleep 10
done
echo "kubeadm join failed 10 times, giving up" >&2
exit 1
`
}

// diskLayout is cloud-init's layout of a partition: its diskLayout when it has one (upstream v1.14's),
// else its layout.
func diskLayout(p bootstrapv1.Partition) any {
	if len(p.DiskLayout) == 0 {
		return p.Layout
	}
	out := make([]any, len(p.DiskLayout))
	for i, l := range p.DiskLayout {
		out[i] = l.Percentage
		if l.PartitionType != "" {
			out[i] = []any{l.Percentage, cloudInitPartitionType(l.PartitionType)}
		}
	}
	return out
}

// cloudInitPartitionType is cloud-init's code of a partition type name (upstream's table); a GUID is
// passed on as it is. A code of digits only is written as a number, as upstream's template writes it.
func cloudInitPartitionType(name string) any {
	code, ok := map[string]string{
		"Linux": "83", "LinuxSwap": "82", "LinuxRAID": "fd", "LVM": "8e", "Fat32": "0c", "NTFS": "07", "LinuxExtended": "85",
	}[name]
	if !ok {
		return name
	}
	if n, err := strconv.Atoi(code); err == nil && !strings.HasPrefix(code, "0") {
		return n
	}
	return code
}

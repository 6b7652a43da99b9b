package userdata

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	ignition "github.com/coreos/ignition/v2/config/v3_4"
	igntypes "github.com/coreos/ignition/v2/config/v3_4/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
)

// IgnitionVersion is the Ignition config spec version of the bootstrap data.
const IgnitionVersion = "3.4.0"

// kubeadmUnit runs IgnitionKubeadmScript once: the script moves IgnitionKubeadmConfig away on success.
const kubeadmUnit = `[Unit]
Description=kubeadm
# Runs once: after a success the script moves ` + IgnitionKubeadmConfig + ` to /tmp/.
ConditionPathExists=` + IgnitionKubeadmConfig + `
After=network.target
[Service]
# The unit is not restarted when it exits, as expected.
Type=oneshot
ExecStart=` + IgnitionKubeadmScript + `
[Install]
WantedBy=multi-user.target
`

// ErrInvalidAdditionalConfig is returned (wrapped) when spec.ignition.containerLinuxConfig.additionalConfig
// cannot be used.
var ErrInvalidAdditionalConfig = errors.New("invalid spec.ignition.containerLinuxConfig.additionalConfig")

// Ignition renders input as an Ignition v3 config (JSON), merged with the additionalConfig of spec. The
// result is validated against the Ignition config spec. The warnings are those of additionalConfig when it
// is not strict.
func Ignition(in *Input, spec *bootstrapv1.IgnitionSpec) ([]byte, []string, error) {
	cfg := igntypes.Config{Ignition: igntypes.Ignition{Version: IgnitionVersion}}
	for _, f := range in.Files {
		file, err := ignitionFile(f)
		if err != nil {
			return nil, nil, err
		}
		cfg.Storage.Files = append(cfg.Storage.Files, file)
	}
	addUsers(&cfg, in.Users)
	addDisks(&cfg, in.DiskSetup)

	kubeadmConfig := in.JoinConfiguration
	if in.Step == Init {
		kubeadmConfig = withNewline(in.ClusterConfiguration) + "---\n" + withNewline(in.InitConfiguration)
	}
	cfg.Storage.Files = append(cfg.Storage.Files,
		dataFile(IgnitionKubeadmScript, 0o700, kubeadmScript(in)),
		dataFile(IgnitionKubeadmConfig, 0o600, "---\n"+withNewline(kubeadmConfig)),
	)
	cfg.Systemd.Units = append(cfg.Systemd.Units, igntypes.Unit{Name: "kubeadm.service", Enabled: ptr.To(true), Contents: ptr.To(kubeadmUnit)})
	addNTP(&cfg, in.NTP)
	if err := addMounts(&cfg, in.Mounts, in.DiskSetup); err != nil {
		return nil, nil, err
	}

	var warnings []string
	if spec != nil && spec.ContainerLinuxConfig != nil && spec.ContainerLinuxConfig.AdditionalConfig != "" {
		additional, w, err := parseAdditionalConfig(spec.ContainerLinuxConfig.AdditionalConfig, spec.ContainerLinuxConfig.Strict)
		if err != nil {
			return nil, nil, err
		}
		warnings = w
		cfg = ignition.Merge(cfg, additional)
	}

	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the Ignition config: %w", err)
	}
	// Parsing validates the config against the Ignition config spec, as the machine's Ignition will.
	if _, rpt, err := ignition.Parse(data); err != nil {
		return nil, nil, fmt.Errorf("the Ignition config is invalid: %w: %s", err, rpt.String())
	}
	return data, warnings, nil
}

// parseAdditionalConfig reads an Ignition v3 config (3.0 to 3.4), JSON or the same in YAML.
func parseAdditionalConfig(raw string, strict bool) (igntypes.Config, []string, error) {
	data, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil {
		return igntypes.Config{}, nil, fmt.Errorf("%w: it is not JSON or YAML: %w", ErrInvalidAdditionalConfig, err)
	}
	cfg, rpt, err := ignition.ParseCompatibleVersion(data)
	if err != nil {
		detail := err.Error()
		if s := strings.TrimSpace(rpt.String()); s != "" {
			detail += ": " + s
		}
		return igntypes.Config{}, nil, fmt.Errorf("%w: %s (it must be an Ignition config of spec version 3.0 to 3.4, "+
			"with ignition.version set; a Container Linux Config can be converted with butane)", ErrInvalidAdditionalConfig, detail)
	}
	var warnings []string
	for _, e := range rpt.Entries {
		warnings = append(warnings, e.String())
	}
	if strict && len(warnings) > 0 {
		return igntypes.Config{}, nil, fmt.Errorf("%w: strict is set and parsing it reported: %s", ErrInvalidAdditionalConfig, strings.Join(warnings, "; "))
	}
	return cfg, warnings, nil
}

// kubeadmScript is IgnitionKubeadmScript: the pre-kubeadm commands, kubeadm, the sentinel file, then the
// post-kubeadm commands.
func kubeadmScript(in *Input) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\nset -e\n")
	for _, c := range in.PreKubeadmCommands {
		b.WriteString(c + "\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "kubeadm %s --config %s %s\n", in.subcommand(), IgnitionKubeadmConfig, in.verbosityFlag())
	b.WriteString("mkdir -p /run/cluster-api && echo success > " + SentinelFile + "\n")
	b.WriteString("mv " + IgnitionKubeadmConfig + " /tmp/\n")
	for _, c := range in.PostKubeadmCommands {
		b.WriteString(c + "\n")
	}
	return b.String()
}

func ignitionFile(f bootstrapv1.File) (igntypes.File, error) {
	content := []byte(f.Content)
	switch f.Encoding {
	case "":
	case bootstrapv1.Base64:
		decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(f.Content))
		if err != nil {
			return igntypes.File{}, fmt.Errorf("file %s: content is not valid base64: %w", f.Path, err)
		}
		content = decoded
	default:
		return igntypes.File{}, fmt.Errorf("file %s: encoding %q is not supported when spec.format is %q", f.Path, f.Encoding, bootstrapv1.Ignition)
	}
	file := igntypes.File{Node: igntypes.Node{Path: f.Path}}
	resource := igntypes.Resource{Source: ptr.To(dataURL(content))}
	if f.Append {
		file.Append = []igntypes.Resource{resource}
	} else {
		file.Contents = resource
		file.Overwrite = ptr.To(true)
	}
	if f.Permissions != "" {
		mode, err := strconv.ParseInt(f.Permissions, 8, 32)
		if err != nil {
			return igntypes.File{}, fmt.Errorf("file %s: permissions %q are not an octal mode: %w", f.Path, f.Permissions, err)
		}
		file.Mode = ptr.To(int(mode))
	}
	if f.Owner != "" {
		user, group, _ := strings.Cut(f.Owner, ":")
		if user = strings.TrimSpace(user); user != "" {
			file.User.Name = ptr.To(user)
		}
		if group = strings.TrimSpace(group); group != "" {
			file.Group.Name = ptr.To(group)
		}
	}
	return file, nil
}

func dataFile(path string, mode int, content string) igntypes.File {
	return igntypes.File{
		Node:          igntypes.Node{Path: path, Overwrite: ptr.To(true)},
		FileEmbedded1: igntypes.FileEmbedded1{Mode: ptr.To(mode), Contents: igntypes.Resource{Source: ptr.To(dataURL([]byte(content)))}},
	}
}

func dataURL(content []byte) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString(content)
}

// addUsers creates the users, their sudoers rules, and allows password logins over SSH for the users whose
// lockPassword is false, as upstream's Ignition output does.
func addUsers(cfg *igntypes.Config, users []bootstrapv1.User) {
	var passwordLogins []string
	for _, u := range users {
		pu := igntypes.PasswdUser{
			Name: u.Name, Gecos: u.Gecos, HomeDir: u.HomeDir, Shell: u.Shell, PasswordHash: u.Passwd, PrimaryGroup: u.PrimaryGroup,
		}
		if u.Groups != nil {
			for _, g := range strings.Split(*u.Groups, ",") {
				if g = strings.TrimSpace(g); g != "" {
					pu.Groups = append(pu.Groups, igntypes.Group(g))
				}
			}
		}
		for _, k := range u.SSHAuthorizedKeys {
			pu.SSHAuthorizedKeys = append(pu.SSHAuthorizedKeys, igntypes.SSHAuthorizedKey(k))
		}
		cfg.Passwd.Users = append(cfg.Passwd.Users, pu)
		if u.Sudo != nil {
			cfg.Storage.Files = append(cfg.Storage.Files, dataFile("/etc/sudoers.d/"+u.Name, 0o600, u.Name+" "+*u.Sudo+"\n"))
		}
		if u.LockPassword != nil && !*u.LockPassword {
			passwordLogins = append(passwordLogins, u.Name)
		}
	}
	if len(passwordLogins) > 0 {
		cfg.Storage.Files = append(cfg.Storage.Files, dataFile("/etc/ssh/sshd_config", 0o600, `# Use most defaults for sshd configuration.
Subsystem sftp internal-sftp
ClientAliveInterval 180
UseDNS no
UsePAM yes
PrintLastLog no # handled by PAM
PrintMotd no # handled by PAM

Match User `+strings.Join(passwordLogins, ",")+`
  PasswordAuthentication yes
`))
	}
}

func addDisks(cfg *igntypes.Config, ds *bootstrapv1.DiskSetup) {
	if ds == nil {
		return
	}
	for _, p := range ds.Partitions {
		disk := igntypes.Disk{Device: p.Device, WipeTable: p.Overwrite}
		if p.Layout {
			disk.Partitions = []igntypes.Partition{{}}
		}
		cfg.Storage.Disks = append(cfg.Storage.Disks, disk)
	}
	for _, fs := range ds.Filesystems {
		f := igntypes.Filesystem{Device: fs.Device, Format: ptr.To(fs.Filesystem), WipeFilesystem: fs.Overwrite}
		if fs.Label != "" {
			f.Label = ptr.To(fs.Label)
		}
		for _, o := range fs.ExtraOpts {
			f.Options = append(f.Options, igntypes.FilesystemOption(o))
		}
		cfg.Storage.Filesystems = append(cfg.Storage.Filesystems, f)
	}
}

func addNTP(cfg *igntypes.Config, ntp *bootstrapv1.NTP) {
	if ntp == nil || ntp.Enabled == nil || !*ntp.Enabled {
		return
	}
	cfg.Systemd.Units = append(cfg.Systemd.Units, igntypes.Unit{Name: "ntpd.service", Enabled: ptr.To(true)})
	if len(ntp.Servers) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("# Common pool\n")
	for _, s := range ntp.Servers {
		b.WriteString("server " + s + "\n")
	}
	b.WriteString(`
# Default configuration: time queries only, rate limited; local queries allowed.
restrict default nomodify nopeer noquery notrap limited kod
restrict 127.0.0.1
restrict [::1]
`)
	cfg.Storage.Files = append(cfg.Storage.Files, dataFile("/etc/ntp.conf", 0o644, b.String()))
}

// addMounts turns each mounts entry (file system label, mount point, options...) into a systemd mount
// unit of the device of the file system with that label.
func addMounts(cfg *igntypes.Config, mounts []bootstrapv1.MountPoints, ds *bootstrapv1.DiskSetup) error {
	devices := map[string]string{}
	if ds != nil {
		for _, fs := range ds.Filesystems {
			devices[fs.Label] = fs.Device
		}
	}
	for _, m := range mounts {
		if len(m) < 2 {
			return fmt.Errorf("mounts entry %v: want at least a file system label and a mount point", []string(m))
		}
		label, where := m[0], m[1]
		device, ok := devices[label]
		if !ok {
			labels := slices.Sorted(maps.Keys(devices))
			return fmt.Errorf("mounts entry %v: no diskSetup.filesystems entry has label %q (labels: %v)", []string(m), label, labels)
		}
		unit := fmt.Sprintf("[Unit]\nDescription = Mount %s\n\n[Mount]\nWhat=%s\nWhere=%s\nOptions=%s\n\n[Install]\nWantedBy=multi-user.target\n",
			label, device, where, strings.Join(m[2:], ","))
		cfg.Systemd.Units = append(cfg.Systemd.Units, igntypes.Unit{
			Name: strings.TrimPrefix(strings.ReplaceAll(where, "/", "-"), "-") + ".mount", Enabled: ptr.To(true), Contents: ptr.To(unit),
		})
	}
	return nil
}

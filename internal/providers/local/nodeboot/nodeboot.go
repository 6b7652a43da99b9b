package nodeboot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Formats of bootstrap data, the values of the data Secret's `format` key.
const (
	FormatCloudConfig = "cloud-config"
	FormatIgnition    = "ignition"
)

// Command is the kubeadm command the bootstrap data runs.
type Command string

const (
	// CommandNone is data that runs no kubeadm command (hand-written data, for example).
	CommandNone Command = ""
	// CommandInit is `kubeadm init`, the first control plane node of a cluster.
	CommandInit Command = "init"
	// CommandJoin is `kubeadm join`, a worker, or a control plane node when the JoinConfiguration has a
	// controlPlane section.
	CommandJoin Command = "join"
)

// File is a file the bootstrap data writes on the node.
type File struct {
	// Path is the absolute path on the node.
	Path string
	// Content is the decoded content.
	Content []byte
	// Mode is the file's permission bits (0644 when the data does not say).
	Mode fs.FileMode
}

// Data is what a node would find in its bootstrap data.
type Data struct {
	// Format is FormatCloudConfig or FormatIgnition.
	Format string
	// Files are the files written, in order (a later file with the same path replaces an earlier one,
	// unless it appends).
	Files []File
	// Command is the kubeadm command run; ConfigPath the file its --config names.
	Command    Command
	ConfigPath string
	// Kubeadm is the kubeadm configuration read from ConfigPath; nil when Command is CommandNone.
	Kubeadm *KubeadmConfig
}

// InvalidError says why bootstrap data cannot be used: a node given the same data would fail to boot.
type InvalidError struct {
	Reason string
	Err    error
}

func (e *InvalidError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *InvalidError) Unwrap() error { return e.Err }

// IsInvalid reports whether err says the bootstrap data is invalid (rather than, say, missing).
func IsInvalid(err error) bool {
	var inv *InvalidError
	return errors.As(err, &inv)
}

func invalid(err error, format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// Parse reads bootstrap data of the given format (the data Secret's `format` key; when empty, the format
// is recognised from the content: Ignition is JSON, cloud-config starts with #cloud-config). Errors are
// *InvalidError.
func Parse(format string, value []byte) (*Data, error) {
	if format == "" {
		format = FormatCloudConfig
		if trimmed := bytes.TrimSpace(value); len(trimmed) > 0 && trimmed[0] == '{' {
			format = FormatIgnition
		}
	}
	var (
		d   *Data
		err error
	)
	switch format {
	case FormatCloudConfig:
		d, err = parseCloudConfig(value)
	case FormatIgnition:
		d, err = parseIgnition(value)
	default:
		return nil, invalid(nil, "unknown bootstrap data format %q: expected %s or %s", format, FormatCloudConfig, FormatIgnition)
	}
	if err != nil {
		return nil, err
	}
	d.Format = format
	if d.Command == CommandNone {
		return d, nil
	}
	config, ok := d.File(d.ConfigPath)
	if !ok {
		return nil, invalid(nil, "kubeadm %s reads %s, which the bootstrap data does not write", d.Command, d.ConfigPath)
	}
	if d.Kubeadm, err = parseKubeadm(config.Content); err != nil {
		return nil, invalid(err, "reading the kubeadm configuration %s", d.ConfigPath)
	}
	switch {
	case d.Command == CommandInit && d.Kubeadm.Init == nil:
		d.Kubeadm.Init = &InitConfiguration{}
	case d.Command == CommandJoin && d.Kubeadm.Join == nil:
		return nil, invalid(nil, "kubeadm join reads %s, which holds no JoinConfiguration", d.ConfigPath)
	}
	return d, nil
}

// File returns the file the data writes at p.
func (d *Data) File(p string) (File, bool) {
	p = path.Clean(p)
	for i := len(d.Files) - 1; i >= 0; i-- {
		if path.Clean(d.Files[i].Path) == p {
			return d.Files[i], true
		}
	}
	return File{}, false
}

// ControlPlane reports whether the data makes the node a control plane node: kubeadm init, or kubeadm
// join with a JoinConfiguration.controlPlane section.
func (d *Data) ControlPlane() bool {
	switch d.Command {
	case CommandInit:
		return true
	case CommandJoin:
		return d.Kubeadm != nil && d.Kubeadm.Join != nil && d.Kubeadm.Join.ControlPlane != nil
	}
	return false
}

// NodeRegistration returns the nodeRegistration of the configuration the command reads, nil when none.
func (d *Data) NodeRegistration() *NodeRegistration {
	if d.Kubeadm == nil {
		return nil
	}
	switch {
	case d.Command == CommandInit && d.Kubeadm.Init != nil:
		return &d.Kubeadm.Init.NodeRegistration
	case d.Command == CommandJoin && d.Kubeadm.Join != nil:
		return &d.Kubeadm.Join.NodeRegistration
	}
	return nil
}

// addFile appends a file; a file that appends is joined to the earlier content of its path.
func (d *Data) addFile(f File, appendTo bool) {
	if appendTo {
		if old, ok := d.File(f.Path); ok {
			f.Content = append(append([]byte{}, old.Content...), f.Content...)
		}
	}
	d.Files = append(d.Files, f)
}

// kubeadmCommand finds the kubeadm command in a shell command line: `kubeadm init|join ... --config
// <path>`, or the retrying join script of CABPK.
func kubeadmCommand(line string) (Command, string) {
	fields := strings.Fields(line)
	for i, f := range fields {
		if f == retryJoinScript {
			return CommandJoin, joinConfigPath
		}
		if path.Base(f) != "kubeadm" || i+1 >= len(fields) {
			continue
		}
		var cmd Command
		switch fields[i+1] {
		case "init":
			cmd = CommandInit
		case "join":
			cmd = CommandJoin
		default:
			continue
		}
		config := ""
		for j := i + 2; j < len(fields); j++ {
			switch {
			case fields[j] == "--config" && j+1 < len(fields):
				config = fields[j+1]
			case strings.HasPrefix(fields[j], "--config="):
				config = strings.TrimPrefix(fields[j], "--config=")
			case fields[j] == "&&" || fields[j] == ";" || fields[j] == "||":
				j = len(fields)
			}
		}
		if config == "" {
			config = initConfigPath
			if cmd == CommandJoin {
				config = joinConfigPath
			}
		}
		return cmd, strings.Trim(config, `'"`)
	}
	return CommandNone, ""
}

// Where CABPK's cloud-config writes the kubeadm configuration, and its retrying join script.
const (
	initConfigPath  = "/run/kubeadm/kubeadm.yaml"
	joinConfigPath  = "/run/kubeadm/kubeadm-join-config.yaml"
	retryJoinScript = "/usr/local/bin/kubeadm-bootstrap-script"
)

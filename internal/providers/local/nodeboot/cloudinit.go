package nodeboot

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// cloudConfig is the part of a cloud-config document a node acts on here.
type cloudConfig struct {
	WriteFiles []cloudConfigFile `json:"write_files"`
	// RunCmd entries are strings (run by a shell) or lists (an argv).
	RunCmd []any `json:"runcmd"`
}

type cloudConfigFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	Encoding    string `json:"encoding"`
	Permissions string `json:"permissions"`
	Append      bool   `json:"append"`
}

// parseCloudConfig reads a cloud-config document as CABPK writes it: a `#cloud-config` first line (after
// an optional `## template: jinja` line), write_files and runcmd.
func parseCloudConfig(value []byte) (*Data, error) {
	if !isCloudConfig(value) {
		return nil, invalid(nil, "the bootstrap data is not a cloud-config document: its first line must be #cloud-config")
	}
	var cc cloudConfig
	if err := yaml.Unmarshal(value, &cc); err != nil {
		return nil, invalid(err, "the cloud-config document is not valid YAML")
	}
	d := &Data{}
	for i, f := range cc.WriteFiles {
		if !strings.HasPrefix(f.Path, "/") {
			return nil, invalid(nil, "write_files[%d]: path %q is not absolute", i, f.Path)
		}
		content, err := decodeCloudInit(f.Encoding, f.Content)
		if err != nil {
			return nil, invalid(err, "write_files[%d] (%s): cannot decode its %s content", i, f.Path, f.Encoding)
		}
		mode, err := parseMode(f.Permissions)
		if err != nil {
			return nil, invalid(err, "write_files[%d] (%s): permissions %q", i, f.Path, f.Permissions)
		}
		d.addFile(File{Path: f.Path, Content: content, Mode: mode}, f.Append)
	}
	for _, c := range cc.RunCmd {
		line := ""
		switch c := c.(type) {
		case string:
			line = c
		case []any:
			parts := make([]string, 0, len(c))
			for _, p := range c {
				parts = append(parts, fmt.Sprint(p))
			}
			line = strings.Join(parts, " ")
		}
		if cmd, config := kubeadmCommand(line); cmd != CommandNone {
			if d.Command != CommandNone {
				return nil, invalid(nil, "runcmd runs kubeadm more than once")
			}
			d.Command, d.ConfigPath = cmd, config
		}
	}
	return d, nil
}

func isCloudConfig(value []byte) bool {
	lines := strings.SplitN(string(value), "\n", 3)
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "#cloud-config" {
			return true
		}
		if i > 0 || !strings.HasPrefix(l, "## template:") {
			return false
		}
	}
	return false
}

// decodeCloudInit decodes write_files content by its encoding, as cloud-init does.
func decodeCloudInit(encoding, content string) ([]byte, error) {
	var gz, b64 bool
	switch strings.ToLower(encoding) {
	case "", "text/plain":
	case "b64", "base64":
		b64 = true
	case "gz", "gzip":
		gz = true
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		gz, b64 = true, true
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
	data := []byte(content)
	if b64 {
		var err error
		if data, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(content), "")); err != nil {
			return nil, err
		}
	}
	if gz {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if data, err = io.ReadAll(r); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// parseMode reads octal permissions ("0640", "'0640'"); 0644 when empty.
func parseMode(s string) (fs.FileMode, error) {
	s = strings.Trim(strings.TrimSpace(s), `'"`)
	if s == "" {
		return 0o644, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, err
	}
	return fs.FileMode(m) & fs.ModePerm, nil
}

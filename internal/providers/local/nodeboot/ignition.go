package nodeboot

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/vincent-petithory/dataurl"
)

// ignitionConfig is the part of an Ignition config a node acts on here; the fields are the same in
// specification 2.x (which upstream CABPK writes through the Container Linux Config transpiler) and 3.x.
type ignitionConfig struct {
	Ignition struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage struct {
		Files []ignitionFile `json:"files"`
	} `json:"storage"`
	Systemd struct {
		Units []struct {
			Name     string `json:"name"`
			Contents string `json:"contents"`
		} `json:"units"`
	} `json:"systemd"`
}

type ignitionFile struct {
	Path     string `json:"path"`
	Mode     *int   `json:"mode"`
	Append   []any  `json:"append"`
	Contents struct {
		Source      *string `json:"source"`
		Compression *string `json:"compression"`
	} `json:"contents"`
}

// The script CABPK's Ignition runs from its kubeadm.service unit, and the configuration it reads.
const (
	ignitionScript     = "/etc/kubeadm.sh"
	ignitionConfigPath = "/etc/kubeadm.yml"
)

// parseIgnition reads an Ignition config as CABPK writes it: the kubeadm configuration in /etc/kubeadm.yml
// and the kubeadm command in /etc/kubeadm.sh, files as data URLs, run by the kubeadm.service unit.
func parseIgnition(value []byte) (*Data, error) {
	var ign ignitionConfig
	dec := json.NewDecoder(bytes.NewReader(value))
	if err := dec.Decode(&ign); err != nil {
		return nil, invalid(err, "the Ignition config is not valid JSON")
	}
	major, _, _ := strings.Cut(ign.Ignition.Version, ".")
	if major != "2" && major != "3" {
		return nil, invalid(nil, "unsupported Ignition config version %q: expected 2.x or 3.x", ign.Ignition.Version)
	}
	d := &Data{}
	for i, f := range ign.Storage.Files {
		if !strings.HasPrefix(f.Path, "/") {
			return nil, invalid(nil, "storage.files[%d]: path %q is not absolute", i, f.Path)
		}
		var content []byte
		if f.Contents.Source != nil && *f.Contents.Source != "" {
			var err error
			if content, err = decodeSource(*f.Contents.Source, f.Contents.Compression); err != nil {
				return nil, invalid(err, "storage.files[%d] (%s)", i, f.Path)
			}
		}
		mode := fs.FileMode(0o644)
		if f.Mode != nil {
			mode = fs.FileMode(*f.Mode) & fs.ModePerm //nolint:gosec // a mode from the config
		}
		d.addFile(File{Path: f.Path, Content: content, Mode: mode}, false)
	}
	if script, ok := d.File(ignitionScript); ok {
		for _, line := range strings.Split(string(script.Content), "\n") {
			if cmd, config := kubeadmCommand(line); cmd != CommandNone {
				d.Command, d.ConfigPath = cmd, config
				break
			}
		}
	}
	if d.Command == CommandNone {
		for _, u := range ign.Systemd.Units {
			for _, line := range strings.Split(u.Contents, "\n") {
				if exec, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); ok {
					if cmd, config := kubeadmCommand(exec); cmd != CommandNone {
						d.Command, d.ConfigPath = cmd, config
					}
				}
			}
		}
	}
	if d.Command != CommandNone && d.ConfigPath == initConfigPath {
		if _, ok := d.File(ignitionConfigPath); ok {
			d.ConfigPath = ignitionConfigPath
		}
	}
	return d, nil
}

// decodeSource decodes a data URL, gunzipping it when the file says it is compressed. Other URL schemes
// (http, s3, ...) would make the node fetch the file; the local provider fetches nothing.
func decodeSource(source string, compression *string) ([]byte, error) {
	if !strings.HasPrefix(source, "data:") {
		return nil, fmt.Errorf("contents.source %q is not a data URL: the local provider fetches nothing", truncate(source, 40))
	}
	u, err := dataurl.DecodeString(source)
	if err != nil {
		return nil, fmt.Errorf("contents.source is not a valid data URL: %w", err)
	}
	data := u.Data
	if compression != nil {
		switch *compression {
		case "":
		case "gzip":
			r, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, fmt.Errorf("contents are not gzip: %w", err)
			}
			if data, err = io.ReadAll(r); err != nil {
				return nil, fmt.Errorf("contents are not gzip: %w", err)
			}
		default:
			return nil, fmt.Errorf("unknown compression %q", *compression)
		}
	}
	return data, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

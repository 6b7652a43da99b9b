package nodeboot

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no bootstrap data (a Secret anyone who can write Secrets in the Machine's
// namespace controls) makes Parse, or reading the node and the cluster configuration from what it
// accepts, panic, and that what it accepts parses again the same way.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add("", data)
		f.Add(FormatIgnition, data)
	}
	f.Add(FormatCloudConfig, []byte("#cloud-config\nwrite_files:\n- path: /a\n  encoding: gzip+base64\n  content: H4sI\nruncmd:\n- kubeadm init --config /a\n"))
	f.Add("", []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/kubeadm.sh","contents":{"source":"data:,kubeadm%20join"}}]}}`))
	f.Fuzz(func(t *testing.T, format string, value []byte) {
		d, err := Parse(format, value)
		if err != nil {
			if !IsInvalid(err) {
				t.Fatalf("the error is not an *InvalidError: %v", err)
			}
			return
		}
		_, _ = d.Node()
		_ = d.ControlPlane()
		if doc := d.ClusterConfigurationDocument(); doc != nil {
			_, _ = ParseClusterConfiguration(doc)
		}
		again, err := Parse(format, value)
		if err != nil || len(again.Files) != len(d.Files) || again.Command != d.Command {
			t.Fatalf("parsing the same data again gave another result: %v", err)
		}
	})
}

// FuzzParseClusterConfiguration checks that no kube-system/kubeadm-config ConfigMap of a workload
// cluster (which the cluster's administrators can write, and which joining control plane machines
// read) makes ParseClusterConfiguration panic.
func FuzzParseClusterConfiguration(f *testing.F) {
	f.Add([]byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - name: v\n    value: \"2\"\netcd:\n  local:\n    extraArgs:\n    - name: snapshot-count\n      value: \"100\"\n"))
	f.Add([]byte("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    v: \"2\"\n  extraVolumes:\n  - hostPath: /a\n    mountPath: /b\n"))
	f.Add([]byte("kind: ClusterConfiguration\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseClusterConfiguration(data)
	})
}

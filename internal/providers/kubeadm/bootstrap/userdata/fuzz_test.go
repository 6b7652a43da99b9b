package userdata

import (
	"path"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/kubeadmapi"
	localdata "github.com/capstan-dev/capstan/internal/providers/local/nodeboot"
)

// FuzzRender checks that no KubeadmConfig spec (written by whoever can write KubeadmConfigs or
// KubeadmControlPlanes) makes the kubeadm configuration, cloud-config or Ignition rendering panic, and
// that a plain file of the spec comes back, as written, from what the local provider reads of the
// rendered data (the two ends of the bootstrap data contract).
func FuzzRender(f *testing.F) {
	f.Add("clusterConfiguration:\n  clusterName: demo\n  apiServer:\n    extraArgs:\n      v: \"2\"\ninitConfiguration:\n  nodeRegistration:\n    name: n1\n",
		"/etc/motd", "welcome\n", "echo pre", false)
	f.Add("format: ignition\nignition:\n  containerLinuxConfig:\n    additionalConfig: |\n      storage:\n        files: []\nusers:\n- name: ops\n  sshAuthorizedKeys: [\"ssh-ed25519 AAAA\"]\n",
		"/etc/app/config", "a: b\n\"quoted\" 'single' \\ back", "swapoff -a", true)
	f.Add("files:\n- path: /x\n  encoding: gzip+base64\n  content: H4sI\nntp:\n  enabled: true\n  servers: [a]\ndiskSetup:\n  filesystems:\n  - device: /dev/sdb\n    filesystem: ext4\n    label: data\n",
		"/etc/kubernetes/admission.yaml", "kind: AdmissionConfiguration\n", "", false)
	f.Fuzz(func(t *testing.T, specYAML, filePath, fileContent, command string, ignition bool) {
		spec := &bootstrapv1.KubeadmConfigSpec{}
		if err := yaml.Unmarshal([]byte(specYAML), spec); err != nil {
			return
		}
		version, err := kubeadmapi.ParseVersion("v1.36.2")
		if err != nil {
			t.Fatal(err)
		}
		cc := spec.ClusterConfiguration
		if cc == nil {
			cc = &bootstrapv1.ClusterConfiguration{}
		}
		initConfig := spec.InitConfiguration
		if initConfig == nil {
			initConfig = &bootstrapv1.InitConfiguration{}
		}
		in := &Input{Step: Init, Users: spec.Users, NTP: spec.NTP, DiskSetup: spec.DiskSetup, Mounts: spec.Mounts,
			PreKubeadmCommands: append(spec.PreKubeadmCommands, command), PostKubeadmCommands: spec.PostKubeadmCommands,
			Verbosity: spec.Verbosity, UseExperimentalRetryJoin: spec.UseExperimentalRetryJoin} //nolint:staticcheck // the deprecated field is still rendered, as upstream
		if in.ClusterConfiguration, err = kubeadmapi.ClusterConfiguration(cc, version); err != nil {
			return
		}
		if in.InitConfiguration, err = kubeadmapi.InitConfiguration(initConfig, cc, version); err != nil {
			return
		}
		for _, file := range spec.Files {
			file.ContentFrom = nil // resolved by the controller before rendering
			in.Files = append(in.Files, file)
		}
		in.Files = append(in.Files, bootstrapv1.File{Path: filePath, Content: fileContent})

		format, localFormat := bootstrapv1.CloudConfig, localdata.FormatCloudConfig
		if ignition {
			format, localFormat = bootstrapv1.Ignition, localdata.FormatIgnition
		}
		data, _, err := Render(format, in, spec.Ignition)
		if err != nil {
			return
		}
		d, err := localdata.Parse(localFormat, data)
		if err != nil {
			return
		}
		// A plain file, whose path no other file of the data names, comes back as written.
		if !utf8.ValidString(fileContent) || !utf8.ValidString(filePath) || !path.IsAbs(filePath) || path.Clean(filePath) != filePath {
			return
		}
		for _, other := range in.Files[:len(in.Files)-1] {
			if other.Path == filePath {
				return
			}
		}
		for _, p := range []string{CloudInitKubeadmInitConfig, IgnitionKubeadmConfig, IgnitionKubeadmScript, SentinelFile, PlaceholderFile, RetryJoinScript} {
			if p == filePath {
				return
			}
		}
		got, ok := d.File(filePath)
		if !ok {
			t.Fatalf("the file %q is not in the data the local provider read", filePath)
		}
		if string(got.Content) != fileContent {
			t.Fatalf("the file %q reads back as %q, not %q", filePath, got.Content, fileContent)
		}
	})
}

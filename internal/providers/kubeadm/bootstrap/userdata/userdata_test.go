package userdata

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	ignition "github.com/coreos/ignition/v2/config/v3_4"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/kubeadmapi"
	"github.com/capstan-dev/capstan/internal/test/golden"
)

// input returns the bootstrap data input of a machine of each step, with files, users and commands.
func input(t *testing.T, step Step) *Input {
	t.Helper()
	version, err := kubeadmapi.ParseVersion("v1.36.2")
	if err != nil {
		t.Fatal(err)
	}
	nr := bootstrapv1.NodeRegistrationOptions{
		Name:             "{{ ds.meta_data.local_hostname }}",
		KubeletExtraArgs: map[string]string{"node-labels": "tier=web", "eviction-hard": "memory.available<5%"},
		Taints:           []corev1.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}},
	}
	in := &Input{
		Step: step,
		Files: []bootstrapv1.File{
			{Path: "/etc/kubernetes/pki/ca.crt", Owner: "root:root", Permissions: "0640", Content: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
			{Path: "/etc/motd", Content: "welcome\n", Append: true},
			{Path: "/etc/app/config.bin", Encoding: bootstrapv1.Base64, Permissions: "0600", Content: base64.StdEncoding.EncodeToString([]byte("binary\x00data"))},
		},
		Users: []bootstrapv1.User{{
			Name: "ops", Groups: ptr.To("wheel, docker"), Shell: ptr.To("/bin/bash"), Sudo: ptr.To("ALL=(ALL) NOPASSWD:ALL"),
			LockPassword: ptr.To(false), Passwd: ptr.To("$6$salt$hash"), SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA ops@example"},
		}},
		NTP:                 &bootstrapv1.NTP{Enabled: ptr.To(true), Servers: []string{"time.example.com"}},
		PreKubeadmCommands:  []string{"echo pre", "swapoff -a"},
		PostKubeadmCommands: []string{"echo post"},
		Verbosity:           ptr.To[int32](5),
	}
	switch step {
	case Init:
		cc := &bootstrapv1.ClusterConfiguration{ClusterName: "demo", KubernetesVersion: "v1.36.2", ControlPlaneEndpoint: "10.0.0.1:6443",
			APIServer: bootstrapv1.APIServer{ControlPlaneComponent: bootstrapv1.ControlPlaneComponent{ExtraArgs: map[string]string{"audit-log-maxage": "7"}}}}
		if in.ClusterConfiguration, err = kubeadmapi.ClusterConfiguration(cc, version); err != nil {
			t.Fatal(err)
		}
		if in.InitConfiguration, err = kubeadmapi.InitConfiguration(&bootstrapv1.InitConfiguration{NodeRegistration: nr}, cc, version); err != nil {
			t.Fatal(err)
		}
	default:
		jc := &bootstrapv1.JoinConfiguration{NodeRegistration: nr, Discovery: bootstrapv1.Discovery{BootstrapToken: &bootstrapv1.BootstrapTokenDiscovery{
			Token: "abcdef.0123456789abcdef", APIServerEndpoint: "10.0.0.1:6443", CACertHashes: []string{"sha256:00ff"},
		}}}
		if step == JoinControlPlane {
			jc.ControlPlane = &bootstrapv1.JoinControlPlane{}
		}
		if in.JoinConfiguration, err = kubeadmapi.JoinConfiguration(jc, nil, version); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

var steps = []struct {
	name string
	step Step
}{{"init", Init}, {"join-control-plane", JoinControlPlane}, {"join-worker", JoinWorker}}

func TestCloudConfig(t *testing.T) {
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			data, err := CloudConfig(input(t, tt.step))
			g.Expect(err).NotTo(HaveOccurred())
			golden.Assert(t, "cloud-config-"+tt.name+".yaml", data)

			// What a cloud-init (or a parser of upstream's bootstrap data) reads.
			g.Expect(string(data)).To(HavePrefix("## template: jinja\n#cloud-config\n"))
			var doc struct {
				WriteFiles []struct{ Path, Content, Owner, Permissions, Encoding string } `json:"write_files"`
				RunCmd     []string                                                       `json:"runcmd"`
				Users      []map[string]any                                               `json:"users"`
				NTP        map[string]any                                                 `json:"ntp"`
			}
			g.Expect(yaml.Unmarshal(data, &doc)).To(Succeed())
			g.Expect(doc.RunCmd).To(HaveLen(4))
			g.Expect(doc.RunCmd[:2]).To(Equal([]string{"echo pre", "swapoff -a"}))
			g.Expect(doc.RunCmd[3]).To(Equal("echo post"))
			g.Expect(doc.Users).To(HaveLen(1))
			g.Expect(doc.Users[0]).To(HaveKeyWithValue("sudo", "ALL=(ALL) NOPASSWD:ALL"))
			g.Expect(doc.NTP).To(HaveKeyWithValue("servers", ConsistOf("time.example.com")))

			files := map[string]string{}
			for _, f := range doc.WriteFiles {
				files[f.Path] = f.Content
			}
			g.Expect(files).To(HaveKeyWithValue("/etc/motd", "welcome\n"))
			g.Expect(doc.WriteFiles[0].Permissions).To(Equal("0640"))
			configPath := "/run/kubeadm/kubeadm-join-config.yaml"
			wantCmd := "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml --v 5 && echo success > /run/cluster-api/bootstrap-success.complete"
			if tt.step == Init {
				configPath = "/run/kubeadm/kubeadm.yaml"
				wantCmd = "kubeadm init --config /run/kubeadm/kubeadm.yaml --v 5 && echo success > /run/cluster-api/bootstrap-success.complete"
			}
			g.Expect(doc.RunCmd[2]).To(Equal(wantCmd))
			g.Expect(files).To(HaveKey(configPath))
			kinds := kubeadmKinds(t, files[configPath])
			if tt.step == Init {
				g.Expect(kinds).To(Equal([]string{"ClusterConfiguration", "InitConfiguration"}))
			} else {
				g.Expect(kinds).To(Equal([]string{"JoinConfiguration"}))
			}
		})
	}
}

// kubeadmKinds returns the kinds of the YAML documents of a kubeadm configuration file, checking each is
// kubeadm.k8s.io/v1beta4 (the API of the inputs' Kubernetes v1.36).
func kubeadmKinds(t *testing.T, content string) []string {
	t.Helper()
	var kinds []string
	for _, doc := range strings.Split(content, "\n---\n") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var meta struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("kubeadm configuration document does not parse: %v\n%s", err, doc)
		}
		if meta.APIVersion != "kubeadm.k8s.io/v1beta4" {
			t.Errorf("apiVersion %q, want kubeadm.k8s.io/v1beta4", meta.APIVersion)
		}
		kinds = append(kinds, meta.Kind)
	}
	return kinds
}

func TestIgnition(t *testing.T) {
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			data, warnings, err := Ignition(input(t, tt.step), nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(warnings).To(BeEmpty())
			var pretty any
			g.Expect(json.Unmarshal(data, &pretty)).To(Succeed())
			indented, _ := json.MarshalIndent(pretty, "", "  ")
			golden.Assert(t, "ignition-"+tt.name+".json", append(indented, '\n'))

			// The output is a valid Ignition v3 config, as the machine's Ignition parses it.
			cfg, rpt, err := ignition.Parse(data)
			g.Expect(err).NotTo(HaveOccurred(), rpt.String())
			files := map[string]string{}
			modes := map[string]int{}
			for _, f := range cfg.Storage.Files {
				src := ""
				if f.Contents.Source != nil {
					src = *f.Contents.Source
				} else if len(f.Append) > 0 {
					src = *f.Append[0].Source
				}
				content, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:;base64,"))
				g.Expect(err).NotTo(HaveOccurred())
				files[f.Path] = string(content)
				if f.Mode != nil {
					modes[f.Path] = *f.Mode
				}
			}
			g.Expect(files).To(HaveKeyWithValue("/etc/app/config.bin", "binary\x00data"))
			g.Expect(modes).To(HaveKeyWithValue("/etc/kubeadm.sh", 0o700))
			g.Expect(files).To(HaveKeyWithValue("/etc/sudoers.d/ops", "ops ALL=(ALL) NOPASSWD:ALL\n"))
			g.Expect(files["/etc/kubeadm.sh"]).To(ContainSubstring("echo pre\nswapoff -a\n"))
			sub := "join"
			if tt.step == Init {
				sub = "init"
			}
			g.Expect(files["/etc/kubeadm.sh"]).To(ContainSubstring("kubeadm " + sub + " --config /etc/kubeadm.yml --v 5\n"))
			g.Expect(files["/etc/kubeadm.sh"]).To(HaveSuffix("mv /etc/kubeadm.yml /tmp/\necho post\n"))
			g.Expect(cfg.Passwd.Users).To(HaveLen(1))
			g.Expect(cfg.Passwd.Users[0].Groups).To(HaveLen(2))
			var units []string
			for _, u := range cfg.Systemd.Units {
				units = append(units, u.Name)
			}
			g.Expect(units).To(ConsistOf("kubeadm.service", "ntpd.service"))
		})
	}
}

func TestIgnitionAdditionalConfig(t *testing.T) {
	tests := []struct {
		name       string
		additional string
		strict     bool
		wantErr    string
		wantUnit   string
	}{
		{
			name:       "an Ignition config in YAML is merged",
			additional: "ignition:\n  version: 3.3.0\nsystemd:\n  units:\n  - name: extra.service\n    enabled: true\n    contents: |\n      [Service]\n      ExecStart=/bin/true\n",
			wantUnit:   "extra.service",
		},
		{
			name:       "an Ignition config in JSON is merged",
			additional: `{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"json.service","mask":true}]}}`,
			wantUnit:   "json.service",
		},
		{
			name:       "a Container Linux Config is refused with a hint",
			additional: "systemd:\n  units:\n  - name: x.service\n    enable: true\n",
			wantErr:    "a Container Linux Config can be converted with butane",
		},
		{
			name:       "a config that is not YAML is refused",
			additional: "ignition: [",
			wantErr:    "it is not JSON or YAML",
		},
		{
			name:       "a strict config with unknown keys is refused",
			additional: `{"ignition":{"version":"3.4.0"},"unknownKey":true}`,
			strict:     true,
			wantErr:    "strict is set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := &bootstrapv1.IgnitionSpec{ContainerLinuxConfig: &bootstrapv1.ContainerLinuxConfig{AdditionalConfig: tt.additional, Strict: tt.strict}}
			data, _, err := Ignition(input(t, JoinWorker), spec)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ErrInvalidAdditionalConfig))
				g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			cfg, _, err := ignition.Parse(data)
			g.Expect(err).NotTo(HaveOccurred())
			var units []string
			for _, u := range cfg.Systemd.Units {
				units = append(units, u.Name)
			}
			g.Expect(units).To(ContainElements("kubeadm.service", tt.wantUnit))
		})
	}
}

func TestRenderRetryJoinAndFormats(t *testing.T) {
	g := NewWithT(t)
	in := input(t, JoinWorker)
	in.UseExperimentalRetryJoin = true
	data, _, err := Render(bootstrapv1.CloudConfig, in, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(ContainSubstring("path: /usr/local/bin/kubeadm-bootstrap-script"))
	g.Expect(string(data)).To(ContainSubstring("- /usr/local/bin/kubeadm-bootstrap-script && echo success > /run/cluster-api/bootstrap-success.complete"))

	_, _, err = Render("zip", in, nil)
	g.Expect(err).To(MatchError(ContainSubstring(`unknown format "zip"`)))
}

// TestCloudConfigDiskLayout: a partition's diskLayout is cloud-init's layout list (percentages, with the
// partition type's cloud-init code where set, as upstream v1.14 renders it); layout alone stays a bool.
func TestCloudConfigDiskLayout(t *testing.T) {
	g := NewWithT(t)
	in := input(t, JoinWorker)
	in.DiskSetup = &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{
		{Device: "/dev/sdb", TableType: ptr.To("gpt"), DiskLayout: []bootstrapv1.PartitionSpec{
			{Percentage: 30}, {Percentage: 20, PartitionType: "LinuxSwap"}, {Percentage: 25, PartitionType: "NTFS"},
			{Percentage: 25, PartitionType: "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
		}},
		{Device: "/dev/sdc", Layout: true, Overwrite: ptr.To(true)},
	}}
	data, err := CloudConfig(in)
	g.Expect(err).NotTo(HaveOccurred())
	var doc struct {
		DiskSetup map[string]map[string]any `json:"disk_setup"`
	}
	g.Expect(yaml.Unmarshal(data, &doc)).To(Succeed())
	g.Expect(doc.DiskSetup["/dev/sdb"]).To(Equal(map[string]any{"table_type": "gpt", "layout": []any{
		float64(30), []any{float64(20), float64(82)}, []any{float64(25), "07"}, []any{float64(25), "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
	}}))
	g.Expect(doc.DiskSetup["/dev/sdc"]).To(Equal(map[string]any{"layout": true, "overwrite": true}))
}

package nodeboot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParse(t *testing.T) {
	tests := []struct {
		name         string
		file         string
		format       string
		command      Command
		controlPlane bool
		config       string
		node         Node
		check        func(g Gomega, d *Data)
	}{
		{
			name: "init, cloud-config, kubeadm v1beta4", file: "init-cloud-config.yaml", format: FormatCloudConfig,
			command: CommandInit, controlPlane: true, config: "/run/kubeadm/kubeadm.yaml",
			node: Node{Name: "cp-0", Labels: map[string]string{"tier": "control", "example.com/rack": "r1"}},
			check: func(g Gomega, d *Data) {
				cc := d.Kubeadm.Cluster
				g.Expect(cc).NotTo(BeNil())
				g.Expect(cc.KubernetesVersion).To(Equal("v1.37.1"))
				g.Expect(cc.APIServer.ExtraArgs).To(Equal(Args{{Name: "admission-control-config-file", Value: "/etc/kubernetes/admission.yaml"}, {Name: "cloud-provider", Value: "external"}}))
				g.Expect(cc.APIServer.ExtraVolumes).To(Equal([]HostVolume{{Name: "admission", HostPath: "/etc/kubernetes/admission.yaml", MountPath: "/etc/kubernetes/admission.yaml", ReadOnly: true}}))
				g.Expect(cc.Etcd.Local.ExtraArgs).To(Equal(Args{{Name: "quota-backend-bytes", Value: "8589934592"}}))
				adm, ok := d.File("/etc/kubernetes/admission.yaml")
				g.Expect(ok).To(BeTrue())
				g.Expect(string(adm.Content)).To(ContainSubstring("enforce: baseline"))
				g.Expect(adm.Mode.Perm()).To(BeEquivalentTo(0o600))
				extra, ok := d.File("/etc/kubernetes/extra.conf")
				g.Expect(ok).To(BeTrue())
				g.Expect(string(extra.Content)).To(Equal("apiVersion: v1\nkind: Config\n"), "gzip+base64 content is decoded")
			},
		},
		{
			name: "join control plane, cloud-config, kubeadm v1beta3 with a templated node name", file: "join-control-plane-cloud-config.yaml",
			format: FormatCloudConfig, command: CommandJoin, controlPlane: true, config: "/run/kubeadm/kubeadm-join-config.yaml",
			node: Node{Labels: map[string]string{"role": "cp"}, DefaultTaints: true},
		},
		{
			name: "join worker, cloud-config, with taints from the kubelet's flags", file: "join-worker-cloud-config.yaml",
			format: FormatCloudConfig, command: CommandJoin, config: "/run/kubeadm/kubeadm-join-config.yaml",
			node: Node{Name: "worker-a", Labels: map[string]string{"pool": "blue"}, DefaultTaints: true, Taints: []corev1.Taint{
				{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule},
			}},
		},
		{
			name: "init, Ignition 2.3 as upstream's transpiler writes it", file: "init-ignition-v2.json", format: FormatIgnition,
			command: CommandInit, controlPlane: true, config: "/etc/kubeadm.yml",
			node: Node{Labels: map[string]string{"os": "flatcar"}, DefaultTaints: true},
			check: func(g Gomega, d *Data) {
				g.Expect(d.Kubeadm.Cluster.APIServer.ExtraArgs).To(Equal(Args{{Name: "audit-log-maxage", Value: "7"}}))
				ca, ok := d.File("/etc/kubernetes/pki/ca.crt")
				g.Expect(ok).To(BeTrue())
				g.Expect(string(ca.Content)).To(Equal("-----BEGIN CERTIFICATE-----\n"))
				g.Expect(ca.Mode.Perm()).To(BeEquivalentTo(0o640))
			},
		},
		{
			name: "join worker, Ignition 3.4 with gzip contents", file: "join-ignition-v3.json", format: "",
			command: CommandJoin, config: "/etc/kubeadm.yml",
			node: Node{Name: "flatcar-worker", Taints: []corev1.Taint{{Key: "example.com/special", Effect: corev1.TaintEffectNoExecute}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d, err := Parse(tt.format, readTestdata(t, tt.file))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Command).To(Equal(tt.command))
			g.Expect(d.ConfigPath).To(Equal(tt.config))
			g.Expect(d.ControlPlane()).To(Equal(tt.controlPlane))
			node, err := d.Node()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(node).To(Equal(tt.node))
			if tt.check != nil {
				tt.check(g, d)
			}
		})
	}
}

func TestParseHandWritten(t *testing.T) {
	g := NewWithT(t)
	d, err := Parse(FormatCloudConfig, []byte("#cloud-config\n# Not executed.\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Command).To(Equal(CommandNone))
	g.Expect(d.ControlPlane()).To(BeFalse())
	node, err := d.Node()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node).To(Equal(Node{DefaultTaints: true}))
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name, format, data, want string
	}{
		{name: "not cloud-config", format: FormatCloudConfig, data: "#!/bin/bash\necho hi\n",
			want: "the bootstrap data is not a cloud-config document: its first line must be #cloud-config"},
		{name: "not YAML", format: FormatCloudConfig, data: "#cloud-config\nwrite_files: [\n",
			want: "the cloud-config document is not valid YAML"},
		{name: "unknown format", format: "shell", data: "x", want: `unknown bootstrap data format "shell": expected cloud-config or ignition`},
		{name: "bad base64", format: FormatCloudConfig,
			data: "#cloud-config\nwrite_files:\n- path: /a\n  encoding: b64\n  content: '%%%'\n",
			want: "write_files[0] (/a): cannot decode its b64 content"},
		{name: "kubeadm config missing", format: FormatCloudConfig,
			data: "#cloud-config\nruncmd:\n- kubeadm init --config /run/kubeadm/kubeadm.yaml\n",
			want: "kubeadm init reads /run/kubeadm/kubeadm.yaml, which the bootstrap data does not write"},
		{name: "kubeadm config of an unsupported version", format: FormatCloudConfig,
			data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta2\n    kind: InitConfiguration\nruncmd:\n- kubeadm init --config /run/kubeadm/kubeadm.yaml\n",
			want: "reading the kubeadm configuration /run/kubeadm/kubeadm.yaml: kubeadm.k8s.io/v1beta2 InitConfiguration: unsupported kubeadm API version"},
		{name: "join without JoinConfiguration", format: FormatCloudConfig,
			data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: ClusterConfiguration\nruncmd:\n- kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml\n",
			want: "kubeadm join reads /run/kubeadm/kubeadm-join-config.yaml, which holds no JoinConfiguration"},
		{name: "Ignition not JSON", format: FormatIgnition, data: "{nope", want: "the Ignition config is not valid JSON"},
		{name: "Ignition of an unknown version", format: FormatIgnition, data: `{"ignition":{"version":"1.0.0"}}`,
			want: `unsupported Ignition config version "1.0.0": expected 2.x or 3.x`},
		{name: "Ignition with a remote file", format: FormatIgnition,
			data: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"https://example.com/x"}}]}}`,
			want: "storage.files[0] (/etc/x): contents.source \"https://example.com/x\" is not a data URL: the local provider fetches nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Parse(tt.format, []byte(tt.data))
			g.Expect(err).To(HaveOccurred())
			g.Expect(IsInvalid(err)).To(BeTrue())
			g.Expect(err.Error()).To(HavePrefix(tt.want))
		})
	}
}

func TestNodeInvalid(t *testing.T) {
	tests := []struct {
		name string
		nr   NodeRegistration
		want string
	}{
		{name: "bad name", nr: NodeRegistration{Name: "Not_A_Node"}, want: `nodeRegistration.name "Not_A_Node" is not a valid Node name`},
		{name: "bad label", nr: NodeRegistration{KubeletExtraArgs: Args{{Name: "node-labels", Value: "a b=c"}}}, want: `kubelet --node-labels: label "a b"`},
		{name: "bad taint", nr: NodeRegistration{KubeletExtraArgs: Args{{Name: "register-with-taints", Value: "a=b"}}}, want: `kubelet --register-with-taints: taint "a=b" has no effect`},
		{name: "bad effect", nr: NodeRegistration{KubeletExtraArgs: Args{{Name: "register-with-taints", Value: "a:Never"}}}, want: `kubelet --register-with-taints: taint "a:Never": unknown effect "Never"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d := &Data{Command: CommandJoin, Kubeadm: &KubeadmConfig{Join: &JoinConfiguration{NodeRegistration: tt.nr}}}
			_, err := d.Node()
			g.Expect(err).To(MatchError(HavePrefix(tt.want)))
		})
	}
}

// TestParseCertificateSettings: kubeadm v1beta4's encryptionAlgorithm and certificateValidityPeriod are
// read (the local provider issues the machines' certificates with them).
func TestParseCertificateSettings(t *testing.T) {
	g := NewWithT(t)
	cc, err := ParseClusterConfiguration([]byte(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
encryptionAlgorithm: RSA-3072
certificateValidityPeriod: 2160h0m0s
caCertificateValidityPeriod: 8760h0m0s
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cc.EncryptionAlgorithm).To(Equal("RSA-3072"))
	g.Expect(cc.CertificateValidityPeriod).NotTo(BeNil())
	g.Expect(cc.CertificateValidityPeriod.Duration).To(Equal(90 * 24 * time.Hour))
}

package kubeadmapi

import (
	"testing"
	"time"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
)

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return m
}

func TestAPIVersion(t *testing.T) {
	tests := []struct {
		version, want, wantErr string
	}{
		{version: "v1.21.9", wantErr: "supports v1.22.0 and later"},
		{version: "v1.22.0", want: V1Beta3},
		{version: "v1.30.14", want: V1Beta3},
		{version: "v1.31.0-rc.1", want: V1Beta4},
		{version: "v1.37.1", want: V1Beta4},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			g := NewWithT(t)
			v, err := ParseVersion(tt.version)
			g.Expect(err).NotTo(HaveOccurred())
			got, err := APIVersion(v)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
	_, err := ParseVersion("latest")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`"latest"`)))
}

func clusterConfiguration() *bootstrapv1.ClusterConfiguration {
	env := bootstrapv1.EnvVar{EnvVar: corev1.EnvVar{Name: "GOGC", Value: "50"}}
	return &bootstrapv1.ClusterConfiguration{
		ClusterName: "demo",
		APIServer: bootstrapv1.APIServer{
			ControlPlaneComponent:  bootstrapv1.ControlPlaneComponent{ExtraArgs: map[string]string{"v": "2", "audit-log-path": "-"}, ExtraEnvs: []bootstrapv1.EnvVar{env}},
			TimeoutForControlPlane: &metav1.Duration{Duration: 8 * time.Minute},
		},
		Etcd: bootstrapv1.Etcd{Local: &bootstrapv1.LocalEtcd{ExtraArgs: map[string]string{"quota-backend-bytes": "8589934592"}}},
	}
}

func TestClusterConfiguration(t *testing.T) {
	g := NewWithT(t)

	out, err := ClusterConfiguration(clusterConfiguration(), mustVersion("v1.36.0"))
	g.Expect(err).NotTo(HaveOccurred())
	v4 := parse(t, out)
	g.Expect(v4).To(HaveKeyWithValue("apiVersion", "kubeadm.k8s.io/v1beta4"))
	g.Expect(v4).To(HaveKeyWithValue("kind", "ClusterConfiguration"))
	apiServer := v4["apiServer"].(map[string]any)
	g.Expect(apiServer["extraArgs"]).To(Equal([]any{
		map[string]any{"name": "audit-log-path", "value": "-"}, map[string]any{"name": "v", "value": "2"},
	}))
	g.Expect(apiServer).To(HaveKey("extraEnvs"))
	g.Expect(apiServer).NotTo(HaveKey("timeoutForControlPlane"), "v1beta4 moved it to the Init and Join configurations")
	g.Expect(v4["etcd"].(map[string]any)["local"].(map[string]any)["extraArgs"]).To(HaveLen(1))

	out, err = ClusterConfiguration(clusterConfiguration(), mustVersion("v1.30.0"))
	g.Expect(err).NotTo(HaveOccurred())
	v3 := parse(t, out)
	g.Expect(v3).To(HaveKeyWithValue("apiVersion", "kubeadm.k8s.io/v1beta3"))
	apiServer = v3["apiServer"].(map[string]any)
	g.Expect(apiServer["extraArgs"]).To(Equal(map[string]any{"v": "2", "audit-log-path": "-"}))
	g.Expect(apiServer).NotTo(HaveKey("extraEnvs"), "v1beta3 has no extraEnvs")
	g.Expect(apiServer).To(HaveKeyWithValue("timeoutForControlPlane", "8m0s"))

	// Certificate validity and key algorithm: kubeadm v1beta4's durations and algorithm; none in v1beta3.
	certs := &bootstrapv1.ClusterConfiguration{CertificateValidityPeriodDays: 90, CACertificateValidityPeriodDays: 365,
		EncryptionAlgorithm: bootstrapv1.EncryptionAlgorithmECDSAP256}
	out, err = ClusterConfiguration(certs, mustVersion("v1.36.0"))
	g.Expect(err).NotTo(HaveOccurred())
	v4 = parse(t, out)
	g.Expect(v4).To(HaveKeyWithValue("certificateValidityPeriod", "2160h0m0s"))
	g.Expect(v4).To(HaveKeyWithValue("caCertificateValidityPeriod", "8760h0m0s"))
	g.Expect(v4).To(HaveKeyWithValue("encryptionAlgorithm", "ECDSA-P256"))
	g.Expect(v4).NotTo(HaveKey("certificateValidityPeriodDays"))
	g.Expect(v4).NotTo(HaveKey("caCertificateValidityPeriodDays"))
	out, err = ClusterConfiguration(certs, mustVersion("v1.30.0"))
	g.Expect(err).NotTo(HaveOccurred())
	v3 = parse(t, out)
	for _, key := range []string{"certificateValidityPeriod", "certificateValidityPeriodDays", "caCertificateValidityPeriod", "caCertificateValidityPeriodDays", "encryptionAlgorithm"} {
		g.Expect(v3).NotTo(HaveKey(key), "kubeadm v1beta3 has no %s", key)
	}

	// External etcd stays external: no local etcd appears.
	ext := &bootstrapv1.ClusterConfiguration{Etcd: bootstrapv1.Etcd{External: &bootstrapv1.ExternalEtcd{Endpoints: []string{"https://e:2379"}, CAFile: "ca", CertFile: "c", KeyFile: "k"}}}
	out, err = ClusterConfiguration(ext, mustVersion("v1.36.0"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parse(t, out)["etcd"]).To(Not(HaveKey("local")))
}

func TestInitAndJoinConfiguration(t *testing.T) {
	g := NewWithT(t)
	nr := bootstrapv1.NodeRegistrationOptions{
		KubeletExtraArgs: map[string]string{"node-labels": "a=b"}, Taints: []corev1.Taint{}, ImagePullSerial: ptr.To(false),
	}

	out, err := InitConfiguration(&bootstrapv1.InitConfiguration{NodeRegistration: nr}, clusterConfiguration(), mustVersion("v1.36.0"))
	g.Expect(err).NotTo(HaveOccurred())
	init4 := parse(t, out)
	g.Expect(init4).To(HaveKeyWithValue("kind", "InitConfiguration"))
	g.Expect(init4["timeouts"]).To(HaveKeyWithValue("controlPlaneComponentHealthCheck", "8m0s"))
	nr4 := init4["nodeRegistration"].(map[string]any)
	g.Expect(nr4["kubeletExtraArgs"]).To(Equal([]any{map[string]any{"name": "node-labels", "value": "a=b"}}))
	g.Expect(nr4).To(HaveKeyWithValue("taints", BeEmpty()), "an empty taint list means no taint and must stay")
	g.Expect(nr4).To(HaveKeyWithValue("imagePullSerial", false))

	out, err = InitConfiguration(&bootstrapv1.InitConfiguration{NodeRegistration: nr}, clusterConfiguration(), mustVersion("v1.30.0"))
	g.Expect(err).NotTo(HaveOccurred())
	init3 := parse(t, out)
	g.Expect(init3).NotTo(HaveKey("timeouts"))
	nr3 := init3["nodeRegistration"].(map[string]any)
	g.Expect(nr3["kubeletExtraArgs"]).To(Equal(map[string]any{"node-labels": "a=b"}))
	g.Expect(nr3).NotTo(HaveKey("imagePullSerial"))
	g.Expect(nr3).To(HaveKey("taints"))

	join := &bootstrapv1.JoinConfiguration{NodeRegistration: nr, Discovery: bootstrapv1.Discovery{
		BootstrapToken: &bootstrapv1.BootstrapTokenDiscovery{Token: "abcdef.0123456789abcdef"}, Timeout: &metav1.Duration{Duration: time.Minute},
	}}
	out, err = JoinConfiguration(join, nil, mustVersion("v1.36.0"))
	g.Expect(err).NotTo(HaveOccurred())
	join4 := parse(t, out)
	g.Expect(join4["discovery"]).NotTo(HaveKey("timeout"))
	g.Expect(join4["timeouts"]).To(Equal(map[string]any{"tlsBootstrap": "1m0s"}))

	out, err = JoinConfiguration(join, nil, mustVersion("v1.30.0"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parse(t, out)["discovery"]).To(HaveKeyWithValue("timeout", "1m0s"))
}

func mustVersion(s string) semver.Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

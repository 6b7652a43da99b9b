package source

import (
	"bytes"
	"compress/gzip"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
)

func TestProviderForURL(t *testing.T) {
	tests := []struct {
		name, url, version string
		t                  clusterctlv1.ProviderType
		want, wantErr      string
	}{
		{name: "aws", t: clusterctlv1.InfrastructureProviderType, url: "https://github.com/kubernetes-sigs/cluster-api-provider-aws/releases",
			want: "https://github.com/kubernetes-sigs/cluster-api-provider-aws/releases/latest/infrastructure-components.yaml"},
		{name: "docker", t: clusterctlv1.InfrastructureProviderType, url: "https://github.com/kubernetes-sigs/cluster-api/releases",
			want: "https://github.com/kubernetes-sigs/cluster-api/releases/latest/infrastructure-components-development.yaml"},
		{name: "mine", t: clusterctlv1.ControlPlaneProviderType, url: "https://github.com/me/mine/releases/",
			want: "https://github.com/me/mine/releases/latest/control-plane-components.yaml"},
		{name: "cluster-api", t: clusterctlv1.CoreProviderType, url: "https://gitlab.example.com/api/v4/projects/42/packages/generic/capi", version: "v1.0.0",
			want: "https://gitlab.example.com/api/v4/projects/42/packages/generic/capi/v1.0.0/core-components.yaml"},
		{name: "x", t: clusterctlv1.InfrastructureProviderType, url: "https://gitlab.example.com/api/v4/projects/42/packages/generic/x",
			wantErr: "is a GitLab package, whose versions cannot be listed: set spec.version"},
		{name: "local", t: clusterctlv1.InfrastructureProviderType, url: "https://mirror.example/capi",
			want: "https://mirror.example/capi/infrastructure-local/latest/infrastructure-components.yaml"},
		{name: "local", t: clusterctlv1.InfrastructureProviderType, url: "http://10.0.0.1:8080/capi/infrastructure-local/",
			want: "http://10.0.0.1:8080/capi/infrastructure-local/latest/infrastructure-components.yaml"},
		{name: "local", t: clusterctlv1.InfrastructureProviderType, url: "ftp://mirror.example/capi", wantErr: "is not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			g := NewWithT(t)
			p, err := ProviderForURL(tt.name, tt.t, tt.url, tt.version)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.URL).To(Equal(tt.want))
		})
	}
}

func TestReleaseFromConfigMap(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("kind: Namespace\n"))
	_ = zw.Close()
	tests := []struct {
		name    string
		cm      corev1.ConfigMap
		want    string
		wantErr string
	}{
		{name: "plain", want: "kind: Namespace\n", cm: corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "v1.0.0"},
			Data: map[string]string{"metadata": "m", "components": "kind: Namespace\n"}}},
		{name: "compressed", want: "kind: Namespace\n", cm: corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "v1.0.0", Annotations: map[string]string{operatorv1.CompressedAnnotation: "true"}},
			Data:       map[string]string{"metadata": "m"}, BinaryData: map[string][]byte{"components": gz.Bytes()}}},
		{name: "compressed without binaryData", cm: corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "v1.0.0", Namespace: "ns", Annotations: map[string]string{operatorv1.CompressedAnnotation: "true"}},
			Data:       map[string]string{"metadata": "m"}},
			wantErr: `ConfigMap ns/v1.0.0 is annotated provider.cluster.x-k8s.io/compressed: "true" but has no binaryData "components" key with the gzip-compressed components`},
		{name: "no components", cm: corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "v1.0.0", Namespace: "ns"}, Data: map[string]string{"metadata": "m"}},
			wantErr: `ConfigMap ns/v1.0.0 has no "components" key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := ReleaseFromConfigMap(&tt.cm)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(HavePrefix(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(r.Components)).To(Equal(tt.want))
			g.Expect(r.Version).To(Equal("v1.0.0"))
		})
	}
}

func TestConfigMapForCompressesLargeComponents(t *testing.T) {
	g := NewWithT(t)
	big := bytes.Repeat([]byte("# padding\n"), compressAbove/5)
	cm, err := ConfigMapFor("ns", "c", &Release{Version: "v1.0.0", Metadata: []byte("m"), Components: big})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Annotations).To(HaveKeyWithValue(operatorv1.CompressedAnnotation, "true"))
	r, err := ReleaseFromConfigMap(cm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Components).To(Equal(big))
}

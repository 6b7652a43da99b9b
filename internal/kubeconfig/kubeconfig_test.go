package kubeconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/pki"
)

func newTestCA(t *testing.T, now time.Time) *CA {
	t.Helper()
	certPEM, keyPEM, err := NewCA("kubernetes", now)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestGenerate(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	ca := newTestCA(t, now)

	data, err := Generate("c1", "https://10.0.0.1:6443", ca, now)
	g.Expect(err).NotTo(HaveOccurred())

	cfg, err := clientcmd.Load(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CurrentContext).To(Equal("c1-admin@c1"))
	g.Expect(cfg.Contexts["c1-admin@c1"].Cluster).To(Equal("c1"))
	g.Expect(cfg.Contexts["c1-admin@c1"].AuthInfo).To(Equal("c1-admin"))
	g.Expect(cfg.Clusters["c1"].Server).To(Equal("https://10.0.0.1:6443"))

	cert, err := ClientCertificate(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.Subject.CommonName).To(Equal("kubernetes-admin"))
	g.Expect(cert.Subject.Organization).To(Equal([]string{"system:masters"}))
	g.Expect(cert.ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}))
	g.Expect(cert.NotAfter).To(BeTemporally("~", now.Add(ClientCertificateValidity), time.Second))

	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(cfg.Clusters["c1"].CertificateAuthorityData)).To(BeTrue())
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred(), "the client certificate must verify against the CA the kubeconfig trusts")

	// The key in the kubeconfig belongs to the certificate.
	key, err := pki.ParseKey(cfg.AuthInfos["c1-admin"].ClientKeyData)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key.Public()).To(Equal(cert.PublicKey))
}

func TestNeedsRotation(t *testing.T) {
	now := time.Now()
	ca := newTestCA(t, now.Add(-2*365*24*time.Hour))
	otherCA := newTestCA(t, now)
	const server = "https://10.0.0.1:6443"

	fresh, err := Generate("c1", server, ca, now)
	if err != nil {
		t.Fatal(err)
	}
	sevenMonthsOld, err := Generate("c1", server, ca, now.Add(-7*30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	fiveMonthsOld, err := Generate("c1", server, ca, now.Add(-5*30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		data       []byte
		ca         *CA
		server     string
		want       bool
		wantReason string
	}{
		{name: "fresh", data: fresh, ca: ca, server: server, want: false},
		{name: "five months old", data: fiveMonthsOld, ca: ca, server: server, want: false},
		{name: "less than six months left", data: sevenMonthsOld, ca: ca, server: server, want: true, wantReason: "the client certificate expires on"},
		{name: "the CA changed", data: fresh, ca: otherCA, server: server, want: true, wantReason: "the CA changed"},
		{name: "the endpoint changed", data: fresh, ca: ca, server: "https://lb:443", want: true, wantReason: "the control plane endpoint changed"},
		{name: "server not checked", data: fresh, ca: ca, server: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, reason, err := NeedsRotation(tt.data, tt.ca, tt.server, now)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
			g.Expect(reason).To(HavePrefix(tt.wantReason))
		})
	}

	g := NewWithT(t)
	_, _, err = NeedsRotation([]byte("not: [a kubeconfig"), ca, server, now)
	g.Expect(err).To(MatchError(ErrInvalidKubeconfig))
}

func TestParseCA(t *testing.T) {
	now := time.Now()
	rsaCert, rsaKey, err := NewCA("kubernetes", now)
	if err != nil {
		t.Fatal(err)
	}
	otherCert, _, err := NewCA("other", now)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(rsaCert, rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := Generate("c1", "https://x:1", ca, now)
	if err != nil {
		t.Fatal(err)
	}
	leafCert, err := ClientCertificate(leaf)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		cert, key []byte
		wantErr   string
	}{
		{name: "PKCS#1 key", cert: rsaCert, key: rsaKey},
		{name: "PKCS#8 key", cert: rsaCert, key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})},
		{name: "key of another certificate", cert: otherCert, key: rsaKey, wantErr: "does not match"},
		{name: "EC key of another certificate", cert: rsaCert, key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), wantErr: "does not match"},
		{name: "not a CA", cert: pki.EncodeCert(leafCert), key: rsaKey, wantErr: "not a certificate authority"},
		{name: "no certificate", cert: []byte("garbage"), key: rsaKey, wantErr: "no PEM certificate"},
		{name: "no key", cert: rsaCert, key: nil, wantErr: "no PEM private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := ParseCA(tt.cert, tt.key)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

func TestSecrets(t *testing.T) {
	g := NewWithT(t)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", UID: "uid-1"}}

	s := NewSecret(cluster, []byte("data"))
	g.Expect(s.Name).To(Equal("c1-kubeconfig"))
	g.Expect(s.Type).To(Equal(corev1.SecretType("cluster.x-k8s.io/secret")))
	g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	g.Expect(s.Data).To(HaveKeyWithValue("value", []byte("data")))
	g.Expect(metav1.IsControlledBy(s, cluster)).To(BeTrue())

	caSecret, err := NewCASecret(client.ObjectKeyFromObject(cluster), nil, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(caSecret.Name).To(Equal("c1-ca"))
	g.Expect(caSecret.Namespace).To(Equal("ns"))
	g.Expect(caSecret.Type).To(Equal(clusterv1.ClusterSecretType))
	g.Expect(caSecret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	g.Expect(caSecret.OwnerReferences).To(BeEmpty())
	ca, err := CAFromSecret(caSecret)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ca.Cert.IsCA).To(BeTrue())
	g.Expect(ca.Cert.CheckSignatureFrom(ca.Cert)).To(Succeed(), "the CA is self-signed")
}

package certs

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
)

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func TestLookupOrGenerate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "ns", Name: "demo"}
	owner := metav1.OwnerReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1beta1", Kind: "KubeadmConfig", Name: "cp", UID: "u1"}

	// A CA the user created is adopted as it is; the other certificates are generated.
	userCA := &Certificate{Purpose: clustersecret.ClusterCA}
	g.Expect(userCA.generate()).To(Succeed())
	c := newClient(t, userCA.Secret(key, nil))

	cp := ForControlPlane(nil)
	g.Expect(cp.LookupOrGenerate(ctx, c, key, owner)).To(Succeed())
	g.Expect(cp.EnsureAllExist()).To(Succeed())
	g.Expect(cp.Get(clustersecret.ClusterCA).Cert).To(Equal(userCA.Cert))
	g.Expect(cp.Get(clustersecret.ClusterCA).Generated).To(BeFalse())
	for _, p := range []clustersecret.Purpose{clustersecret.EtcdCA, clustersecret.FrontProxyCA, clustersecret.ServiceAccount} {
		s := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "demo-" + string(p)}, s)).To(Succeed())
		g.Expect(s.Type).To(Equal(clusterv1.ClusterSecretType))
		g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "demo"))
		g.Expect(s.OwnerReferences).To(ConsistOf(owner))
		g.Expect(s.Data).To(HaveKey(clustersecret.CertKey))
		g.Expect(s.Data).To(HaveKey(clustersecret.KeyKey))
	}
	block, _ := pem.Decode(cp.Get(clustersecret.EtcdCA).Cert)
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.IsCA).To(BeTrue())
	g.Expect(cert.Subject.CommonName).To(Equal("kubernetes"))
	block, _ = pem.Decode(cp.Get(clustersecret.ServiceAccount).Cert)
	g.Expect(block.Type).To(Equal("PUBLIC KEY"))

	// A joining control plane Machine finds the same certificates.
	join := ForControlPlane(&bootstrapv1.ClusterConfiguration{CertificatesDir: "/pki"})
	g.Expect(join.Lookup(ctx, c, key)).To(Succeed())
	g.Expect(join.EnsureAllExist()).To(Succeed())
	var paths []string
	for _, f := range join.Files() {
		paths = append(paths, f.Path+" "+f.Permissions)
	}
	g.Expect(paths).To(Equal([]string{
		"/pki/ca.crt 0640", "/pki/ca.key 0600", "/pki/etcd/ca.crt 0640", "/pki/etcd/ca.key 0600",
		"/pki/front-proxy-ca.crt 0640", "/pki/front-proxy-ca.key 0600", "/pki/sa.pub 0640", "/pki/sa.key 0600",
	}))

	hashes, err := join.Get(clustersecret.ClusterCA).Hashes()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hashes).To(HaveLen(1))
	g.Expect(hashes[0]).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
}

// TestGenerateWithEncryptionAlgorithmAndValidity: the CAs and the service account key are generated with
// the ClusterConfiguration's encryptionAlgorithm and caCertificateValidityPeriodDays (upstream v1.14), and
// with RSA 2048 for ten years without them.
func TestGenerateWithEncryptionAlgorithmAndValidity(t *testing.T) {
	tests := []struct {
		name      string
		cfg       *bootstrapv1.ClusterConfiguration
		wantKey   x509.PublicKeyAlgorithm
		wantBits  int
		wantDays  int
		wantBlock string
	}{
		{name: "defaults", cfg: nil, wantKey: x509.RSA, wantBits: 2048, wantDays: 3650, wantBlock: "RSA PRIVATE KEY"},
		{name: "RSA-4096 for a year", cfg: &bootstrapv1.ClusterConfiguration{EncryptionAlgorithm: bootstrapv1.EncryptionAlgorithmRSA4096, CACertificateValidityPeriodDays: 365},
			wantKey: x509.RSA, wantBits: 4096, wantDays: 365, wantBlock: "RSA PRIVATE KEY"},
		{name: "ECDSA-P384", cfg: &bootstrapv1.ClusterConfiguration{EncryptionAlgorithm: bootstrapv1.EncryptionAlgorithmECDSAP384},
			wantKey: x509.ECDSA, wantBits: 384, wantDays: 3650, wantBlock: "EC PRIVATE KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			set := ForControlPlane(tt.cfg)
			g.Expect(set.LookupOrGenerate(context.Background(), newClient(t), client.ObjectKey{Namespace: "ns", Name: "c"},
				metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"})).To(Succeed())
			for _, p := range []clustersecret.Purpose{clustersecret.ClusterCA, clustersecret.EtcdCA, clustersecret.FrontProxyCA} {
				block, _ := pem.Decode(set.Get(p).Cert)
				cert, err := x509.ParseCertificate(block.Bytes)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(cert.PublicKeyAlgorithm).To(Equal(tt.wantKey), string(p))
				g.Expect(keyBits(cert.PublicKey)).To(Equal(tt.wantBits), string(p))
				g.Expect(cert.NotAfter.Sub(cert.NotBefore).Round(time.Hour)).To(Equal(time.Duration(tt.wantDays)*24*time.Hour), string(p), "the validity, back-dated 5 minutes")
				keyBlock, _ := pem.Decode(set.Get(p).Key)
				g.Expect(keyBlock.Type).To(Equal(tt.wantBlock), string(p))
			}
			pub, _ := pem.Decode(set.Get(clustersecret.ServiceAccount).Cert)
			key, err := x509.ParsePKIXPublicKey(pub.Bytes)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(keyBits(key)).To(Equal(tt.wantBits), "the service account key")
		})
	}
}

func keyBits(key any) int {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		return k.Curve.Params().BitSize
	}
	return 0
}

func TestMissingCertificates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "ns", Name: "demo"}
	c := newClient(t)

	worker := ForWorker("")
	g.Expect(worker.Lookup(ctx, c, key)).To(Succeed())
	g.Expect(worker.EnsureAllExist()).To(MatchError(ErrMissing))

	external := ForControlPlane(&bootstrapv1.ClusterConfiguration{Etcd: bootstrapv1.Etcd{External: &bootstrapv1.ExternalEtcd{
		Endpoints: []string{"https://e:2379"}, CAFile: "/etc/etcd/ca.crt", CertFile: "/etc/etcd/client.crt", KeyFile: "/etc/etcd/client.key",
	}}})
	err := external.LookupOrGenerate(ctx, c, key, metav1.OwnerReference{})
	g.Expect(err).To(MatchError(ErrMissing))
	g.Expect(err.Error()).To(ContainSubstring("ns/demo-apiserver-etcd-client"))
}

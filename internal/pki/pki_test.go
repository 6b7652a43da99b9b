package pki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestSignedCertificatesVerify(t *testing.T) {
	g := NewWithT(t)
	ca, err := NewCA("test-ca")
	g.Expect(err).NotTo(HaveOccurred())
	server, err := ca.Sign(CertConfig{CommonName: "kube-apiserver", DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	g.Expect(err).NotTo(HaveOccurred())

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	_, err = server.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(time.Until(server.Cert.NotAfter)).To(BeNumerically(">", 364*24*time.Hour))

	other, err := NewCA("other")
	g.Expect(err).NotTo(HaveOccurred())
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Cert)
	_, err = server.Cert.Verify(x509.VerifyOptions{Roots: otherRoots, DNSName: "localhost"})
	g.Expect(err).To(HaveOccurred())
}

func TestPEMRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ca, err := NewCA("ca")
	g.Expect(err).NotTo(HaveOccurred())
	back, err := Parse(ca.CertPEM(), ca.KeyPEM())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.Cert.Equal(ca.Cert)).To(BeTrue())

	// Keys written by other tools (kubeadm writes PKCS#1 RSA keys) are read too.
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})
	key, err := ParseKey(pkcs1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key.Public()).To(Equal(rsaKey.Public()))

	_, err = ParseKey([]byte("not pem"))
	g.Expect(err).To(MatchError(ContainSubstring("no PEM private key")))
}

func TestAPIServerCertConfig(t *testing.T) {
	g := NewWithT(t)
	ca, err := NewCA("ca")
	g.Expect(err).NotTo(HaveOccurred())
	kp, err := ca.Sign(APIServerCertConfig("c1"))
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, name := range []string{"127.0.0.1", "10.96.0.1", "localhost", "kubernetes.default.svc", "c1"} {
		_, err = kp.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		g.Expect(err).NotTo(HaveOccurred(), name)
	}
	g.Expect(APIServerCertConfig().DNSNames).NotTo(ContainElement("c1"), "extra names are not shared between calls")
}

func TestEnsureServiceAccountKey(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	keyFile, pubFile := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	g.Expect(EnsureServiceAccountKey(keyFile, pubFile)).To(Succeed())
	keyPEM, err := os.ReadFile(keyFile)
	g.Expect(err).NotTo(HaveOccurred())
	pubPEM, err := os.ReadFile(pubFile)
	g.Expect(err).NotTo(HaveOccurred())
	key, err := ParseKey(keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(pubPEM)
	g.Expect(block).NotTo(BeNil())
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key.Public()).To(Equal(pub), "the public key is the private key's")
	info, err := os.Stat(keyFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))

	// Kept across restarts, so that tokens stay valid.
	g.Expect(EnsureServiceAccountKey(keyFile, pubFile)).To(Succeed())
	g.Expect(os.ReadFile(keyFile)).To(Equal(keyPEM))

	// A lost public key means a new pair.
	g.Expect(os.Remove(pubFile)).To(Succeed())
	g.Expect(EnsureServiceAccountKey(keyFile, pubFile)).To(Succeed())
	g.Expect(os.ReadFile(keyFile)).NotTo(Equal(keyPEM))
	g.Expect(pubFile).To(BeAnExistingFile())
}

package pki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
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

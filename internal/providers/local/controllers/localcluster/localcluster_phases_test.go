package localcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/pki"
)

// A service account key is written as upstream's <cluster>-sa Secret holds it (public key in tls.crt, an
// RSA private key as PKCS#1 in tls.key) and reads back as the same key.
func TestEncodeServiceAccountKey(t *testing.T) {
	g := NewWithT(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	pub, priv, err := encodeServiceAccountKey(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(pub)).To(HavePrefix("-----BEGIN PUBLIC KEY-----"))
	g.Expect(string(priv)).To(HavePrefix("-----BEGIN RSA PRIVATE KEY-----"))
	back, err := pki.ParseKey(priv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key.Equal(back)).To(BeTrue())
}

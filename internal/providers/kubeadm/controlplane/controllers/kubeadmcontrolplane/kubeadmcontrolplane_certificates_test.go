package kubeadmcontrolplane

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capstan-dev/capstan/internal/pki"
)

// The etcd client certificates are kept one per etcd CA, reused, and bounded: the least recently used
// CA's certificate goes first.
func TestEtcdClientCertsAreBounded(t *testing.T) {
	g := NewWithT(t)
	e := &etcdClientCerts{size: 3}
	type ca struct{ cert, key []byte }
	var cas []ca
	for i := range 4 {
		kp, err := pki.NewCA(fmt.Sprintf("etcd-ca-%d", i))
		g.Expect(err).NotTo(HaveOccurred())
		cas = append(cas, ca{cert: kp.CertPEM(), key: kp.KeyPEM()})
	}
	first, err := e.get(cas[0].cert, cas[0].key)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := e.get(cas[0].cert, cas[0].key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Leaf.SerialNumber).To(Equal(first.Leaf.SerialNumber), "a CA's certificate is reused")

	for _, c := range cas[1:] {
		_, err := e.get(c.cert, c.key)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(e.certs.Len()).To(Equal(3))
	renewed, err := e.get(cas[0].cert, cas[0].key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(renewed.Leaf.SerialNumber).NotTo(Equal(first.Leaf.SerialNumber), "the least recently used CA's certificate went")
}

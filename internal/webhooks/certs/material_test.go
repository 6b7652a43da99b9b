package certs

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestRenewalKeepsWhatIsValid(t *testing.T) {
	g := NewWithT(t)
	p := Policy{CAValidity: 100 * time.Hour, CARenewBefore: 10 * time.Hour, CertValidity: 10 * time.Hour, CertRenewBefore: 3 * time.Hour}
	names := []string{"svc.ns.svc", "svc.ns.svc.cluster.local"}
	start := time.Now()
	m, err := renew(nil, renewal{ca: true, cert: true}, start, "svc", names, p)
	g.Expect(err).NotTo(HaveOccurred())

	tests := []struct {
		name           string
		at             time.Time
		names          []string
		wantCA, wantCt bool
	}{
		{"fresh", start.Add(time.Minute), names, false, false},
		{"serving certificate about to expire", start.Add(8 * time.Hour), names, false, true},
		{"serving certificate expired", start.Add(11 * time.Hour), names, false, true},
		{"another Service name", start.Add(time.Minute), []string{"other.ns.svc"}, false, true},
		{"CA about to expire", start.Add(95 * time.Hour), names, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := m.check(tt.at, tt.names, p)
			g.Expect(r.ca).To(Equal(tt.wantCA), r.reason)
			g.Expect(r.cert).To(Equal(tt.wantCt), r.reason)
		})
	}

	// Renewing the serving certificate keeps the CA.
	next, err := renew(m, renewal{cert: true}, start.Add(8*time.Hour), "svc", names, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(next.bundlePEM()).To(Equal(m.bundlePEM()))
	g.Expect(next.check(start.Add(8*time.Hour), names, p).needed()).To(BeFalse())

	// Renewing the CA keeps the old one in the bundle while it is valid, so that API servers that have
	// the old bundle still trust replicas serving the old certificate.
	rotated, err := renew(m, renewal{ca: true, cert: true}, start.Add(95*time.Hour), "svc", names, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rotated.cas).To(HaveLen(2))
	g.Expect(rotated.cas[1].Equal(m.cas[0])).To(BeTrue())
	g.Expect(rotated.check(start.Add(95*time.Hour), names, p).needed()).To(BeFalse())
}

func TestSecretRoundTrip(t *testing.T) {
	g := NewWithT(t)
	m, err := renew(nil, renewal{ca: true, cert: true}, time.Now(), "svc", []string{"svc.ns.svc"}, DefaultPolicy())
	g.Expect(err).NotTo(HaveOccurred())
	back, err := fromSecret(&corev1.Secret{Data: m.data()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.data()).To(Equal(m.data()))

	other, err := renew(nil, renewal{ca: true, cert: true}, time.Now(), "svc", []string{"svc.ns.svc"}, DefaultPolicy())
	g.Expect(err).NotTo(HaveOccurred())
	mixed := m.data()
	mixed[CAPrivateKeyKey] = other.caKey
	_, err = fromSecret(&corev1.Secret{Data: mixed})
	g.Expect(err).To(MatchError(ContainSubstring("ca.key is not the key of the first certificate of ca.crt")))
	_, err = fromSecret(&corev1.Secret{Data: map[string][]byte{CAKey: []byte("garbage")}})
	g.Expect(err).To(MatchError(ContainSubstring("ca.crt: reading the PEM certificates: data does not contain any valid RSA or ECDSA certificates")))
}

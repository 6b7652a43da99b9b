package certs

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/internal/pki"
)

// The keys of the certificate Secret, as cert-manager writes them (plus the CA's key, which capstan keeps
// to sign the next serving certificate).
const (
	// CAKey holds the CA bundle the API server must trust: the current CA first, then earlier CAs that
	// have not expired yet (after a CA rotation, until they do).
	CAKey = "ca.crt"
	// CAPrivateKeyKey holds the current CA's private key.
	CAPrivateKeyKey = "ca.key"
	// CertKey holds the serving certificate.
	CertKey = corev1.TLSCertKey
	// PrivateKeyKey holds the serving certificate's private key.
	PrivateKeyKey = corev1.TLSPrivateKeyKey
)

// Policy says how long certificates are valid and when they are replaced.
type Policy struct {
	// CAValidity is how long a new CA is valid.
	CAValidity time.Duration
	// CARenewBefore is how long before its expiry a CA is replaced.
	CARenewBefore time.Duration
	// CertValidity is how long a new serving certificate is valid.
	CertValidity time.Duration
	// CertRenewBefore is how long before its expiry a serving certificate is replaced.
	CertRenewBefore time.Duration
}

// DefaultPolicy is a CA of ten years replaced one year before it expires, and serving certificates of one
// year replaced four months before they expire.
func DefaultPolicy() Policy {
	year := 365 * 24 * time.Hour
	return Policy{CAValidity: 10 * year, CARenewBefore: year, CertValidity: year, CertRenewBefore: 120 * 24 * time.Hour}
}

// material is a CA bundle, the current CA's key and a serving certificate signed by that CA.
type material struct {
	// cas is the bundle: cas[0] is the current CA, whose key is caKey.
	cas   []*x509.Certificate
	caKey []byte
	cert  *x509.Certificate
	// certPEM and keyPEM are the serving certificate and its key.
	certPEM, keyPEM []byte
	tls             tls.Certificate
}

// bundlePEM is the CA bundle the API server must trust.
func (m *material) bundlePEM() []byte {
	var buf bytes.Buffer
	for _, ca := range m.cas {
		buf.Write(pki.EncodeCert(ca))
	}
	return buf.Bytes()
}

// fromSecret reads the material of a certificate Secret.
func fromSecret(s *corev1.Secret) (*material, error) {
	cas, err := pki.ParseCerts(s.Data[CAKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CAKey, err)
	}
	ca, err := pki.Parse(pki.EncodeCert(cas[0]), s.Data[CAPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CAPrivateKeyKey, err)
	}
	if !publicKeysEqual(ca) {
		return nil, fmt.Errorf("%s is not the key of the first certificate of %s", CAPrivateKeyKey, CAKey)
	}
	pair, err := tls.X509KeyPair(s.Data[CertKey], s.Data[PrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", CertKey, PrivateKeyKey, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CertKey, err)
	}
	return &material{cas: cas, caKey: s.Data[CAPrivateKeyKey], cert: cert,
		certPEM: s.Data[CertKey], keyPEM: s.Data[PrivateKeyKey], tls: pair}, nil
}

func publicKeysEqual(kp *pki.KeyPair) bool {
	type equaler interface{ Equal(x crypto.PublicKey) bool }
	pub, ok := kp.Cert.PublicKey.(equaler)
	return ok && pub.Equal(kp.Key.Public())
}

// data returns the Secret data holding the material.
func (m *material) data() map[string][]byte {
	return map[string][]byte{
		CAKey:           m.bundlePEM(),
		CAPrivateKeyKey: m.caKey,
		CertKey:         m.certPEM,
		PrivateKeyKey:   m.keyPEM,
	}
}

// renewal says what of the material must be replaced at now for the DNS names: the CA, the serving
// certificate, both, or nothing; reason says why, for the log.
type renewal struct {
	ca, cert bool
	reason   string
}

func (r renewal) needed() bool { return r.ca || r.cert }

// check returns what must be renewed.
func (m *material) check(now time.Time, dnsNames []string, p Policy) renewal {
	ca := m.cas[0]
	switch {
	case !ca.IsCA:
		return renewal{ca: true, cert: true, reason: "the first certificate of the bundle is not a CA"}
	case now.After(ca.NotAfter.Add(-p.CARenewBefore)):
		return renewal{ca: true, cert: true, reason: fmt.Sprintf("the CA expires on %s", ca.NotAfter.Format(time.RFC3339))}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, name := range dnsNames {
		if _, err := m.cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return renewal{cert: true, reason: fmt.Sprintf("the serving certificate is not valid for %s: %v", name, err)}
		}
	}
	if now.After(m.cert.NotAfter.Add(-p.CertRenewBefore)) {
		return renewal{cert: true, reason: fmt.Sprintf("the serving certificate expires on %s", m.cert.NotAfter.Format(time.RFC3339))}
	}
	return renewal{}
}

// renew returns new material: a new serving certificate, and a new CA too when r.ca (or when there is
// no material yet). The CAs of the old bundle that are still valid stay in the new bundle, so that an API
// server that has not got the new bundle yet keeps trusting the replicas that still serve the old
// certificate.
func renew(old *material, r renewal, now time.Time, commonName string, dnsNames []string, p Policy) (*material, error) {
	var ca *pki.KeyPair
	var bundle []*x509.Certificate
	if old == nil || r.ca {
		var err error
		ca, err = pki.NewCAFrom(pki.CertConfig{CommonName: commonName + "-ca", Validity: p.CAValidity, Now: now})
		if err != nil {
			return nil, err
		}
		bundle = []*x509.Certificate{ca.Cert}
		if old != nil {
			for _, c := range old.cas {
				if now.Before(c.NotAfter) {
					bundle = append(bundle, c)
				}
			}
		}
	} else {
		var err error
		if ca, err = pki.Parse(pki.EncodeCert(old.cas[0]), old.caKey); err != nil {
			return nil, err
		}
		bundle = old.cas
	}
	leaf, err := ca.Sign(pki.CertConfig{CommonName: dnsNames[0], DNSNames: dnsNames, Validity: p.CertValidity, Now: now,
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(leaf.CertPEM(), leaf.KeyPEM())
	if err != nil {
		return nil, err
	}
	return &material{cas: bundle, caKey: ca.KeyPEM(), cert: leaf.Cert, certPEM: leaf.CertPEM(), keyPEM: leaf.KeyPEM(), tls: pair}, nil
}

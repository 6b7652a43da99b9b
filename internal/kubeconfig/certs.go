package kubeconfig

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/capstan-dev/capstan/internal/pki"
)

const (
	// CAValidity is how long a CA made by NewCA is valid, as kubeadm's.
	CAValidity = pki.CAValidity

	// ClientCertificateValidity is how long the client certificate of a generated kubeconfig is valid.
	ClientCertificateValidity = 365 * 24 * time.Hour

	// RotationThreshold is how much validity a kubeconfig's client certificate must have left; below it,
	// the kubeconfig is regenerated. Half of ClientCertificateValidity, as upstream.
	RotationThreshold = ClientCertificateValidity / 2
)

// CA is a certificate authority: its certificate and its private key.
type CA = pki.KeyPair

// ParseCA reads a CA from the PEM of its certificate and of its private key (PKCS#1, PKCS#8 or SEC 1),
// checking that the key belongs to the certificate and that the certificate is a CA.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := pki.ParseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("the CA certificate is not a certificate authority")
	}
	key, err := pki.ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA key: %w", err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("the CA key does not match the CA certificate")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// NewCA returns the PEM of a new self-signed CA certificate, valid for CAValidity from now, with the given
// common name, and the PEM of its private key.
func NewCA(commonName string, now time.Time) (certPEM, keyPEM []byte, err error) {
	ca, err := pki.NewCAFrom(pki.CertConfig{CommonName: commonName, Now: now})
	if err != nil {
		return nil, nil, err
	}
	return ca.CertPEM(), ca.KeyPEM(), nil
}

// NewClientCertificate returns the PEM of a client certificate for user in groups, signed by ca and valid
// for ClientCertificateValidity from now (never beyond the CA), and the PEM of its private key.
func NewClientCertificate(ca *CA, user string, groups []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	kp, err := ca.Sign(pki.CertConfig{
		CommonName: user, Organization: groups, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		Validity: ClientCertificateValidity, Now: now,
	})
	if err != nil {
		return nil, nil, err
	}
	return kp.CertPEM(), kp.KeyPEM(), nil
}

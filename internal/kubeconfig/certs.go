package kubeconfig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
)

const (
	// CAValidity is how long a CA made by NewCA is valid, as kubeadm's.
	CAValidity = 10 * 365 * 24 * time.Hour

	// ClientCertificateValidity is how long the client certificate of a generated kubeconfig is valid.
	ClientCertificateValidity = 365 * 24 * time.Hour

	// RotationThreshold is how much validity a kubeconfig's client certificate must have left; below it,
	// the kubeconfig is regenerated. Half of ClientCertificateValidity, as upstream.
	RotationThreshold = ClientCertificateValidity / 2

	// clockSkew back-dates certificates so that servers whose clock lags accept them.
	clockSkew = 5 * time.Minute

	rsaKeySize = 2048
)

// CA is a certificate authority: its certificate and its private key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// ParseCA reads a CA from the PEM of its certificate and of its private key (PKCS#1, PKCS#8 or SEC 1),
// checking that the key belongs to the certificate and that the certificate is a CA.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := parseCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("the CA certificate is not a certificate authority")
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA key: %w", err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("the CA key does not match the CA certificate")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// NewCA returns the PEM of a new self-signed CA certificate (RSA 2048, valid for CAValidity from now) with
// the given common name, and the PEM of its PKCS#1 private key.
func NewCA(commonName string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaKeySize)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-clockSkew).UTC(),
		NotAfter:              now.Add(CAValidity).UTC(),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the CA certificate: %w", err)
	}
	return encodeCertificate(der), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

// newClientCertificate returns the PEM of a client certificate for user in groups, signed by ca and valid
// for ClientCertificateValidity from now, and the PEM of its private key.
func newClientCertificate(ca *CA, user string, groups []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaKeySize)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the client key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	notAfter := now.Add(ClientCertificateValidity)
	if notAfter.After(ca.Cert.NotAfter) {
		// A certificate cannot outlive the CA that vouches for it.
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    now.Add(-clockSkew).UTC(),
		NotAfter:     notAfter.UTC(),
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the client certificate: %w", err)
	}
	return encodeCertificate(der), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, fmt.Errorf("generating a certificate serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func encodeCertificate(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// parseCertificate returns the first certificate of a PEM bundle.
func parseCertificate(data []byte) (*x509.Certificate, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PEM certificate found")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

func parsePrivateKey(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PEM private key found")
		}
		switch block.Type {
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			return x509.ParseECPrivateKey(block.Bytes)
		case "PRIVATE KEY":
			key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, err
			}
			switch k := key.(type) {
			case *rsa.PrivateKey:
				return k, nil
			case *ecdsa.PrivateKey:
				return k, nil
			case ed25519.PrivateKey:
				return k, nil
			default:
				return nil, fmt.Errorf("unsupported private key type %T", key)
			}
		}
	}
}

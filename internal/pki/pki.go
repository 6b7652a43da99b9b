// Package pki creates the certificate authorities, certificates and keys that capstan's local API servers
// and kubeconfigs use, and reads and writes them as PEM; it also keeps the key pair a local API server
// signs service account tokens with.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertConfig describes a certificate to sign.
type CertConfig struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	// Usages are the extended key usages, for example x509.ExtKeyUsageServerAuth.
	Usages []x509.ExtKeyUsage
	// Validity is how long the certificate is valid; one year when zero (ten years for a CA). A signed
	// certificate never outlives its CA.
	Validity time.Duration
	// Now is the time the validity starts from; the current time when zero. Certificates are back-dated
	// by five minutes so that servers whose clock lags accept them.
	Now time.Time
	// KeyAlgorithm is the key of a signed certificate, a kubeadm encryption algorithm (NewKeyOf); ECDSA
	// P-256 when empty.
	KeyAlgorithm string
}

// clockSkew back-dates certificates so that servers whose clock lags accept them.
const clockSkew = 5 * time.Minute

func (cfg CertConfig) validity(defaultValidity time.Duration) (notBefore, notAfter time.Time) {
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	v := cfg.Validity
	if v == 0 {
		v = defaultValidity
	}
	return now.Add(-clockSkew).UTC(), now.Add(v).UTC()
}

// CAValidity is how long a CA is valid unless told otherwise, as kubeadm's.
const CAValidity = 10 * 365 * 24 * time.Hour

// NewCA returns a new self-signed certificate authority valid for CAValidity.
func NewCA(commonName string) (*KeyPair, error) {
	return NewCAFrom(CertConfig{CommonName: commonName})
}

// NewCAFrom returns a new self-signed certificate authority with the common name, organization and
// validity of cfg.
func NewCAFrom(cfg CertConfig) (*KeyPair, error) {
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := cfg.validity(CAValidity)
	commonName := cfg.CommonName
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: cfg.Organization},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating the %s CA: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// Sign returns a new key and a certificate for it signed by the CA.
func (ca *KeyPair) Sign(cfg CertConfig) (*KeyPair, error) {
	var key crypto.Signer
	var err error
	if cfg.KeyAlgorithm == "" {
		key, err = NewKey()
	} else {
		key, err = NewKeyOf(cfg.KeyAlgorithm)
	}
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := cfg.validity(365 * 24 * time.Hour)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cfg.CommonName, Organization: cfg.Organization},
		DNSNames:     cfg.DNSNames,
		IPAddresses:  cfg.IPs,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  cfg.Usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("signing the certificate of %s: %w", cfg.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// APIServerCertConfig describes the serving certificate of a kube-apiserver listening on loopback in a
// cluster whose service range is 10.96.0.0/12: valid for localhost, 127.0.0.1, the names and the cluster
// IP of the `kubernetes` Service, and extraNames.
func APIServerCertConfig(extraNames ...string) CertConfig {
	return CertConfig{
		CommonName: "kube-apiserver",
		DNSNames: append([]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"}, extraNames...),
		IPs:    []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

// EnsureServiceAccountKey writes a new key pair for signing service account tokens to keyFile (the private
// key, kube-apiserver's --service-account-signing-key-file) and pubFile (the public key,
// --service-account-key-file), unless both exist: the key is kept across restarts so that tokens stay valid.
func EnsureServiceAccountKey(keyFile, pubFile string) error {
	if _, err := os.Stat(keyFile); err == nil {
		if _, err := os.Stat(pubFile); err == nil {
			return nil
		}
	}
	key, err := NewKey()
	if err != nil {
		return fmt.Errorf("generating the service account key: %w", err)
	}
	priv, err := EncodeKey(key)
	if err != nil {
		return err
	}
	pub, err := EncodePublicKey(key.Public())
	if err != nil {
		return err
	}
	if err := writeFile(keyFile, priv); err != nil {
		return err
	}
	return writeFile(pubFile, pub)
}

// writeFile writes data atomically (a reader never sees half a file), readable by the owner only.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// CertPEM returns the certificate in PEM.
func (ca *KeyPair) CertPEM() []byte { return EncodeCert(ca.Cert) }

// KeyPEM returns the private key in PEM.
func (ca *KeyPair) KeyPEM() []byte {
	data, err := EncodeKey(ca.Key)
	if err != nil {
		// The keys this package creates always marshal.
		panic(err)
	}
	return data
}

// Parse reads a certificate and its key from PEM.
func Parse(certPEM, keyPEM []byte) (*KeyPair, error) {
	cert, err := ParseCert(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// NewKey returns a new ECDSA P-256 private key.
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// NewKeyOf returns a new private key of a kubeadm encryption algorithm (kubeadm's and Cluster API's names):
// RSA-2048 (also for ""), RSA-3072, RSA-4096, ECDSA-P256 or ECDSA-P384.
func NewKeyOf(algorithm string) (crypto.Signer, error) {
	switch algorithm {
	case "", "RSA-2048":
		return rsa.GenerateKey(rand.Reader, 2048)
	case "RSA-3072":
		return rsa.GenerateKey(rand.Reader, 3072)
	case "RSA-4096":
		return rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSA-P256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSA-P384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	}
	return nil, fmt.Errorf("unknown encryption algorithm %q: use RSA-2048, RSA-3072, RSA-4096, ECDSA-P256 or ECDSA-P384", algorithm)
}

// EncodeKeyAsKubeadm returns a private key in PEM as kubeadm and Cluster API write it: PKCS#1 ("RSA
// PRIVATE KEY") for RSA, SEC 1 ("EC PRIVATE KEY") for ECDSA.
func EncodeKeyAsKubeadm(key crypto.Signer) ([]byte, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	}
	return nil, fmt.Errorf("a %T private key is neither RSA nor ECDSA", key)
}

// EncodeCert returns a certificate in PEM.
func EncodeCert(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// EncodeKey returns a private key in PKCS#8 PEM.
func EncodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// EncodePublicKey returns a public key in PKIX PEM.
func EncodePublicKey(key crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParseCert reads the first certificate of a PEM bundle.
func ParseCert(data []byte) (*x509.Certificate, error) {
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil, errors.New("no PEM certificate found")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// ParseCerts reads every certificate of a PEM bundle, in order; an error when it holds none.
func ParseCerts(data []byte) ([]*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("reading the PEM certificates: %w", err)
	}
	return certs, nil
}

// ParseKey reads a PKCS#8, PKCS#1 (RSA) or SEC 1 (EC) private key from PEM.
func ParseKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	if key, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if signer, ok := key.(crypto.Signer); ok {
			return signer, nil
		}
		return nil, fmt.Errorf("a %T private key cannot sign", key)
	}
	if key, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	if key, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	return nil, fmt.Errorf("the %s PEM block is not a private key capstan can read", block.Type)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err)
	}
	return n
}

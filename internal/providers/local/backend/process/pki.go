package process

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// Identity of the provider's own client certificate in its workload clusters.
const (
	providerUser  = "system:capstan-infra-local"
	providerGroup = "system:masters"
)

// serviceIP is the first address of the service range, the `kubernetes` Service's cluster IP.
const (
	serviceCIDR = "10.96.0.0/12"
	serviceIP   = "10.96.0.1"
)

// certValidity is how long the serving and client certificates the backend issues are valid; they are
// issued again at every start of the cluster.
const certValidity = 365 * 24 * time.Hour

// pkiFiles are the files of a cluster's pki/ directory.
type pkiFiles struct{ dir string }

func (p pkiFiles) caCert() string         { return filepath.Join(p.dir, "ca.crt") }
func (p pkiFiles) caKey() string          { return filepath.Join(p.dir, "ca.key") }
func (p pkiFiles) servingCert() string    { return filepath.Join(p.dir, "apiserver.crt") }
func (p pkiFiles) servingKey() string     { return filepath.Join(p.dir, "apiserver.key") }
func (p pkiFiles) serviceAccount() string { return filepath.Join(p.dir, "sa.key") }
func (p pkiFiles) serviceAccountPub() string {
	return filepath.Join(p.dir, "sa.pub")
}

// writeCA stores the cluster CA; it reports whether it differs from the one stored before.
func (p pkiFiles) writeCA(ca *kubeconfig.CA) (bool, error) {
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		return false, fmt.Errorf("encoding the CA key: %w", err)
	}
	old, err := os.ReadFile(p.caCert())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	changed := !bytes.Equal(old, certPEM)
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return false, err
	}
	if err := writeFile(p.caCert(), certPEM); err != nil {
		return false, err
	}
	if err := writeFile(p.caKey(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})); err != nil {
		return false, err
	}
	return changed, nil
}

// readCA returns the stored CA, or nil when there is none.
func (p pkiFiles) readCA() (*kubeconfig.CA, error) {
	certPEM, err := os.ReadFile(p.caCert())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(p.caKey())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return kubeconfig.ParseCA(certPEM, keyPEM)
}

// writeServing issues the API server's serving certificate, valid for loopback, the cluster's name and the
// in-cluster names of the `kubernetes` Service.
func (p pkiFiles) writeServing(ca *kubeconfig.CA, clusterName string, now time.Time) error {
	names := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if clusterName != "" {
		names = append(names, clusterName)
	}
	certPEM, keyPEM, err := issue(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    names,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now)
	if err != nil {
		return err
	}
	if err := writeFile(p.servingCert(), certPEM); err != nil {
		return err
	}
	return writeFile(p.servingKey(), keyPEM)
}

// ensureServiceAccountKey creates the key that signs service account tokens, once: tokens stay valid
// across restarts.
func (p pkiFiles) ensureServiceAccountKey() error {
	if _, err := os.Stat(p.serviceAccount()); err == nil {
		if _, err := os.Stat(p.serviceAccountPub()); err == nil {
			return nil
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	if err := writeFile(p.serviceAccount(), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})); err != nil {
		return err
	}
	return writeFile(p.serviceAccountPub(), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// clientCertificate issues the provider's own client certificate (group system:masters).
func clientCertificate(ca *kubeconfig.CA, now time.Time) (certPEM, keyPEM []byte, err error) {
	return issue(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: providerUser, Organization: []string{providerGroup}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, now)
}

// issue signs tmpl with ca for a new ECDSA P-256 key.
func issue(ca *kubeconfig.CA, tmpl *x509.Certificate, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
	tmpl.NotBefore = now.Add(-5 * time.Minute).UTC()
	tmpl.NotAfter = now.Add(certValidity).UTC()
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing a certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// writeFile writes data atomically (a reader never sees half a file), readable by the owner only.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

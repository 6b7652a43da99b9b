package embedded

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/capstan-dev/capstan/internal/pki"
)

// The certificates and keys of the embedded cluster, as files in the PKI directory.
const (
	caName         = "ca"
	apiServerName  = "apiserver"
	adminName      = "admin"
	controllerName = "kube-controller-manager"
	saKeyFile      = "sa.key"
	saPubFile      = "sa.pub"
)

// renewBefore is how long before expiry a certificate is replaced when the cluster starts.
const renewBefore = 30 * 24 * time.Hour

// certificates creates the CA on first start and the leaf certificates when they are missing, signed by
// another CA, or about to expire.
func (s State) certificates() (*pki.KeyPair, error) {
	dir := s.PKIDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := loadKeyPair(dir, caName)
	if errors.Is(err, os.ErrNotExist) {
		if ca, err = pki.NewCA("capstan-ca"); err != nil {
			return nil, err
		}
		if err := saveKeyPair(dir, caName, ca); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("reading the cluster CA from %s: %w", dir, err)
	}

	leaves := []struct {
		name string
		cfg  pki.CertConfig
	}{
		{apiServerName, pki.APIServerCertConfig()},
		{adminName, pki.CertConfig{CommonName: "kubernetes-admin", Organization: []string{"system:masters"},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
		// kube-controller-manager runs all its controllers under its own identity here (not one service
		// account each), so it needs every permission.
		{controllerName, pki.CertConfig{CommonName: "system:kube-controller-manager", Organization: []string{"system:masters"},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
	}
	for _, leaf := range leaves {
		current, err := loadKeyPair(dir, leaf.name)
		if err == nil && current.Cert.CheckSignatureFrom(ca.Cert) == nil && time.Until(current.Cert.NotAfter) > renewBefore &&
			slices.Equal(current.Cert.Subject.Organization, leaf.cfg.Organization) {
			continue
		}
		kp, err := ca.Sign(leaf.cfg)
		if err != nil {
			return nil, err
		}
		if err := saveKeyPair(dir, leaf.name, kp); err != nil {
			return nil, err
		}
	}

	if err := pki.EnsureServiceAccountKey(filepath.Join(dir, saKeyFile), filepath.Join(dir, saPubFile)); err != nil {
		return nil, err
	}
	return ca, nil
}

func (s State) certFile(name string) string { return filepath.Join(s.PKIDir(), name+".crt") }
func (s State) keyFile(name string) string  { return filepath.Join(s.PKIDir(), name+".key") }

func loadKeyPair(dir, name string) (*pki.KeyPair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, err
	}
	return pki.Parse(certPEM, keyPEM)
}

func saveKeyPair(dir, name string, kp *pki.KeyPair) error {
	if err := os.WriteFile(filepath.Join(dir, name+".key"), kp.KeyPEM(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM(), 0o600)
}

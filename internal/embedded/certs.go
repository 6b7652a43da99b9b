package embedded

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
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

	// etcd has a CA of its own, as kubeadm sets it up: only holders of a certificate it signed (the API
	// server, etcd itself) may talk to etcd, so other local users cannot read Secrets from it.
	etcdCAName        = "etcd-ca"
	etcdServerName    = "etcd-server"
	etcdPeerName      = "etcd-peer"
	apiServerEtcdName = "apiserver-etcd-client"
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

	leaves := []leaf{
		{apiServerName, pki.APIServerCertConfig()},
		{adminName, pki.CertConfig{CommonName: "kubernetes-admin", Organization: []string{"system:masters"},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
		// kube-controller-manager runs all its controllers under its own identity here (not one service
		// account each), so it needs every permission.
		{controllerName, pki.CertConfig{CommonName: "system:kube-controller-manager", Organization: []string{"system:masters"},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
	}
	if err := ensureLeaves(dir, ca, leaves); err != nil {
		return nil, err
	}
	if err := ensureEtcdCertificates(dir); err != nil {
		return nil, err
	}
	if err := pki.EnsureServiceAccountKey(filepath.Join(dir, saKeyFile), filepath.Join(dir, saPubFile)); err != nil {
		return nil, err
	}
	return ca, nil
}

// ensureEtcdCertificates creates the etcd CA on first start, and etcd's serving and peer certificates and
// the API server's etcd client certificate when they are missing, signed by another CA or about to expire.
func ensureEtcdCertificates(dir string) error {
	ca, err := loadKeyPair(dir, etcdCAName)
	if errors.Is(err, os.ErrNotExist) {
		if ca, err = pki.NewCA("etcd-ca"); err != nil {
			return err
		}
		if err := saveKeyPair(dir, etcdCAName, ca); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("reading the etcd CA from %s: %w", dir, err)
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	return ensureLeaves(dir, ca, []leaf{
		{etcdServerName, pki.CertConfig{CommonName: "capstan-etcd", DNSNames: []string{"localhost"}, IPs: loopback, Usages: both}},
		{etcdPeerName, pki.CertConfig{CommonName: "capstan-etcd-peer", DNSNames: []string{"localhost"}, IPs: loopback, Usages: both}},
		{apiServerEtcdName, pki.CertConfig{CommonName: "kube-apiserver-etcd-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
	})
}

// leaf is a certificate signed by a CA of the cluster, kept as <name>.crt and <name>.key.
type leaf struct {
	name string
	cfg  pki.CertConfig
}

// ensureLeaves signs each leaf that is missing, signed by another CA, about to expire or for another
// organization.
func ensureLeaves(dir string, ca *pki.KeyPair, leaves []leaf) error {
	for _, l := range leaves {
		current, err := loadKeyPair(dir, l.name)
		if err == nil && current.Cert.CheckSignatureFrom(ca.Cert) == nil && time.Until(current.Cert.NotAfter) > renewBefore &&
			slices.Equal(current.Cert.Subject.Organization, l.cfg.Organization) {
			continue
		}
		kp, err := ca.Sign(l.cfg)
		if err != nil {
			return err
		}
		if err := saveKeyPair(dir, l.name, kp); err != nil {
			return err
		}
	}
	return nil
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

package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
)

// Identity of the provider's own client certificate in its workload clusters.
const (
	providerUser  = "system:capstan-infra-local"
	providerGroup = "system:masters"
)

// serviceCIDR is the service range; pki.APIServerCertConfig assumes it.
const serviceCIDR = "10.96.0.0/12"

// certValidity is how long the serving certificate the backend issues is valid, as its client certificate
// (kubeconfig.ClientCertificateValidity); both are issued again at every start of the cluster.
const certValidity = kubeconfig.ClientCertificateValidity

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
	certPEM := ca.CertPEM()
	keyPEM, err := pki.EncodeKey(ca.Key)
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
	if err := writeFile(p.caKey(), keyPEM); err != nil {
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
	var names []string
	if clusterName != "" {
		names = append(names, clusterName)
	}
	cfg := pki.APIServerCertConfig(names...)
	cfg.Validity, cfg.Now = certValidity, now
	kp, err := ca.Sign(cfg)
	if err != nil {
		return err
	}
	if err := writeFile(p.servingCert(), kp.CertPEM()); err != nil {
		return err
	}
	return writeFile(p.servingKey(), kp.KeyPEM())
}

// ensureServiceAccountKey creates the key that signs service account tokens, once: tokens stay valid
// across restarts.
func (p pkiFiles) ensureServiceAccountKey() error {
	return pki.EnsureServiceAccountKey(p.serviceAccount(), p.serviceAccountPub())
}

// clientCertificate issues the provider's own client certificate (group system:masters).
func clientCertificate(ca *kubeconfig.CA, now time.Time) (certPEM, keyPEM []byte, err error) {
	return kubeconfig.NewClientCertificate(ca, providerUser, []string{providerGroup}, now)
}

// writeFile writes data atomically (a reader never sees half a file), readable by the owner only.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

package process

import (
	"cmp"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// Identity of the provider's own client certificates in its workload clusters and their etcd.
const (
	providerUser  = "system:capstan-infra-local"
	providerGroup = "system:masters"
)

// serviceCIDR is the service range; pki.APIServerCertConfig assumes it.
const serviceCIDR = "10.96.0.0/12"

// certValidity is how long the certificates the backend issues are valid; they are issued again at every
// start of a process.
const certValidity = kubeconfig.ClientCertificateValidity

// pkiFiles are the files of a cluster's pki/ directory: the cluster's CAs and service account key, as the
// Secrets held them when the cluster last ran (a lost Secret is recreated from them).
type pkiFiles struct{ dir string }

func (p pkiFiles) cert(name string) string { return filepath.Join(p.dir, name+".crt") }
func (p pkiFiles) key(name string) string  { return filepath.Join(p.dir, name+".key") }
func (p pkiFiles) serviceAccount() string  { return filepath.Join(p.dir, "sa.key") }
func (p pkiFiles) serviceAccountPub() string {
	return filepath.Join(p.dir, "sa.pub")
}

// The names of the cluster's CAs in pki/, as kubeadm names them under /etc/kubernetes/pki.
const (
	caName           = "ca"
	etcdCAName       = "etcd-ca"
	frontProxyCAName = "front-proxy-ca"
)

// writeCertificates stores the cluster's certificates.
func (p pkiFiles) writeCertificates(c backend.Certificates) error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	for name, ca := range map[string]*kubeconfig.CA{caName: c.CA, etcdCAName: c.EtcdCA, frontProxyCAName: c.FrontProxyCA} {
		if err := writeKeyPair(p.cert(name), p.key(name), ca); err != nil {
			return fmt.Errorf("storing the %s: %w", name, err)
		}
	}
	priv, err := pki.EncodeKey(c.ServiceAccountKey)
	if err != nil {
		return fmt.Errorf("encoding the service account key: %w", err)
	}
	pub, err := pki.EncodePublicKey(c.ServiceAccountKey.Public())
	if err != nil {
		return err
	}
	if err := writeFile(p.serviceAccount(), priv); err != nil {
		return err
	}
	return writeFile(p.serviceAccountPub(), pub)
}

// readCertificates returns the stored certificates; the fields of those not stored are nil.
func (p pkiFiles) readCertificates() (backend.Certificates, error) {
	var out backend.Certificates
	var err error
	if out.CA, err = readKeyPair(p.cert(caName), p.key(caName)); err != nil {
		return out, err
	}
	if out.EtcdCA, err = readKeyPair(p.cert(etcdCAName), p.key(etcdCAName)); err != nil {
		return out, err
	}
	if out.FrontProxyCA, err = readKeyPair(p.cert(frontProxyCAName), p.key(frontProxyCAName)); err != nil {
		return out, err
	}
	data, err := os.ReadFile(p.serviceAccount())
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return out, err
	default:
		if out.ServiceAccountKey, err = pki.ParseKey(data); err != nil {
			return out, fmt.Errorf("reading %s: %w", p.serviceAccount(), err)
		}
	}
	return out, nil
}

func writeKeyPair(certFile, keyFile string, kp *pki.KeyPair) error {
	keyPEM, err := pki.EncodeKey(kp.Key)
	if err != nil {
		return err
	}
	if err := writeFile(certFile, kp.CertPEM()); err != nil {
		return err
	}
	return writeFile(keyFile, keyPEM)
}

// readKeyPair returns a stored key pair, nil when there is none.
func readKeyPair(certFile, keyFile string) (*pki.KeyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return kubeconfig.ParseCA(certPEM, keyPEM)
}

// sameCertificates reports whether two sets of certificates are the same.
func sameCertificates(a, b backend.Certificates) bool {
	same := func(x, y *kubeconfig.CA) bool {
		return (x == nil) == (y == nil) && (x == nil || x.Cert.Equal(y.Cert))
	}
	if !same(a.CA, b.CA) || !same(a.EtcdCA, b.EtcdCA) || !same(a.FrontProxyCA, b.FrontProxyCA) {
		return false
	}
	if (a.ServiceAccountKey == nil) != (b.ServiceAccountKey == nil) {
		return false
	}
	if a.ServiceAccountKey == nil {
		return true
	}
	pa, ok := a.ServiceAccountKey.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pa.Equal(b.ServiceAccountKey.Public())
}

// validCertificates says what is missing from a cluster's certificates.
func validCertificates(c backend.Certificates) error {
	switch {
	case c.CA == nil:
		return errors.New("the cluster has no CA")
	case c.EtcdCA == nil:
		return errors.New("the cluster has no etcd CA")
	case c.FrontProxyCA == nil:
		return errors.New("the cluster has no front proxy CA")
	case c.ServiceAccountKey == nil:
		return errors.New("the cluster has no service account key")
	}
	return nil
}

var loopbackIPs = []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}

// machinePKI issues the certificates of a control plane machine's processes into its pki/ directory, as
// kubeadm does under /etc/kubernetes/pki.
type machinePKI struct{ dir string }

func (p machinePKI) cert(name string) string { return filepath.Join(p.dir, name+".crt") }
func (p machinePKI) key(name string) string  { return filepath.Join(p.dir, name+".key") }

// issue writes every certificate of a control plane machine named nodeName, of the cluster clusterName.
// settings say how (the key algorithm and validity; certValidity and ECDSA P-256 by default).
func (p machinePKI) issue(c backend.Certificates, clusterName, nodeName string, settings backend.CertificateSettings, now time.Time) error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	serving := pki.APIServerCertConfig(nodeName)
	if clusterName != "" {
		serving.DNSNames = append(serving.DNSNames, clusterName)
	}
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	etcdNames := []string{"localhost", nodeName}
	certs := []struct {
		name string
		ca   *pki.KeyPair
		cfg  pki.CertConfig
	}{
		{"apiserver", c.CA, serving},
		{"apiserver-kubelet-client", c.CA, pki.CertConfig{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"kubeadm:cluster-admins"}, Usages: client}},
		{"apiserver-etcd-client", c.EtcdCA, pki.CertConfig{CommonName: "kube-apiserver-etcd-client", Usages: client}},
		{"front-proxy-client", c.FrontProxyCA, pki.CertConfig{CommonName: "front-proxy-client", Usages: client}},
		{"etcd-server", c.EtcdCA, pki.CertConfig{CommonName: nodeName, DNSNames: etcdNames, IPs: loopbackIPs, Usages: both}},
		{"etcd-peer", c.EtcdCA, pki.CertConfig{CommonName: nodeName, DNSNames: etcdNames, IPs: loopbackIPs, Usages: both}},
		{"controller-manager", c.CA, pki.CertConfig{CommonName: "system:kube-controller-manager", Usages: client}},
	}
	for _, cert := range certs {
		cert.cfg.Validity, cert.cfg.Now, cert.cfg.KeyAlgorithm = cmp.Or(settings.Validity, certValidity), now, settings.KeyAlgorithm
		kp, err := cert.ca.Sign(cert.cfg)
		if err != nil {
			return fmt.Errorf("issuing the %s certificate: %w", cert.name, err)
		}
		if err := writeKeyPair(p.cert(cert.name), p.key(cert.name), kp); err != nil {
			return err
		}
	}
	for name, ca := range map[string]*pki.KeyPair{"ca": c.CA, "etcd-ca": c.EtcdCA, "front-proxy-ca": c.FrontProxyCA} {
		if err := writeFile(p.cert(name), ca.CertPEM()); err != nil {
			return err
		}
	}
	return nil
}

// clientCertificate issues the provider's own client certificate of the workload API (group
// system:masters).
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

// Package certs holds the cluster certificates of a kubeadm cluster as Cluster API keeps them: one Secret
// per purpose, `<cluster>-ca`, `<cluster>-etcd`, `<cluster>-proxy` and `<cluster>-sa` (and
// `<cluster>-apiserver-etcd-client` with an external etcd), each with tls.crt and tls.key, and writes them as
// the files kubeadm expects under its certificates directory. The kubeadm bootstrap and control plane
// providers look them up, or generate the ones that are missing.
package certs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"path"
	"time"

	"github.com/capstan-dev/capstan/internal/pki"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
)

// Defaults.
const (
	// DefaultCertificatesDir is kubeadm's certificates directory.
	DefaultCertificatesDir = "/etc/kubernetes/pki"
	// CAValidity is how long generated CAs are valid, as upstream's.
	CAValidity = 10 * 365 * 24 * time.Hour
)

// ErrMissing is returned (wrapped) when a certificate a machine needs does not exist.
var ErrMissing = errors.New("missing certificate")

// Certificate is one cluster certificate and the files it is written to on a machine.
type Certificate struct {
	Purpose clustersecret.Purpose
	// CertFile and KeyFile are where the certificate and key are written on a machine.
	CertFile, KeyFile string
	// External certificates are provided by the user (external etcd) and never generated; only their
	// certificate may be needed.
	External bool
	// Cert and Key are PEM; nil until looked up or generated.
	Cert, Key []byte
	// Generated says the certificate was generated, not found.
	Generated bool
	// KeyAlgorithm is the encryption algorithm of a generated key (the ClusterConfiguration's
	// encryptionAlgorithm; RSA-2048 when empty).
	KeyAlgorithm bootstrapv1.EncryptionAlgorithmType
	// ValidityDays is how long a generated CA is valid (the ClusterConfiguration's
	// caCertificateValidityPeriodDays; CAValidity when zero).
	ValidityDays int32
}

// Certificates are the cluster certificates a machine needs.
type Certificates []*Certificate

// ForControlPlane returns the certificates of a control plane machine (`kubeadm init` or a control plane
// join) with the ClusterConfiguration cfg (nil for kubeadm's defaults).
func ForControlPlane(cfg *bootstrapv1.ClusterConfiguration) Certificates {
	dir := DefaultCertificatesDir
	if cfg != nil && cfg.CertificatesDir != "" {
		dir = cfg.CertificatesDir
	}
	out := Certificates{
		{Purpose: clustersecret.ClusterCA, CertFile: path.Join(dir, "ca.crt"), KeyFile: path.Join(dir, "ca.key")},
		{Purpose: clustersecret.ServiceAccount, CertFile: path.Join(dir, "sa.pub"), KeyFile: path.Join(dir, "sa.key")},
		{Purpose: clustersecret.FrontProxyCA, CertFile: path.Join(dir, "front-proxy-ca.crt"), KeyFile: path.Join(dir, "front-proxy-ca.key")},
	}
	if cfg != nil && cfg.Etcd.External != nil {
		ext := cfg.Etcd.External
		out = append(out,
			&Certificate{Purpose: clustersecret.APIServerEtcdClient, CertFile: ext.CertFile, KeyFile: ext.KeyFile, External: true},
			&Certificate{Purpose: clustersecret.EtcdCA, CertFile: ext.CAFile, External: true},
		)
	} else {
		out = append(out, &Certificate{Purpose: clustersecret.EtcdCA, CertFile: path.Join(dir, "etcd", "ca.crt"), KeyFile: path.Join(dir, "etcd", "ca.key")})
	}
	if cfg != nil {
		for _, c := range out {
			c.KeyAlgorithm, c.ValidityDays = cfg.EncryptionAlgorithm, cfg.CACertificateValidityPeriodDays
		}
	}
	return out
}

// ForWorker returns the certificates of a worker: the cluster CA's certificate only, at caCertPath
// (kubeadm's default when empty).
func ForWorker(caCertPath string) Certificates {
	if caCertPath == "" {
		caCertPath = path.Join(DefaultCertificatesDir, "ca.crt")
	}
	return Certificates{{Purpose: clustersecret.ClusterCA, CertFile: caCertPath}}
}

// Get returns the certificate of a purpose, or nil.
func (c Certificates) Get(p clustersecret.Purpose) *Certificate {
	for _, cert := range c {
		if cert.Purpose == p {
			return cert
		}
	}
	return nil
}

// Lookup reads the certificates' Secrets of a Cluster. A missing Secret leaves its certificate empty,
// except an external one, which is an error.
func (c Certificates) Lookup(ctx context.Context, r client.Reader, cluster client.ObjectKey) error {
	for _, cert := range c {
		s := &corev1.Secret{}
		key := client.ObjectKey{Namespace: cluster.Namespace, Name: clustersecret.Name(cluster.Name, cert.Purpose)}
		if err := r.Get(ctx, key, s); err != nil {
			if apierrors.IsNotFound(err) {
				if cert.External {
					return fmt.Errorf("%w: Secret %s of the external etcd's %s is not found", ErrMissing, key, cert.Purpose)
				}
				continue
			}
			return fmt.Errorf("getting the Secret %s: %w", key, err)
		}
		if len(s.Data[clustersecret.CertKey]) == 0 {
			return fmt.Errorf("the Secret %s has no %s", key, clustersecret.CertKey)
		}
		cert.Cert, cert.Key = s.Data[clustersecret.CertKey], s.Data[clustersecret.KeyKey]
	}
	return nil
}

// EnsureAllExist reports the first certificate that was not found, or a key that is missing.
func (c Certificates) EnsureAllExist() error {
	for _, cert := range c {
		if len(cert.Cert) == 0 {
			return fmt.Errorf("%w: %s", ErrMissing, cert.Purpose)
		}
		if !cert.External && cert.KeyFile != "" && len(cert.Key) == 0 {
			return fmt.Errorf("%w: the key of %s", ErrMissing, cert.Purpose)
		}
	}
	return nil
}

// LookupOrGenerate looks the certificates up and generates the missing ones, stored as Secrets owned by
// owner. When another writer created a Secret first, its certificate is used.
func (c Certificates) LookupOrGenerate(ctx context.Context, cl client.Client, cluster client.ObjectKey, owner metav1.OwnerReference) error {
	if err := c.Lookup(ctx, cl, cluster); err != nil {
		return err
	}
	for _, cert := range c {
		if len(cert.Cert) > 0 || cert.External {
			continue
		}
		if err := cert.generate(); err != nil {
			return err
		}
		got, created, err := clustersecret.Create(ctx, cl, cl, cert.Secret(cluster, &owner))
		if err != nil {
			return err
		}
		if !created {
			// Someone else generated it meanwhile: use theirs.
			if len(got.Data[clustersecret.CertKey]) == 0 {
				return fmt.Errorf("the Secret %s has no %s", client.ObjectKeyFromObject(got), clustersecret.CertKey)
			}
			cert.Cert, cert.Key, cert.Generated = got.Data[clustersecret.CertKey], got.Data[clustersecret.KeyKey], false
		}
	}
	return nil
}

// Secret returns the certificate as the Secret of a Cluster, owned by owner when it is not nil.
func (c *Certificate) Secret(cluster client.ObjectKey, owner *metav1.OwnerReference) *corev1.Secret {
	return clustersecret.NewCertificate(cluster, c.Purpose, c.Cert, c.Key, owner)
}

// Files returns the certificates as files for a machine, in kubeadm's order: cluster CA, etcd CA, front
// proxy CA, service account key, external etcd client. Certificates are 0640 and keys 0600, owned by root.
func (c Certificates) Files() []bootstrapv1.File {
	var out []bootstrapv1.File
	for _, p := range []clustersecret.Purpose{clustersecret.ClusterCA, clustersecret.EtcdCA, clustersecret.FrontProxyCA, clustersecret.ServiceAccount, clustersecret.APIServerEtcdClient} {
		cert := c.Get(p)
		if cert == nil {
			continue
		}
		if len(cert.Cert) > 0 && cert.CertFile != "" {
			out = append(out, bootstrapv1.File{Path: cert.CertFile, Owner: "root:root", Permissions: "0640", Content: string(cert.Cert)})
		}
		if len(cert.Key) > 0 && cert.KeyFile != "" {
			out = append(out, bootstrapv1.File{Path: cert.KeyFile, Owner: "root:root", Permissions: "0600", Content: string(cert.Key)})
		}
	}
	return out
}

// Hashes returns the "sha256:<hex>" pins of the public keys of the certificates in Cert, as kubeadm's
// discovery caCertHashes.
func (c *Certificate) Hashes() ([]string, error) {
	certs, err := pki.ParseCerts(c.Cert)
	if err != nil {
		return nil, fmt.Errorf("the %s Secret: %w", c.Purpose, err)
	}
	out := make([]string, 0, len(certs))
	for _, cert := range certs {
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		out = append(out, "sha256:"+hex.EncodeToString(sum[:]))
	}
	return out, nil
}

// generate creates a CA (or, for clustersecret.ServiceAccount, a key pair) with a key of KeyAlgorithm (RSA
// 2048 by default) valid for ValidityDays (CAValidity by default), as upstream's.
func (c *Certificate) generate() error {
	key, err := pki.NewKeyOf(string(c.KeyAlgorithm))
	if err != nil {
		return fmt.Errorf("generating the %s key: %w", c.Purpose, err)
	}
	if c.Purpose == clustersecret.ServiceAccount {
		c.Cert, c.Key, err = clustersecret.EncodeServiceAccountKey(key)
		if err != nil {
			return fmt.Errorf("encoding the service account key: %w", err)
		}
		c.Generated = true
		return nil
	}
	if c.Key, err = pki.EncodeKeyAsKubeadm(key); err != nil {
		return fmt.Errorf("encoding the %s key: %w", c.Purpose, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	validity := CAValidity
	if c.ValidityDays > 0 {
		validity = time.Duration(c.ValidityDays) * 24 * time.Hour
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fmt.Errorf("creating the %s certificate: %w", c.Purpose, err)
	}
	c.Cert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c.Generated = true
	return nil
}

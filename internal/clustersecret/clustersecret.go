// Package clustersecret is the one home of the Secrets Cluster API keeps for a workload cluster in the
// management cluster: `<cluster>-<purpose>` (`<cluster>-ca`, `-etcd`, `-proxy`, `-sa`,
// `-apiserver-etcd-client`, `-kubeconfig`), of type cluster.x-k8s.io/secret, labelled with the cluster's
// name, the certificates under tls.crt and their keys under tls.key. The core (kubeconfig), the kubeadm
// bootstrap and control plane providers and the local provider name, build and create them here.
package clustersecret

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/pki"
)

// Purpose names a cluster Secret; it is the suffix of the Secret's name.
type Purpose string

// The cluster Secrets.
const (
	// ClusterCA signs the API servers' and the kubelets' certificates, and the kubeconfigs' clients.
	ClusterCA Purpose = "ca"
	// EtcdCA signs etcd's certificates.
	EtcdCA Purpose = "etcd"
	// FrontProxyCA signs the front proxy (aggregation layer) client certificates.
	FrontProxyCA Purpose = "proxy"
	// ServiceAccount is the key pair that signs service account tokens (tls.crt holds the public key).
	ServiceAccount Purpose = "sa"
	// APIServerEtcdClient is the client certificate of the API server for an external etcd.
	APIServerEtcdClient Purpose = "apiserver-etcd-client"
	// Kubeconfig is the admin kubeconfig of the cluster (under the key "value").
	Kubeconfig Purpose = "kubeconfig"
)

const (
	// CertKey is the Secret key of the certificate (or the service account public key).
	CertKey = corev1.TLSCertKey
	// KeyKey is the Secret key of the private key.
	KeyKey = corev1.TLSPrivateKeyKey
	// Type is the type of the cluster Secrets.
	Type = clusterv1.ClusterSecretType
)

// Name returns the name of a cluster's Secret of a purpose, `<cluster>-<purpose>`.
func Name(cluster string, p Purpose) string { return cluster + "-" + string(p) }

// New returns the Secret of a cluster for a purpose holding data, owned by owner when it is not nil.
func New(cluster client.ObjectKey, p Purpose, data map[string][]byte, owner *metav1.OwnerReference) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace,
			Name:      Name(cluster.Name, p),
			Labels:    map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
		},
		Type: Type,
		Data: data,
	}
	if owner != nil {
		s.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return s
}

// NewCertificate returns the Secret of a certificate (or the service account key pair) and its key.
func NewCertificate(cluster client.ObjectKey, p Purpose, certPEM, keyPEM []byte, owner *metav1.OwnerReference) *corev1.Secret {
	return New(cluster, p, map[string][]byte{CertKey: certPEM, KeyKey: keyPEM}, owner)
}

// Create creates s, or, when another writer created the Secret first, returns theirs as reader reads it
// (created false): two components that each generate a missing CA end up using the same.
func Create(ctx context.Context, c client.Client, reader client.Reader, s *corev1.Secret) (got *corev1.Secret, created bool, err error) {
	err = c.Create(ctx, s)
	switch {
	case err == nil:
		return s, true, nil
	case !apierrors.IsAlreadyExists(err):
		return nil, false, fmt.Errorf("creating Secret %s: %w", client.ObjectKeyFromObject(s), err)
	}
	theirs := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(s), theirs); err != nil {
		return nil, false, fmt.Errorf("getting Secret %s: %w", client.ObjectKeyFromObject(s), err)
	}
	return theirs, false, nil
}

// EncodeServiceAccountKey returns the PEM of a service account key pair as the `<cluster>-sa` Secret holds
// it: the public key under tls.crt, the private key (PKCS#1 for RSA, as upstream's) under tls.key.
func EncodeServiceAccountKey(key crypto.Signer) (pubPEM, keyPEM []byte, err error) {
	pubPEM, err = pki.EncodePublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	if k, ok := key.(*rsa.PrivateKey); ok {
		return pubPEM, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	}
	keyPEM, err = pki.EncodeKey(key)
	return pubPEM, keyPEM, err
}

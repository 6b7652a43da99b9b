package kubeconfig

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/pki"
)

const (
	// ValueKey is the key of the kubeconfig in the `<cluster>-kubeconfig` Secret.
	ValueKey = "value"

	// AdminUser and AdminGroup are the identity of a generated kubeconfig's client certificate, as kubeadm's
	// admin.conf.
	AdminUser = "kubernetes-admin"
	// AdminGroup is the group of a generated kubeconfig's client certificate.
	AdminGroup = "system:masters"
)

// ErrInvalidKubeconfig is returned (wrapped) when a kubeconfig cannot be read.
var ErrInvalidKubeconfig = errors.New("invalid kubeconfig")

// Server returns the URL of an API server endpoint, https://host:port.
func Server(endpoint clusterv1.APIEndpoint) string { return "https://" + endpoint.String() }

// CAFromSecret reads the CA of a `<cluster>-ca` Secret (tls.crt and tls.key).
func CAFromSecret(s *corev1.Secret) (*CA, error) {
	ca, err := ParseCA(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("reading the CA of Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return ca, nil
}

// Generate returns a kubeconfig for the workload cluster clusterName whose API server is at server: it
// trusts ca and authenticates with a new client certificate for AdminUser in AdminGroup, signed by ca and
// valid for ClientCertificateValidity. The user is `<cluster>-admin` and the context
// `<cluster>-admin@<cluster>`, as upstream.
func Generate(clusterName, server string, ca *CA, now time.Time) ([]byte, error) {
	certPEM, keyPEM, err := NewClientCertificate(ca, AdminUser, []string{AdminGroup}, now)
	if err != nil {
		return nil, err
	}
	user := clusterName + "-admin"
	contextName := user + "@" + clusterName
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.CertPEM()}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", clusterName, err)
	}
	return data, nil
}

// NewSecret returns the `<cluster>-kubeconfig` Secret of a Cluster holding data (a cluster Secret, see
// package clustersecret), the Cluster its controller owner.
func NewSecret(cluster *clusterv1.Cluster, data []byte) *corev1.Secret {
	return clustersecret.New(client.ObjectKeyFromObject(cluster), clustersecret.Kubeconfig, map[string][]byte{ValueKey: data}, &metav1.OwnerReference{
		APIVersion:         clusterv1.GroupVersion.String(),
		Kind:               "Cluster",
		Name:               cluster.Name,
		UID:                cluster.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	})
}

// ClientCertificate returns the client certificate of a kubeconfig's current context.
func ClientCertificate(data []byte) (*x509.Certificate, error) {
	_, cert, err := current(data)
	return cert, err
}

// NeedsRotation reports whether a kubeconfig made by Generate must be regenerated, and why: its client
// certificate has less than RotationThreshold left or is not signed by ca, it does not trust ca (the CA
// changed), or it points at another server than server (when server is not empty).
func NeedsRotation(data []byte, ca *CA, server string, now time.Time) (bool, string, error) {
	cluster, cert, err := current(data)
	if err != nil {
		return false, "", err
	}
	switch {
	case !bytes.Equal(cluster.CertificateAuthorityData, ca.CertPEM()):
		return true, "the CA changed", nil
	case cert.CheckSignatureFrom(ca.Cert) != nil:
		return true, "the client certificate is not signed by the CA", nil
	case cert.NotAfter.Sub(now) < RotationThreshold:
		return true, fmt.Sprintf("the client certificate expires on %s", cert.NotAfter.UTC().Format(time.RFC3339)), nil
	case server != "" && cluster.Server != server:
		return true, "the control plane endpoint changed", nil
	}
	return false, "", nil
}

// current returns the cluster and the parsed client certificate of a kubeconfig's current context.
func current(data []byte) (*clientcmdapi.Cluster, *x509.Certificate, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidKubeconfig, err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, nil, fmt.Errorf("%w: current context %q not found", ErrInvalidKubeconfig, cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return nil, nil, fmt.Errorf("%w: cluster %q not found", ErrInvalidKubeconfig, ctx.Cluster)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok || len(user.ClientCertificateData) == 0 {
		return nil, nil, fmt.Errorf("%w: user %q has no client certificate", ErrInvalidKubeconfig, ctx.AuthInfo)
	}
	cert, err := pki.ParseCert(user.ClientCertificateData)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: client certificate of %q: %w", ErrInvalidKubeconfig, ctx.AuthInfo, err)
	}
	return cluster, cert, nil
}

// NewCASecret returns a `<cluster>-ca` Secret holding a new self-signed CA (common name "kubernetes", as
// kubeadm's) under tls.crt and tls.key (a cluster Secret, see package clustersecret), owned by owner when
// it is not nil.
func NewCASecret(cluster client.ObjectKey, owner *metav1.OwnerReference, now time.Time) (*corev1.Secret, error) {
	certPEM, keyPEM, err := NewCA("kubernetes", now)
	if err != nil {
		return nil, err
	}
	return clustersecret.NewCertificate(cluster, clustersecret.ClusterCA, certPEM, keyPEM, owner), nil
}

// CreateCASecret creates the `<cluster>-ca` Secret of a Cluster with a new self-signed CA (see
// NewCASecret). When the Secret already exists it returns the API server's AlreadyExists error, wrapped, and
// leaves the existing CA alone.
func CreateCASecret(ctx context.Context, c client.Client, cluster client.ObjectKey, owner *metav1.OwnerReference) (*corev1.Secret, error) {
	s, err := NewCASecret(cluster, owner, time.Now())
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, s); err != nil {
		return nil, fmt.Errorf("creating Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return s, nil
}

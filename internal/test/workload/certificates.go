package workload

import (
	"testing"
	"time"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// NewCA returns a new self-signed cluster CA ("kubernetes"), as the cluster's Secrets hold one.
func NewCA(t testing.TB) *kubeconfig.CA {
	t.Helper()
	certPEM, keyPEM, err := kubeconfig.NewCA("kubernetes", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := kubeconfig.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// NewCertificates returns a workload cluster's certificates as a local provider backend receives them:
// new cluster, etcd and front proxy CAs and a service account key.
func NewCertificates(t testing.TB) backend.Certificates {
	t.Helper()
	key, err := pki.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return backend.Certificates{CA: NewCA(t), EtcdCA: NewCA(t), FrontProxyCA: NewCA(t), ServiceAccountKey: key}
}

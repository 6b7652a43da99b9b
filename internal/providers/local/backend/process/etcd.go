package process

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/pki"
)

// etcdClientConfig is a TLS configuration of the provider's client of a cluster's etcd: a client
// certificate signed by the etcd CA (etcd accepts only those), trusting the etcd CA.
func etcdClientTLS(etcdCA *kubeconfig.CA, now time.Time) (*tls.Config, error) {
	kp, err := etcdCA.Sign(pki.CertConfig{
		CommonName: "capstan-infra-local-etcd-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		Validity: certValidity, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("issuing the provider's etcd client certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(etcdCA.Cert)
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		RootCAs:      pool,
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
	}, nil
}

// etcdClient returns a client of the etcd members serving on the given client ports.
func etcdClient(tlsConfig *tls.Config, ports ...int) (*clientv3.Client, error) {
	endpoints := make([]string, 0, len(ports))
	for _, p := range ports {
		endpoints = append(endpoints, etcdURL(p))
	}
	return clientv3.New(clientv3.Config{
		Endpoints: endpoints, TLS: tlsConfig, DialTimeout: 2 * time.Second,
		Logger: zap.NewNop(),
	})
}

func etcdURL(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }

// etcdMembers lists the members of the cluster through the given members' client ports.
func etcdMembers(ctx context.Context, tlsConfig *tls.Config, ports ...int) (*clientv3.MemberListResponse, error) {
	cli, err := etcdClient(tlsConfig, ports...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cli.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cli.MemberList(ctx)
}

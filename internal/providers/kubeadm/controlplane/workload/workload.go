// Package workload is what the kubeadm control plane provider reads and changes in a workload cluster: its
// control plane Nodes and their static Pods, the kubeadm-config ConfigMap, the RBAC kubeadm join needs, and
// its stacked etcd, which it reaches through port-forwards of the workload API server to the etcd Pods.
package workload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/portforward"
)

// Names kubeadm gives things in a cluster.
const (
	// ControlPlaneNodeRoleLabel marks control plane Nodes.
	ControlPlaneNodeRoleLabel = "node-role.kubernetes.io/control-plane"
	// KubeadmConfigMap is the ConfigMap of the cluster's kubeadm ClusterConfiguration, in kube-system.
	KubeadmConfigMap = "kubeadm-config"
	// ClusterConfigurationKey is the key of the ClusterConfiguration in KubeadmConfigMap.
	ClusterConfigurationKey = "ClusterConfiguration"
	// EtcdClientPort is the port etcd serves clients on in its Pod.
	EtcdClientPort = 2379
)

// StaticPodName returns the name kubeadm's static Pod of component gets on node: `<component>-<node>`.
func StaticPodName(component, node string) string { return component + "-" + node }

// Cluster is one workload cluster.
type Cluster struct {
	// Client reads and writes the workload cluster.
	Client client.Client
	// Etcd makes clients of the etcd members; nil with an external etcd.
	Etcd *etcd.Generator
}

// EtcdOptions configure how etcd is reached.
type EtcdOptions struct {
	// CA is the PEM of the etcd CA (`<cluster>-etcd` tls.crt); ClientCert a certificate it signed for the
	// provider.
	CA         []byte
	ClientCert tls.Certificate
	// DialTimeout and CallTimeout bound connections and calls (--etcd-dial-timeout-duration and
	// --etcd-call-timeout-duration).
	DialTimeout, CallTimeout time.Duration
	Logger                   *zap.Logger
}

// New returns the workload cluster whose API server cfg reaches, through c. Without o.CA (external etcd)
// the workload cluster has no etcd client.
func New(c client.Client, cfg *rest.Config, o EtcdOptions) (*Cluster, error) {
	if len(o.CA) == 0 {
		return &Cluster{Client: c}, nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 30 * time.Second
	dialer, err := portforward.NewDialer(cfg, o.DialTimeout)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.CA) {
		return nil, errors.New("the etcd CA holds no PEM certificate")
	}
	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{o.ClientCert},
		MinVersion:   tls.VersionTLS12,
		// The members are named after their Pods, which their serving certificates do not name: check the
		// chain against the etcd CA and nothing else, as upstream (which skips the check altogether).
		InsecureSkipVerify: true, //nolint:gosec // The chain is verified in VerifyConnection.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the etcd member presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if err != nil {
				return fmt.Errorf("the etcd member's certificate is not signed by the cluster's etcd CA: %w", err)
			}
			return nil
		},
	}
	return &Cluster{
		Client: c,
		Etcd: &etcd.Generator{
			DialPod: func(ctx context.Context, pod string) (net.Conn, error) {
				return dialer.Dial(ctx, metav1.NamespaceSystem, pod, EtcdClientPort)
			},
			TLS: tlsConfig, DialTimeout: o.DialTimeout, CallTimeout: o.CallTimeout, Logger: o.Logger,
		},
	}, nil
}

// ControlPlaneNodes lists the Nodes with the control plane role label.
func (w *Cluster) ControlPlaneNodes(ctx context.Context) ([]corev1.Node, error) {
	nodes := &corev1.NodeList{}
	if err := w.Client.List(ctx, nodes, client.HasLabels{ControlPlaneNodeRoleLabel}); err != nil {
		return nil, fmt.Errorf("listing the control plane Nodes: %w", err)
	}
	return nodes.Items, nil
}

// Status is what the workload cluster says about its control plane.
type Status struct {
	// Nodes and ReadyNodes count the control plane Nodes.
	Nodes, ReadyNodes int32
	// HasKubeadmConfig says the kubeadm-config ConfigMap exists: `kubeadm init` uploaded it, so the control
	// plane is initialized.
	HasKubeadmConfig bool
}

// Status reads the control plane Nodes and the kubeadm-config ConfigMap.
func (w *Cluster) Status(ctx context.Context) (Status, error) {
	nodes, err := w.ControlPlaneNodes(ctx)
	if err != nil {
		return Status{}, err
	}
	var s Status
	for i := range nodes {
		s.Nodes++
		if NodeReady(&nodes[i]) {
			s.ReadyNodes++
		}
	}
	cm := &corev1.ConfigMap{}
	err = w.Client.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: KubeadmConfigMap}, cm)
	switch {
	case err == nil:
		s.HasKubeadmConfig = true
	case !apierrors.IsNotFound(err):
		return s, fmt.Errorf("reading ConfigMap kube-system/%s: %w", KubeadmConfigMap, err)
	}
	return s, nil
}

// NodeReady reports whether a Node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

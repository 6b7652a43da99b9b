package localcluster

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// scope is what one reconcile works on; phases record what they find in facts.
type scope struct {
	localCluster *infrav1.LocalCluster
	cluster      *clusterv1.Cluster
	facts        facts
}

func (s *scope) key() types.NamespacedName {
	return types.NamespacedName{Namespace: s.localCluster.Namespace, Name: s.localCluster.Name}
}

// reconcileNormal runs the phases of a LocalCluster that is not being deleted, in order; each returns
// false when the reconcile must stop there.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	lc := s.localCluster
	if controllerutil.AddFinalizer(lc, infrav1.LocalClusterFinalizer) {
		ctrl.LoggerFrom(ctx).Info("Adding the LocalCluster finalizer")
	}
	if f := validate(lc); f != nil {
		s.facts.failure = f
		ctrl.LoggerFrom(ctx).Info("The LocalCluster cannot be provisioned", "reason", f.reason, "message", f.message)
		return ctrl.Result{}, nil
	}
	certs, err := r.reconcileCertificates(ctx, s)
	if err != nil {
		s.facts.caError = true
		return ctrl.Result{}, err
	}
	status, err := r.Backend.EnsureCluster(ctx, backend.Cluster{
		Key: s.key(), ClusterName: s.cluster.Name, Port: lc.Spec.ControlPlaneEndpoint.Port, Certificates: certs,
		DataDir: lc.Annotations[infrav1.DataDirAnnotation],
	})
	if err != nil {
		s.facts.backendError = true
		return ctrl.Result{}, err
	}
	s.facts.backend = &status
	// Where the data is travels with the LocalCluster (metadata is moved, status is not), so that a
	// provider it is moved to on this machine can take the data over.
	if status.DataDir != "" && lc.Annotations[infrav1.DataDirAnnotation] != status.DataDir {
		ctrl.LoggerFrom(ctx).Info("Recording the directory of the cluster's data", "dir", status.DataDir)
		if lc.Annotations == nil {
			lc.Annotations = map[string]string{}
		}
		lc.Annotations[infrav1.DataDirAnnotation] = status.DataDir
	}
	// The endpoint is recorded as soon as the port is known, so it stays the same across restarts.
	if lc.Spec.ControlPlaneEndpoint.Host == "" {
		lc.Spec.ControlPlaneEndpoint.Host = status.Host
	}
	if lc.Spec.ControlPlaneEndpoint.Port == 0 {
		lc.Spec.ControlPlaneEndpoint.Port = status.Port
	}
	if !status.Ready {
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	}
	return r.reconcileOrphanedMachines(ctx, s)
}

// validate returns the terminal failure of a spec that cannot work, or nil. The API server listens only
// on 127.0.0.1, so an endpoint host that does not resolve there can never be reached.
func validate(lc *infrav1.LocalCluster) *failure {
	host := lc.Spec.ControlPlaneEndpoint.Host
	if host == "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.Equal(net.IPv4(127, 0, 0, 1)) {
		return nil
	}
	return &failure{
		reason:  clusterv1.InvalidConfigurationClusterError,
		message: fmt.Sprintf("spec.controlPlaneEndpoint.host %q is not 127.0.0.1 or localhost, where the workload kube-apiserver listens", host),
	}
}

// encodeCA returns the PEM of a CA's certificate and key; an RSA key is written as PKCS#1, as upstream's
// CA Secrets hold it.
func encodeCA(ca *kubeconfig.CA) (certPEM, keyPEM []byte, err error) {
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	if k, ok := ca.Key.(*rsa.PrivateKey); ok {
		return certPEM, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	}
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the CA key: %w", err)
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

package process

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// kubeadm's ConfigMap of the cluster's configuration, in kube-system, and its key.
const (
	kubeadmConfigMap        = "kubeadm-config"
	clusterConfigurationKey = "ClusterConfiguration"
)

// ClusterConfiguration implements backend.Backend.
func (b *Backend) ClusterConfiguration(ctx context.Context, key types.NamespacedName) ([]byte, error) {
	c := b.get(key)
	if c == nil {
		return nil, backend.ErrClusterNotReady
	}
	client, ready := c.readyClient()
	if !ready {
		return nil, backend.ErrClusterNotReady
	}
	cm, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, kubeadmConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap kube-system/%s of the workload cluster: %w", kubeadmConfigMap, err)
	}
	if v, ok := cm.Data[clusterConfigurationKey]; ok {
		return []byte(v), nil
	}
	return nil, nil
}

// uploadClusterConfiguration creates the kubeadm-config ConfigMap with the ClusterConfiguration of the
// machine that initialised the control plane, as kubeadm init does; an existing one (a control plane
// provider keeps it up to date) is left alone.
func uploadClusterConfiguration(ctx context.Context, client kubernetes.Interface, config []byte) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: kubeadmConfigMap},
		Data:       map[string]string{clusterConfigurationKey: string(config)},
	}
	_, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("uploading the kubeadm ClusterConfiguration: %w", err)
	}
	return nil
}

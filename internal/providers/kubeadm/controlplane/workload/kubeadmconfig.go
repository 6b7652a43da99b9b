package workload

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/kubeadmapi"
)

// clusterConfigurationFields are the ClusterConfiguration fields the control plane provider keeps in line
// with its spec, as upstream's KCP does on a rollout; the others (endpoint, networking, certificates
// directory, cluster name) were written by `kubeadm init` and cannot change.
var clusterConfigurationFields = []string{"apiVersion", "kind", "kubernetesVersion", "imageRepository", "featureGates", "apiServer", "controllerManager", "scheduler", "etcd", "dns"}

// UpdateClusterConfiguration writes the version and the component settings of desired into the
// ClusterConfiguration of the kubeadm-config ConfigMap, in the kubeadm API version of version, which is what
// Machines joining the control plane read. A missing ConfigMap is left missing (the control plane is not
// initialized yet).
func (w *Cluster) UpdateClusterConfiguration(ctx context.Context, desired *bootstrapv1.ClusterConfiguration, version string) error {
	v, err := kubeadmapi.ParseVersion(version)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: KubeadmConfigMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ConfigMap kube-system/%s: %w", KubeadmConfigMap, err)
	}
	current := map[string]any{}
	if err := yaml.Unmarshal([]byte(cm.Data[ClusterConfigurationKey]), &current); err != nil {
		return fmt.Errorf("reading the ClusterConfiguration of ConfigMap kube-system/%s: %w", KubeadmConfigMap, err)
	}
	cfg := &bootstrapv1.ClusterConfiguration{}
	if desired != nil {
		cfg = desired.DeepCopy()
	}
	cfg.KubernetesVersion = version
	wanted, err := kubeadmapi.ClusterConfiguration(cfg, v)
	if err != nil {
		return err
	}
	want := map[string]any{}
	if err := yaml.Unmarshal([]byte(wanted), &want); err != nil {
		return err
	}
	updated := map[string]any{}
	for k, val := range current {
		updated[k] = val
	}
	for _, k := range clusterConfigurationFields {
		if val, ok := want[k]; ok {
			updated[k] = val
		} else if k != "dns" {
			delete(updated, k)
		}
	}
	if reflect.DeepEqual(updated, current) {
		return nil
	}
	out, err := yaml.Marshal(updated)
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[ClusterConfigurationKey] = string(out)
	if err := w.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating ConfigMap kube-system/%s: %w", KubeadmConfigMap, err)
	}
	return nil
}

// Names of kubeadm's RBAC for joining Nodes.
const (
	// GetNodesRole lets bootstrap tokens read Nodes, which `kubeadm join` needs.
	GetNodesRole = "kubeadm:get-nodes"
	// BootstrapTokenGroup is the group of kubeadm's bootstrap tokens.
	BootstrapTokenGroup = "system:bootstrappers:kubeadm:default-node-token"
)

// AllowBootstrapTokensToGetNodes creates the kubeadm:get-nodes ClusterRole and ClusterRoleBinding that
// `kubeadm join` needs, as upstream's KCP does; existing ones are left alone.
func (w *Cluster) AllowBootstrapTokensToGetNodes(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: GetNodesRole},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}}},
	}
	if err := w.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", GetNodesRole, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: GetNodesRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: GetNodesRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: BootstrapTokenGroup}},
	}
	if err := w.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", GetNodesRole, err)
	}
	return nil
}

// Package workload reaches a workload cluster from its management cluster in tests, the way users do:
// through the `<cluster>-kubeconfig` Secret the core writes, or, before the core has written it, through a
// kubeconfig built from the `<cluster>-ca` Secret exactly as the core builds it.
package workload

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// Timeout bounds each request to a workload cluster, so a test polling one that is down fails by its own
// deadline instead of hanging.
const Timeout = 5 * time.Second

// FromKubeconfigSecret returns the rest.Config of the `<cluster>-kubeconfig` Secret in namespace ns.
func FromKubeconfigSecret(ctx context.Context, c client.Reader, ns, clusterName string) (*rest.Config, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name(clusterName, clustersecret.Kubeconfig)}, secret); err != nil {
		return nil, err
	}
	return fromKubeconfig(secret.Data[kubeconfig.ValueKey])
}

// FromCA returns the rest.Config of an admin kubeconfig for the API server at endpoint, signed by the
// `<cluster>-ca` Secret in namespace ns, as the core writes `<cluster>-kubeconfig`.
func FromCA(ctx context.Context, c client.Reader, ns, clusterName string, endpoint clusterv1.APIEndpoint) (*rest.Config, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: clustersecret.Name(clusterName, clustersecret.ClusterCA)}, secret); err != nil {
		return nil, err
	}
	ca, err := kubeconfig.CAFromSecret(secret)
	if err != nil {
		return nil, err
	}
	return FromCAData(clusterName, endpoint, ca)
}

// FromCAData is FromCA with the CA at hand.
func FromCAData(clusterName string, endpoint clusterv1.APIEndpoint, ca *kubeconfig.CA) (*rest.Config, error) {
	data, err := kubeconfig.Generate(clusterName, kubeconfig.Server(endpoint), ca, time.Now())
	if err != nil {
		return nil, err
	}
	return fromKubeconfig(data)
}

func fromKubeconfig(data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("reading the workload kubeconfig: %w", err)
	}
	cfg.Timeout = Timeout
	return cfg, nil
}

// ReadyNodes lists the Nodes of the workload cluster at cfg whose Ready condition is True, by name.
func ReadyNodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var ready []corev1.Node
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = append(ready, n)
			}
		}
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].Name < ready[j].Name })
	return ready, nil
}

// Names returns the names of nodes, in their order.
func Names(nodes []corev1.Node) []string {
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names
}

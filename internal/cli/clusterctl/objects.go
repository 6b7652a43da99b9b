package clusterctl

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// ObjectCluster is a management cluster whose objects a command reads and changes directly.
// *cluster.Client implements it.
type ObjectCluster interface {
	// CurrentNamespace returns the namespace of the kubeconfig's current context.
	CurrentNamespace() (string, error)
	// CheckAvailable returns an error when the cluster cannot be reached.
	CheckAvailable(ctx context.Context) error
	// Kube returns a client of the cluster.
	Kube() (client.Client, error)
}

// ObjectClient returns a client of the management cluster of a kubeconfig, checked to answer, and the
// namespace to work in: namespace when set, else the one of the kubeconfig's context.
func (d *Deps) ObjectClient(ctx context.Context, kubeconfig cluster.Kubeconfig, namespace string) (client.Client, string, error) {
	if d.ManagementCluster == nil {
		return nil, "", errors.New("this clusterctl has no management cluster client")
	}
	mc, ok := d.ManagementCluster(kubeconfig).(ObjectCluster)
	if !ok {
		return nil, "", errors.New("this clusterctl's management cluster client cannot read objects")
	}
	if namespace == "" {
		var err error
		if namespace, err = mc.CurrentNamespace(); err != nil {
			return nil, "", err
		}
	}
	if err := mc.CheckAvailable(ctx); err != nil {
		return nil, "", err
	}
	c, err := mc.Kube()
	if err != nil {
		return nil, "", err
	}
	return c, namespace, nil
}

// ClusterNames returns the names of the Clusters in a namespace (the kubeconfig's when empty), for shell
// completion; none when the management cluster cannot be read.
func (d *Deps) ClusterNames(ctx context.Context, kubeconfig cluster.Kubeconfig, namespace string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	c, namespace, err := d.ObjectClient(ctx, kubeconfig, namespace)
	if err != nil {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterList"))
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names
}

// CompleteClusterName is the ValidArgsFunction of a command whose only argument is a Cluster's name: it
// offers the Clusters of namespace, read with kubeconfig (both filled in by the command's flags).
func (d *Deps) CompleteClusterName(kubeconfig *cluster.Kubeconfig, namespace *string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return d.ClusterNames(cmd.Context(), *kubeconfig, *namespace), cobra.ShellCompDirectiveNoFileComp
	}
}

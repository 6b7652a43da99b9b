// Package get implements `clusterctl get kubeconfig NAME`, which prints the kubeconfig of a workload
// cluster from its `<cluster>-kubeconfig` Secret in the management cluster.
package get

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clustersecret"
	"github.com/capstan-dev/capstan/internal/kubeconfig"
)

// NewCommand returns the `get` command and its subcommand `get kubeconfig`.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return clusterctlcli.GroupCommand("get", "Get info from a management or a workload cluster",
		"Get info from a management or a workload cluster",
		newKubeconfigCommand(streams, deps))
}

// kubeconfigOptions are the flags of `get kubeconfig`.
type kubeconfigOptions struct {
	kubeconfig cluster.Kubeconfig
	namespace  string
}

func newKubeconfigCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &kubeconfigOptions{}
	cmd := &cobra.Command{
		Use:   "kubeconfig NAME",
		Short: "Gets the kubeconfig file for accessing a workload cluster",
		Long:  "Gets the kubeconfig file for accessing a workload cluster",
		Example: `  # Get the workload cluster's kubeconfig.
  clusterctl get kubeconfig <name of workload cluster>

  # Get the workload cluster's kubeconfig in a particular namespace.
  clusterctl get kubeconfig <name of workload cluster> --namespace foo

  # Write it to a file and use it.
  clusterctl get kubeconfig <name of workload cluster> > workload.kubeconfig
  kubectl --kubeconfig workload.kubeconfig get nodes`,
		Args:              clusterctlcli.ExactlyOneArg("please specify a workload cluster name: clusterctl get kubeconfig NAME"),
		ValidArgsFunction: deps.CompleteClusterName(&o.kubeconfig, &o.namespace),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), streams.Out, deps, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "Namespace where the workload cluster exist.")
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "")
	return cmd
}

func (o *kubeconfigOptions) run(ctx context.Context, out io.Writer, deps *clusterctlcli.Deps, name string) error {
	c, namespace, err := deps.ObjectClient(ctx, o.kubeconfig, o.namespace)
	if err != nil {
		return err
	}
	data, err := workloadKubeconfig(ctx, c, namespace, name)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	_, err = out.Write(data)
	return err
}

// workloadKubeconfig returns the kubeconfig of the Cluster namespace/name: the value key of its
// `<name>-kubeconfig` Secret.
func workloadKubeconfig(ctx context.Context, c client.Reader, namespace, name string) ([]byte, error) {
	secret := &corev1.Secret{}
	secretName := clustersecret.Name(name, clustersecret.Kubeconfig)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		if exists, cerr := clusterExists(ctx, c, namespace, name); cerr == nil && !exists {
			return nil, fmt.Errorf("no Cluster %s in namespace %s: check the name, or give the Cluster's namespace with --namespace", name, namespace)
		}
		return nil, fmt.Errorf("no kubeconfig Secret %s in namespace %s: the Cluster's control plane may not be initialized yet (see clusterctl describe cluster %s)", secretName, namespace, name)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, secretName, err)
	}
	data := secret.Data[kubeconfig.ValueKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("the Secret %s in namespace %s has no kubeconfig under its %q key: it was not written by Cluster API", secretName, namespace, kubeconfig.ValueKey)
	}
	return data, nil
}

// clusterExists reports whether the Cluster namespace/name exists.
func clusterExists(ctx context.Context, c client.Reader, namespace, name string) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

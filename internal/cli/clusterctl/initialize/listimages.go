package initialize

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

func newListImagesCommand(streams iostreams.Streams, deps *clusterctlcli.Deps, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "list-images",
		Short: "Lists the container images required for initializing the management cluster",
		Long: `Lists the container images required for initializing the management cluster: cert-manager's
(unless it is externally provisioned) and the providers', with the image overrides of the clusterctl
config file applied. Nothing is installed.`,
		Example: `  # List the images needed to initialize a management cluster with the aws infrastructure provider.
  clusterctl init list-images --infrastructure aws

  # List infrastructure, bootstrap, control plane and core images.
  clusterctl init list-images --infrastructure vcd --bootstrap kubeadm --control-plane nested --core cluster-api:v1.10.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, c, err := deps.NewClient(cmd.Context(), streams, clusterctlcli.ClientOptions{Kubeconfig: &o.kubeconfig})
			if err != nil {
				return err
			}
			images, err := c.InitImages(ctx, o.initOptions())
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, image := range images {
				b.WriteString(image + "\n")
			}
			_, err = io.WriteString(streams.Out, b.String())
			return err
		},
	}
}

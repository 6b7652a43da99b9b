// Package status is the `capstan status` command: it tells whether an embedded management cluster runs,
// where to reach it, and which provider Deployments its local runtime runs.
package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/release"
)

// NewCommand returns `capstan status`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	var cluster embedded.StateFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether an embedded management cluster runs, and what it runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			state, err := cluster.State()
			if err != nil {
				return err
			}
			pid, err := state.RunningPid()
			if errors.Is(err, embedded.ErrNotRunning) {
				if _, statErr := os.Stat(state.Kubeconfig()); statErr != nil {
					fmt.Fprintf(streams.Out, "The management cluster %q does not exist (no state in %s).\n", cluster.Name, state.Dir)
				} else {
					fmt.Fprintf(streams.Out, "The management cluster %q is stopped; its state is in %s. Start it with `capstan up --name %s`.\n", cluster.Name, state.Dir, cluster.Name)
				}
				return nil
			}
			fmt.Fprintf(streams.Out, "The management cluster %q is running (pid %d).\n  state:      %s\n  kubeconfig: %s\n", cluster.Name, pid, state.Dir, state.Kubeconfig())
			return printDeployments(cmd.Context(), streams, state)
		},
	}
	cluster.AddFlags(cmd.Flags())
	return cmd
}

func printDeployments(ctx context.Context, streams iostreams.Streams, state embedded.State) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig())
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list); err != nil {
		fmt.Fprintf(streams.Out, "  API server: not answering (%v)\n", err)
		return nil
	}
	fmt.Fprintf(streams.Out, "  API server: %s\n\n", cfg.Host)
	w := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tDEPLOYMENT\tREADY\tRUNS LOCALLY")
	for _, d := range list.Items {
		local := "yes"
		for _, ct := range d.Spec.Template.Spec.Containers {
			if !strings.HasPrefix(ct.Image, release.Image+":") && !strings.HasPrefix(ct.Image, release.Image+"@") {
				local = "no (" + ct.Image + ")"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\n", d.Namespace, d.Name, d.Status.ReadyReplicas, ptr.Deref(d.Spec.Replicas, 1), local)
	}
	if len(list.Items) == 0 {
		fmt.Fprintln(w, "(none)\t\t\t")
	}
	return w.Flush()
}

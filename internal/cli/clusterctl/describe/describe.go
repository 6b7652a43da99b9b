// Package describe implements `clusterctl describe cluster NAME`: the "at a glance" view of a Cluster, its
// infrastructure, control plane, workers and their Machines with their state, as upstream prints it.
package describe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/tree"
)

// NewCommand returns the `describe` command and its subcommand `describe cluster`.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	return newCommand(streams, deps, time.Now)
}

func newCommand(streams iostreams.Streams, deps *clusterctlcli.Deps, now func() time.Time) *cobra.Command {
	return clusterctlcli.GroupCommand("describe", "Describe workload clusters",
		"Describe the status of workload clusters.",
		newClusterCommand(streams, deps, now))
}

// clusterOptions are the flags of `describe cluster`.
type clusterOptions struct {
	kubeconfig       cluster.Kubeconfig
	namespace        string
	showConditions   string
	showMachineSets  bool
	showResourceSets bool
	showTemplates    bool
	echo             bool
	grouping         bool
	disableGrouping  bool
	v1beta2          bool
	color            bool
}

func newClusterCommand(streams iostreams.Streams, deps *clusterctlcli.Deps, now func() time.Time) *cobra.Command {
	o := &clusterOptions{}
	cmd := &cobra.Command{
		Use:   "cluster NAME",
		Short: "Describe workload clusters",
		Long: `Provide an "at glance" view of a Cluster API cluster designed to help the user in quickly
understanding if there are problems and where.`,
		Example: `  # Describe the cluster named test-1.
  clusterctl describe cluster test-1

  # Describe the cluster named test-1 showing all the conditions for the KubeadmControlPlane object kind.
  clusterctl describe cluster test-1 --show-conditions KubeadmControlPlane

  # Describe the cluster named test-1 showing all the conditions for a specific machine.
  clusterctl describe cluster test-1 --show-conditions Machine/m1

  # Describe the cluster named test-1 showing only the conditions of its machines that say something.
  clusterctl describe cluster test-1 --show-conditions Machine+

  # Describe the cluster named test-1 disabling automatic grouping of objects with the same ready condition
  # e.g. un-group all the machines with Ready=true instead of showing a single group node.
  clusterctl describe cluster test-1 --grouping=false

  # Describe the cluster named test-1 showing the MachineInfrastructure and BootstrapConfig objects
  # also when their status is the same as the status of the corresponding machine object.
  clusterctl describe cluster test-1 --echo`,
		Args:              clusterctlcli.ExactlyOneArg("please specify a cluster name: clusterctl describe cluster NAME"),
		ValidArgsFunction: deps.CompleteClusterName(&o.kubeconfig, &o.namespace),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("v1beta2") {
				fmt.Fprintln(streams.ErrOut, "Flag --v1beta2 has been deprecated, the v1beta2 conditions are the default; --v1beta2=false will be removed in a future release")
			}
			if cmd.Flags().Changed("disable-grouping") {
				fmt.Fprintln(streams.ErrOut, "Flag --disable-grouping has been deprecated, use --grouping=false instead")
			}
			color := useColor(deps.LookupEnv, cmd.Flags().Changed("color"), o.color, streams.Out)
			return o.run(cmd.Context(), streams.Out, deps, now(), color, args[0])
		},
	}
	f := cmd.Flags()
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "Path to a kubeconfig file to use for the management cluster. If empty, default discovery rules apply.")
	f.StringVarP(&o.namespace, "namespace", "n", "", "The namespace where the workload cluster is located. If unspecified, the current namespace will be used.")
	f.StringVar(&o.showConditions, "show-conditions", "", "list of comma separated kind or kind/name for which the command should show all the object's conditions (use 'all' to show conditions for everything, and a + suffix, e.g. Machine+, to show only the conditions that are not in their normal state or have a message).")
	f.BoolVar(&o.showMachineSets, "show-machinesets", false, "Show MachineSet objects.")
	f.BoolVar(&o.showResourceSets, "show-resourcesets", false, "Show cluster resource sets.")
	f.BoolVar(&o.showTemplates, "show-templates", false, "Show infrastructure and bootstrap config templates associated with the cluster.")
	f.BoolVar(&o.echo, "echo", false, "Show MachineInfrastructure and BootstrapConfig when ready condition is true or it has the Status, Severity and Reason of the machine's object.")
	f.BoolVar(&o.grouping, "grouping", true, "Groups machines when ready condition has the same Status, Severity and Reason.")
	f.BoolVar(&o.disableGrouping, "disable-grouping", false, "Disable grouping machines when ready condition has the same Status, Severity and Reason.")
	_ = f.MarkHidden("disable-grouping")
	f.BoolVar(&o.v1beta2, "v1beta2", true, "Use V1Beta2 conditions.")
	_ = f.MarkHidden("v1beta2")
	f.BoolVarP(&o.color, "color", "c", false, "Enable or disable color output; if not set color is enabled by default only if using tty. The flag is overridden by the NO_COLOR env variable if set.")
	return cmd
}

func (o *clusterOptions) run(ctx context.Context, out io.Writer, deps *clusterctlcli.Deps, now time.Time, color bool, name string) error {
	filter, err := tree.ParseConditionFilter(o.showConditions)
	if err != nil {
		return err
	}
	c, namespace, err := deps.ObjectClient(ctx, o.kubeconfig, o.namespace)
	if err != nil {
		return err
	}
	objs, err := tree.Discover(ctx, c, namespace, name, tree.DiscoverOptions{ClusterResourceSets: o.showResourceSets})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("no Cluster %s in namespace %s: check the name, or give the Cluster's namespace with --namespace", name, namespace)
	case meta.IsNoMatchError(err):
		return errors.New("the management cluster does not serve Cluster API's Cluster kind (cluster.x-k8s.io/v1beta1): install Cluster API with clusterctl init, or check --kubeconfig and --kubeconfig-context")
	case err != nil:
		return err
	}
	t := tree.Build(objs, tree.Options{
		ShowConditions:   filter,
		ShowMachineSets:  o.showMachineSets,
		ShowResourceSets: o.showResourceSets,
		ShowTemplates:    o.showTemplates,
		Echo:             o.echo,
		Grouping:         o.grouping && !o.disableGrouping,
		V1Beta1:          !o.v1beta2,
	})
	return tree.Print(out, t, tree.PrintOptions{Now: now, Color: color})
}

// useColor decides whether to paint the output: never when NO_COLOR is set, else as --color says, else
// when out is a terminal other than a dumb one.
func useColor(lookupEnv func(string) (string, bool), flagSet, flag bool, out io.Writer) bool {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if v, ok := lookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	if flagSet {
		return flag
	}
	if term, _ := lookupEnv("TERM"); term == "dumb" {
		return false
	}
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

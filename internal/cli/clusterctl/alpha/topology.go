package alpha

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/topologyplan"
	"github.com/capstan-dev/capstan/internal/manifest"
)

type topologyPlanOptions struct {
	kubeconfig cluster.Kubeconfig
	files      []string
	cluster    string
	namespace  string
	outDir     string
}

func newTopologyCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Commands for ClusterClass based clusters.",
		Args:  cobra.NoArgs,
	}
	o := &topologyPlanOptions{}
	plan := &cobra.Command{
		Use:   "plan",
		Short: "List the changes to clusters that use managed topologies for a given input.",
		Long: `Provide a list of objects (ClusterClasses, their templates, Clusters and the objects the topology
manages) and show the changes the topology controller would make: which objects it would create, modify
or delete, computed by the same engine as the controller.

When a management cluster with Cluster API is reachable (--kubeconfig, or the default kubeconfig), what
the input lacks is read from it: the ClusterClass and templates of a Cluster, the objects its topology
manages, and the Clusters that use a ClusterClass or template of the input. A Cluster of the input is
applied over the one in the management cluster, and a change of an existing object is found with a
dry-run apply, as the controller finds it. Nothing is written. Without a management cluster the plan is
computed offline, with the objects of the input as the current state; only the fields the topology owns
count, as with the controller's server-side apply.

With --output-directory, each created object is written to created/<Kind>_<namespace>_<name>.yaml and
each modified one to modified/<Kind>_<namespace>_<name>.{original.yaml,modified.yaml,jsonpatch,diff}.`,
		Example: `  # List the objects a new Cluster from a ClusterClass gets.
  clusterctl alpha topology plan -f clusterclass.yaml -f cluster.yaml -o output/

  # Only for one Cluster of the input.
  clusterctl alpha topology plan -f input.yaml -c default/my-cluster -o output/

  # What changing a running Cluster's version would do (the rest is read from the management cluster).
  kubectl get cluster my-cluster -o yaml | sed 's/version: v1.36.3/version: v1.37.1/' > cluster.yaml
  clusterctl alpha topology plan -f cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTopologyPlan(cmd.Context(), streams, deps, o)
		},
	}
	clusterctlcli.AddKubeconfigFlags(plan.Flags(), &o.kubeconfig, "Path to the kubeconfig for the management cluster. If unspecified, default discovery rules apply.")
	plan.Flags().StringArrayVarP(&o.files, "file", "f", nil, "path to an input file with the objects to plan with (ClusterClasses, templates, Clusters); repeat for more files")
	plan.Flags().StringVarP(&o.cluster, "cluster", "c", "", "name (or namespace/name) of the Cluster to plan for; every Cluster with a topology in the input when empty")
	plan.Flags().StringVarP(&o.namespace, "namespace", "n", "", "namespace of the input's objects that have none; the management cluster's current namespace (online) or default when empty")
	plan.Flags().StringVarP(&o.outDir, "output-directory", "o", "", "directory to write the created and modified objects, their JSON merge patches and unified diffs to")
	_ = plan.MarkFlagRequired("file")
	cmd.AddCommand(plan)
	return cmd
}

func runTopologyPlan(ctx context.Context, streams iostreams.Streams, deps *clusterctlcli.Deps, o *topologyPlanOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	planOpts, err := managementCluster(ctx, streams, deps, o)
	if err != nil {
		return err
	}
	var objs []unstructured.Unstructured
	for _, f := range o.files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f, err)
		}
		parsed, err := manifest.Parse(data)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", f, err)
		}
		objs = append(objs, parsed...)
	}
	result, err := topologyplan.PlanWith(ctx, objs, o.cluster, planOpts)
	if err != nil {
		return err
	}
	printPlan(streams.Out, result)
	if o.outDir == "" {
		return nil
	}
	return writePlan(streams.Out, o.outDir, result.Clusters)
}

// printPlan prints a plan as upstream's: the affected ClusterClasses and Clusters, then for each Cluster
// the table of its changes (created, modified, then deleted, each sorted by kind and name) and what the
// controller waits for.
func printPlan(out io.Writer, result *topologyplan.Result) {
	if len(result.ClusterClasses) == 0 {
		fmt.Fprintln(out, "No ClusterClasses will be affected by the changes.")
	} else {
		fmt.Fprintln(out, "The following ClusterClasses will be affected by the changes:")
		for _, cc := range result.ClusterClasses {
			fmt.Fprintf(out, " ＊ %s\n", cc)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "The following Clusters will be affected by the changes:")
	for _, p := range result.Clusters {
		fmt.Fprintf(out, " ＊ %s\n", p.Cluster)
	}
	fmt.Fprintln(out)
	for _, p := range result.Clusters {
		if len(p.Changes) == 0 {
			fmt.Fprintf(out, "No changes detected for Cluster %q.\n", p.Cluster)
		} else {
			fmt.Fprintf(out, "Changes for Cluster %q: \n\n", p.Cluster)
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "  NAMESPACE\tKIND\tNAME\tACTION")
			for _, c := range p.Changes {
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Object.GetNamespace(), c.Object.GetKind(), c.Object.GetName(), c.Action)
			}
			_ = w.Flush()
		}
		for _, n := range p.Notes {
			fmt.Fprintf(out, "\n  Note: %s\n", n)
		}
		fmt.Fprintln(out)
	}
}

// writePlan writes, as upstream's plan, each created object to dir/created/<Kind>_<namespace>_<name>.yaml
// and, for each modified object, its .original.yaml, .modified.yaml, .jsonpatch (a JSON merge patch) and
// unified .diff to dir/modified.
func writePlan(out io.Writer, dir string, plans []topologyplan.ClusterPlan) error {
	files := map[string][]byte{}
	var created, modified int
	for _, p := range plans {
		for _, c := range p.Changes {
			base := topologyplan.FileBase(c.Object)
			data, err := topologyplan.YAML(c.Object)
			if err != nil {
				return fmt.Errorf("writing %s: %w", base, err)
			}
			switch c.Action {
			case topologyplan.Created:
				created++
				files[filepath.Join("created", base+".yaml")] = data
			case topologyplan.Modified:
				modified++
				original, err := topologyplan.YAML(c.Original)
				if err != nil {
					return fmt.Errorf("writing %s: %w", base, err)
				}
				patch, err := c.MergePatch()
				if err != nil {
					return fmt.Errorf("writing %s: %w", base, err)
				}
				files[filepath.Join("modified", base+".original.yaml")] = original
				files[filepath.Join("modified", base+".modified.yaml")] = data
				files[filepath.Join("modified", base+".jsonpatch")] = patch
				files[filepath.Join("modified", base+".diff")] = []byte(c.Diff)
			}
		}
	}
	var errs []error
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return fmt.Errorf("creating the output directory: %w", err)
		}
		errs = append(errs, os.WriteFile(path, data, 0o600))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	if created > 0 {
		fmt.Fprintf(out, "Created objects are written to directory %q\n", filepath.Join(dir, "created"))
	}
	if modified > 0 {
		fmt.Fprintf(out, "Modified objects are written to directory %q\n", filepath.Join(dir, "modified"))
	}
	return nil
}

// managementCluster returns the plan's options: online when a management cluster with Cluster API
// answers. A kubeconfig named with --kubeconfig must work; without it, a missing or unreachable default
// kubeconfig, or a cluster without Cluster API, means an offline plan.
func managementCluster(ctx context.Context, streams iostreams.Streams, deps *clusterctlcli.Deps, o *topologyPlanOptions) (topologyplan.Options, error) {
	offline := topologyplan.Options{Namespace: o.namespace}
	if deps == nil || deps.ManagementCluster == nil {
		return offline, nil
	}
	explicit := o.kubeconfig.Path != ""
	c, namespace, err := deps.ObjectClient(ctx, o.kubeconfig, o.namespace)
	if err != nil {
		if explicit {
			return offline, fmt.Errorf("reading the management cluster: %w", err)
		}
		return offline, nil
	}
	classes := &unstructured.UnstructuredList{}
	classes.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ClusterClassList"))
	if err := c.List(ctx, classes, client.Limit(1)); err != nil {
		if explicit {
			return offline, fmt.Errorf("the management cluster (%s) does not serve ClusterClasses: install Cluster API with clusterctl init, or plan offline without --kubeconfig: %w", o.kubeconfig.Path, err)
		}
		return offline, nil
	}
	fmt.Fprintln(streams.ErrOut, "Detected a cluster with Cluster API installed. Will use it to fetch missing objects.")
	return topologyplan.Options{Client: c, Namespace: namespace}, nil
}

package alpha

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/manifest"
	"github.com/capstan-dev/capstan/internal/clusterctl/topologyplan"
)

type topologyPlanOptions struct {
	files   []string
	cluster string
	outDir  string
}

func newTopologyCommand(streams iostreams.Streams) *cobra.Command {
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
or delete. The plan is computed offline, by the same engine as the controller, with the objects of the
input as the current state.`,
		Example: `  # List the objects a new Cluster from a ClusterClass gets.
  clusterctl alpha topology plan -f clusterclass.yaml -f cluster.yaml -o output/

  # Only for one Cluster of the input.
  clusterctl alpha topology plan -f input.yaml -c default/my-cluster -o output/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTopologyPlan(cmd.Context(), streams, o)
		},
	}
	plan.Flags().StringArrayVarP(&o.files, "file", "f", nil, "path to an input file with the objects to plan with (ClusterClasses, templates, Clusters); repeat for more files")
	plan.Flags().StringVarP(&o.cluster, "cluster", "c", "", "name (or namespace/name) of the Cluster to plan for; every Cluster with a topology in the input when empty")
	plan.Flags().StringVarP(&o.outDir, "output-directory", "o", "", "directory to write the created and modified objects and their diffs to")
	_ = plan.MarkFlagRequired("file")
	cmd.AddCommand(plan)
	return cmd
}

func runTopologyPlan(ctx context.Context, streams iostreams.Streams, o *topologyPlanOptions) error {
	if ctx == nil {
		ctx = context.Background()
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
	plans, err := topologyplan.Plan(ctx, objs, o.cluster)
	if err != nil {
		return err
	}
	fmt.Fprintln(streams.Out, "The following Clusters will be affected by the changes:")
	for _, p := range plans {
		fmt.Fprintf(streams.Out, " * %s\n", p.Cluster)
	}
	for _, p := range plans {
		fmt.Fprintf(streams.Out, "\nChanges for Cluster %q:\n\n", p.Cluster)
		if len(p.Changes) == 0 {
			fmt.Fprintln(streams.Out, "  No changes detected.")
		} else {
			w := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "  NAMESPACE\tKIND\tNAME\tACTION")
			for _, c := range p.Changes {
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Object.GetNamespace(), c.Object.GetKind(), c.Object.GetName(), c.Action)
			}
			_ = w.Flush()
		}
		for _, n := range p.Notes {
			fmt.Fprintf(streams.Out, "\n  Note: %s\n", n)
		}
	}
	if o.outDir == "" {
		return nil
	}
	for _, dir := range []string{"created", "modified"} {
		if err := os.MkdirAll(filepath.Join(o.outDir, dir), 0o755); err != nil {
			return fmt.Errorf("creating the output directory: %w", err)
		}
	}
	var errs []error
	for _, p := range plans {
		for _, c := range p.Changes {
			base := strings.ToLower(fmt.Sprintf("%s_%s_%s", c.Object.GetKind(), c.Object.GetNamespace(), c.Object.GetName()))
			data, err := yaml.Marshal(c.Object.Object)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			switch c.Action {
			case topologyplan.Created:
				errs = append(errs, os.WriteFile(filepath.Join(o.outDir, "created", base+".yaml"), data, 0o600))
			case topologyplan.Modified:
				errs = append(errs, os.WriteFile(filepath.Join(o.outDir, "modified", base+".modified.yaml"), data, 0o600),
					os.WriteFile(filepath.Join(o.outDir, "modified", base+".diff"), []byte(c.Diff), 0o600))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	fmt.Fprintf(streams.Out, "\nCreated objects are written to directory %q\n", filepath.Join(o.outDir, "created"))
	fmt.Fprintf(streams.Out, "Modified objects are written to directory %q\n", filepath.Join(o.outDir, "modified"))
	return nil
}

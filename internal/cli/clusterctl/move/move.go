// Package move implements `clusterctl move`: it moves the Cluster API objects of a namespace, and all
// their dependencies, from one management cluster to another, or writes them to a directory and restores
// them from it. The work is done by internal/clusterctl/move; this package reads the flags, connects to
// the clusters and reports.
package move

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/move"
)

// options are move's flags.
type options struct {
	// from and to are the source and destination management clusters (--kubeconfig, --kubeconfig-context,
	// --to-kubeconfig, --to-kubeconfig-context).
	from, to        cluster.Kubeconfig
	namespace       string
	dryRun          bool
	toDirectory     string
	fromDirectory   string
	hideAPIWarnings string
}

// NewCommand returns the `move` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "move",
		Short: "Move Cluster API objects and all dependencies between management clusters",
		Long: `Move Cluster API objects and all dependencies between management clusters.

Note: The destination cluster MUST have the required provider components installed.

Every check runs before anything is paused. If the move is interrupted (killed, or the machine crashes),
run the same command again: it resumes from the journal it keeps in the source namespace. If it fails
before anything was deleted from the source, it is undone.`,
		Example: `  # Move Cluster API objects and all dependencies between management clusters.
  clusterctl move --to-kubeconfig=target-kubeconfig.yaml

  # Show what would move, and every check's result, without changing anything.
  clusterctl move --to-kubeconfig=target-kubeconfig.yaml --dry-run

  # Write Cluster API objects and all dependencies from a management cluster to directory.
  clusterctl move --to-directory /tmp/backup-directory

  # Read Cluster API objects and all dependencies from a directory into a management cluster.
  clusterctl move --from-directory /tmp/backup-directory`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams, deps)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from.Path, "kubeconfig", "", "Path to the kubeconfig file for the source management cluster. If unspecified, default discovery rules apply.")
	f.StringVar(&o.to.Path, "to-kubeconfig", "", "Path to the kubeconfig file to use for the destination management cluster.")
	f.StringVar(&o.from.Context, "kubeconfig-context", "", "Context to be used within the kubeconfig file for the source management cluster. If empty, current context will be used.")
	f.StringVar(&o.to.Context, "to-kubeconfig-context", "", "Context to be used within the kubeconfig file for the destination management cluster. If empty, current context will be used.")
	f.StringVarP(&o.namespace, "namespace", "n", "", "The namespace where the workload cluster is hosted. If unspecified, the current context's namespace is used.")
	f.BoolVar(&o.dryRun, "dry-run", false, "Enable dry run, don't really perform the move actions")
	f.StringVar(&o.toDirectory, "to-directory", "", "Write Cluster API objects and all dependencies from a management cluster to directory.")
	f.StringVar(&o.fromDirectory, "from-directory", "", "Read Cluster API objects and all dependencies from a directory into a management cluster.")
	f.StringVar(&o.hideAPIWarnings, "hide-api-warnings", "default", `Set of API server warnings to hide. Valid values are "default" (hide API warnings from move), "all" (hide all API warnings), "none" (show all API warnings).`)
	cmd.MarkFlagsMutuallyExclusive("to-directory", "to-kubeconfig")
	cmd.MarkFlagsMutuallyExclusive("from-directory", "to-directory")
	cmd.MarkFlagsMutuallyExclusive("from-directory", "kubeconfig")
	return cmd
}

func (o *options) run(ctx context.Context, streams iostreams.Streams, deps *clusterctlcli.Deps) error {
	if o.toDirectory == "" && o.fromDirectory == "" && o.to.Path == "" && !o.dryRun {
		return errors.New("please specify a target cluster using the --to-kubeconfig flag when not using --dry-run, --to-directory or --from-directory")
	}
	switch o.hideAPIWarnings {
	case "default", "all", "none":
	default:
		return fmt.Errorf("invalid --hide-api-warnings %q: use default, all or none", o.hideAPIWarnings)
	}
	ctx, _, err := deps.NewClient(ctx, streams, clusterctlcli.ClientOptions{})
	if err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx)
	// controller-runtime's client logs through its own logger; clusterctl reports what matters itself.
	ctrllog.SetLogger(logr.Discard())
	warnings := streams.ErrOut
	if o.hideAPIWarnings != "none" {
		warnings = nil
	}

	log.Info("Performing move...")
	if o.dryRun {
		log.Info("********************************************************")
		log.Info("This is a dry-run move, will not perform any real action")
		log.Info("********************************************************")
	}

	var res *move.Result
	switch {
	case o.fromDirectory != "":
		to, err := connect(o.to, "destination", warnings)
		if err != nil {
			return err
		}
		res, err = move.FromDirectory(ctx, to, o.fromDirectory, move.Options{})
		if err != nil {
			return report(streams.ErrOut, err)
		}
		fmt.Fprintf(streams.Out, "Restored %s from %s to %s.\n", res.Plan.Summary(), o.fromDirectory, to.Name)
		return nil
	}

	from, err := connect(o.from, "source", warnings)
	if err != nil {
		return err
	}
	opts := move.Options{Namespace: o.namespace}
	if opts.Namespace == "" {
		if opts.Namespace, err = cluster.New(o.from).CurrentNamespace(); err != nil {
			return err
		}
	}
	var to *move.Cluster
	if o.to.Path != "" {
		if to, err = connect(o.to, "destination", warnings); err != nil {
			return err
		}
	}

	switch {
	case o.dryRun:
		plan, err := move.DryRun(ctx, from, to, opts)
		if err != nil {
			return err
		}
		plan.Print(streams.Out)
		if len(plan.Problems) > 0 {
			return fmt.Errorf("the move would not start: %d problems, listed above", len(plan.Problems))
		}
		return nil
	case o.toDirectory != "":
		res, err = move.ToDirectory(ctx, from, o.toDirectory, opts)
		if err != nil {
			return report(streams.ErrOut, err)
		}
		fmt.Fprintf(streams.Out, "Wrote %s from namespace %s of %s to %s.\n", res.Plan.Summary(), opts.Namespace, from.Name, o.toDirectory)
	default:
		res, err = move.Move(ctx, from, to, opts)
		if err != nil {
			return report(streams.ErrOut, err)
		}
		if len(res.Plan.Objects()) == 0 {
			fmt.Fprintf(streams.Out, "Nothing left to move from namespace %s of %s: %s already has its Clusters.\n", opts.Namespace, from.Name, to.Name)
			return nil
		}
		if res.Resumed != "" {
			fmt.Fprintf(streams.Out, "Resumed the interrupted move (it was %s).\n", res.Resumed.Doing())
		}
		fmt.Fprintf(streams.Out, "Moved %s from namespace %s of %s to %s.\n", res.Plan.Summary(), opts.Namespace, from.Name, to.Name)
	}
	move.PrintNotMoved(streams.Out, res.Plan.NotMoved)
	return nil
}

// connect returns the management cluster of a kubeconfig, named by its API server.
func connect(k cluster.Kubeconfig, role string, warnings io.Writer) (*move.Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context}).ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig found for the %s management cluster: set the %s flag or KUBECONFIG", role, flagOf(role))
		}
		return nil, fmt.Errorf("loading the kubeconfig of the %s management cluster (%s): %w", role, k, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.WarningHandler = rest.NoWarnings{}
	if warnings != nil {
		cfg.WarningHandler = rest.NewWarningWriter(warnings, rest.WarningWriterOptions{Deduplicate: true})
	}
	scheme, err := move.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the %s management cluster (%s): %w", role, k, err)
	}
	return &move.Cluster{Client: c, Name: cfg.Host}, nil
}

func flagOf(role string) string {
	if role == "source" {
		return "--kubeconfig"
	}
	return "--to-kubeconfig"
}

// report prints the details of a failed move (every preflight problem; where the objects are) to w and
// returns a one-line error.
func report(w io.Writer, err error) error {
	var pe *move.PreflightError
	if errors.As(err, &pe) {
		fmt.Fprintln(w, "The move did not start:")
		for _, p := range pe.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
		return fmt.Errorf("the move did not start: %d problems, listed above; nothing was paused or changed", len(pe.Problems))
	}
	var me *move.Error
	if !errors.As(err, &me) {
		return err
	}
	list := func(title string, refs []move.Ref) {
		if len(refs) == 0 {
			return
		}
		fmt.Fprintf(w, "%s (%d):\n", title, len(refs))
		for _, r := range refs {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
	switch {
	case me.RolledBack:
		fmt.Fprintln(w, "The move was undone: the source is unpaused and keeps every object; the target has none of the copies.")
	case me.Resumable:
		list("Objects in the target", me.InTarget)
		list("Objects that may still be in the source", me.InSource)
		if len(me.Paused) > 0 {
			fmt.Fprintf(w, "Still paused (%d):\n", len(me.Paused))
			for _, p := range me.Paused {
				fmt.Fprintf(w, "  %s\n", p)
			}
		}
		fmt.Fprintln(w, "Run the same command again to finish the move: it resumes from the journal (ConfigMap "+move.JournalName+").")
	}
	return err
}

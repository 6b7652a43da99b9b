package alpha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

// kind is a kind of resource whose rollout clusterctl manages.
type kind struct {
	// name is how users and the output name the kind ("machinedeployment").
	name string
	// aliases are the other names accepted on the command line.
	aliases []string
	gvk     schema.GroupVersionKind
	// pausedByAnnotation says the kind is paused with the cluster.x-k8s.io/paused annotation rather than
	// spec.paused (KubeadmControlPlane, as upstream).
	pausedByAnnotation bool
}

// kinds are the kinds `alpha rollout` supports.
var kinds = []kind{
	{name: "machinedeployment", aliases: []string{"machinedeployments", "md", "machinedeployment.cluster.x-k8s.io"}, gvk: clusterv1.GroupVersion.WithKind("MachineDeployment")},
	{name: "kubeadmcontrolplane", aliases: []string{"kubeadmcontrolplanes", "kcp", "kubeadmcontrolplane.controlplane.cluster.x-k8s.io"},
		gvk: schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane"}, pausedByAnnotation: true},
}

func supportedKinds() string {
	var names []string
	for _, k := range kinds {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

func lookupKind(s string) (kind, bool) {
	s = strings.ToLower(s)
	for _, k := range kinds {
		if s == k.name || slices.Contains(k.aliases, s) {
			return k, true
		}
	}
	return kind{}, false
}

// resource is one resource a rollout command acts on.
type resource struct {
	kind kind
	name string
}

// String is the resource as users name it: machinedeployment/md-0.
func (r resource) String() string { return r.kind.name + "/" + r.name }

// qualified is the resource as kubectl prints it: machinedeployment.cluster.x-k8s.io/md-0.
func (r resource) qualified() string { return r.kind.name + "." + r.kind.gvk.Group + "/" + r.name }

// parseResources reads the resources of a command line: TYPE/NAME arguments, or TYPE NAME [NAME...].
func parseResources(args []string) ([]resource, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("required resource not specified: give one as TYPE/NAME, e.g. machinedeployment/my-md-0 (supported types: %s)", supportedKinds())
	}
	lookup := func(s string) (kind, error) {
		k, ok := lookupKind(s)
		if !ok {
			return kind{}, fmt.Errorf("invalid resource type %q: supported types are %s", s, supportedKinds())
		}
		return k, nil
	}
	var out []resource
	if !strings.Contains(args[0], "/") {
		k, err := lookup(args[0])
		if err != nil {
			return nil, err
		}
		if len(args) == 1 {
			return nil, fmt.Errorf("no name given for %s: use %s/NAME", args[0], k.name)
		}
		for _, name := range args[1:] {
			if strings.Contains(name, "/") {
				return nil, fmt.Errorf("%q: give resources either as TYPE NAME... or as TYPE/NAME..., not both", name)
			}
			out = append(out, resource{kind: k, name: name})
		}
		return out, nil
	}
	for _, arg := range args {
		typ, name, ok := strings.Cut(arg, "/")
		if !ok || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("%q is not a resource: give it as TYPE/NAME, e.g. machinedeployment/my-md-0", arg)
		}
		k, err := lookup(typ)
		if err != nil {
			return nil, err
		}
		out = append(out, resource{kind: k, name: name})
	}
	return out, nil
}

// action is what a rollout subcommand does to one resource: it checks the object and returns the merge
// patch to apply.
type action func(r resource, obj *unstructured.Unstructured, now time.Time) (patch map[string]any, err error)

// rolloutOptions are the flags shared by the rollout subcommands.
type rolloutOptions struct {
	kubeconfig cluster.Kubeconfig
	namespace  string
}

func newRolloutCommand(streams iostreams.Streams, deps *clusterctlcli.Deps, now func() time.Time) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of a cluster-api resource",
		Long: `Manage the rollout of a cluster-api resource.
Valid resource types include:

   * machinedeployment
   * kubeadmcontrolplane`,
		Example: `  # Force an immediate rollout of machinedeployment
  clusterctl alpha rollout restart machinedeployment/my-md-0

  # Mark the machinedeployment as paused
  clusterctl alpha rollout pause machinedeployment/my-md-0

  # Resume an already paused machinedeployment
  clusterctl alpha rollout resume machinedeployment/my-md-0`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newSubcommand(streams, deps, now, subcommand{
			use: "restart RESOURCE", verb: "restarted", short: "Restart a cluster-api resource",
			long: `Restart of cluster-api resources.

Resources will be rollout restarted: their Machines are replaced by new ones, as many at a time as the
rollout strategy allows. A paused resource must be resumed first.`,
			example: `  # Restart a machinedeployment
  clusterctl alpha rollout restart machinedeployment/my-md-0`,
			action: restart,
		}),
		newSubcommand(streams, deps, now, subcommand{
			use: "pause RESOURCE", verb: "paused", short: "Pause a cluster-api resource",
			long: `Mark the provided cluster-api resource as paused.

Paused resources will not be reconciled by a controller. Use "clusterctl alpha rollout resume" to resume a
paused resource. Currently only MachineDeployments and KubeadmControlPlanes support being paused.`,
			example: `  # Mark the machinedeployment as paused.
  clusterctl alpha rollout pause machinedeployment/my-md-0`,
			action: pause,
		}),
		newSubcommand(streams, deps, now, subcommand{
			use: "resume RESOURCE", verb: "resumed", short: "Resume a cluster-api resource",
			long: `Resume a paused cluster-api resource

Paused resources will not be reconciled by a controller. By resuming a resource, we allow it to be
reconciled again. Currently only MachineDeployments and KubeadmControlPlanes support being resumed.`,
			example: `  # Resume an already paused machinedeployment
  clusterctl alpha rollout resume machinedeployment/my-md-0`,
			action: resume,
		}),
	)
	return cmd
}

type subcommand struct {
	use, verb, short, long, example string
	action                          action
}

func newSubcommand(streams iostreams.Streams, deps *clusterctlcli.Deps, now func() time.Time, s subcommand) *cobra.Command {
	o := &rolloutOptions{}
	cmd := &cobra.Command{
		Use:                   s.use,
		DisableFlagsInUseLine: true,
		Short:                 s.short,
		Long:                  s.long,
		Example:               s.example,
		RunE: func(cmd *cobra.Command, args []string) error {
			resources, err := parseResources(args)
			if err != nil {
				return err
			}
			c, namespace, err := deps.ObjectClient(cmd.Context(), o.kubeconfig, o.namespace)
			if err != nil {
				return err
			}
			for _, r := range resources {
				if err := apply(cmd.Context(), c, namespace, r, s.action, now()); err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "%s %s\n", r.qualified(), s.verb)
			}
			return nil
		},
	}
	f := cmd.Flags()
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "")
	f.StringVarP(&o.namespace, "namespace", "n", "", "Namespace where the resource(s) reside. If unspecified, the current namespace will be used.")
	return cmd
}

// apply reads a resource, lets the action check it and patches it with the action's merge patch.
func apply(ctx context.Context, c client.Client, namespace string, r resource, act action, now time.Time) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.kind.gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r.name}, obj); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%s not found in namespace %s: check the name, or give its namespace with --namespace", r, namespace)
		case meta.IsNoMatchError(err):
			return fmt.Errorf("the management cluster does not serve %s: install Cluster API with clusterctl init, or check --kubeconfig and --kubeconfig-context", r.kind.gvk.GroupKind())
		}
		return fmt.Errorf("reading %s in namespace %s: %w", r, namespace, err)
	}
	patch, err := act(r, obj, now)
	if err != nil {
		return err
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("updating %s in namespace %s: %w", r, namespace, err)
	}
	return nil
}

func paused(r resource, obj *unstructured.Unstructured) bool {
	if r.kind.pausedByAnnotation {
		_, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]
		return ok
	}
	p, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused")
	return p
}

// restart sets spec.rolloutAfter to now, which makes the MachineDeployment or KubeadmControlPlane replace
// its Machines.
func restart(r resource, obj *unstructured.Unstructured, now time.Time) (map[string]any, error) {
	if paused(r, obj) {
		return nil, fmt.Errorf("%s is paused: resume it first with clusterctl alpha rollout resume %s", r, r)
	}
	if after, found, _ := unstructured.NestedString(obj.Object, "spec", "rolloutAfter"); found && after != "" {
		if t, err := time.Parse(time.RFC3339, after); err == nil && t.After(now) {
			return nil, fmt.Errorf("%s already has a rollout scheduled at %s (spec.rolloutAfter): remove spec.rolloutAfter first to restart it now", r, after)
		}
	}
	return map[string]any{"spec": map[string]any{"rolloutAfter": now.UTC().Format(time.RFC3339)}}, nil
}

// pause sets spec.paused (MachineDeployment: its controller stops rolling out changes) or the
// cluster.x-k8s.io/paused annotation (KubeadmControlPlane: its controller stops reconciling it).
func pause(r resource, obj *unstructured.Unstructured, _ time.Time) (map[string]any, error) {
	if paused(r, obj) {
		return nil, fmt.Errorf("%s is already paused", r)
	}
	if r.kind.pausedByAnnotation {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{clusterv1.PausedAnnotation: "true"}}}, nil
	}
	return map[string]any{"spec": map[string]any{"paused": true}}, nil
}

// resume clears spec.paused or removes the cluster.x-k8s.io/paused annotation.
func resume(r resource, obj *unstructured.Unstructured, _ time.Time) (map[string]any, error) {
	if !paused(r, obj) {
		return nil, errors.New(r.String() + " is not paused")
	}
	if r.kind.pausedByAnnotation {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{clusterv1.PausedAnnotation: nil}}}, nil
	}
	return map[string]any{"spec": map[string]any{"paused": false}}, nil
}

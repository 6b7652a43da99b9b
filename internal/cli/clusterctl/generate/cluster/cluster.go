// Package cluster implements `clusterctl generate cluster NAME`: it prints a workload cluster template,
// read from an infrastructure provider's repository (or --from, or --from-config-map), with its variables
// substituted.
package cluster

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	clusterctlcluster "github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/template"
)

type options struct {
	kubeconfig               clusterctlcluster.Kubeconfig
	flavor                   string
	infrastructure           string
	targetNamespace          string
	kubernetesVersion        string
	controlPlaneMachineCount int64
	workerMachineCount       int64
	url                      string
	configMapNamespace       string
	configMapName            string
	configMapKey             string
	listVariables            bool
	outputFile               string
}

// NewCommand returns the `generate cluster` command.
func NewCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "cluster NAME",
		Short: "Generate templates for creating workload clusters",
		Long: `Generate templates for creating workload clusters.

clusterctl ships with a list of known providers; if necessary, edit
$XDG_CONFIG_HOME/cluster-api/clusterctl.yaml to add new providers or to customize existing ones.

Each provider configuration links to a repository; clusterctl uses it to fetch the templates
(cluster-template.yaml, or cluster-template-{flavor}.yaml with --flavor) of new clusters. Templates that
use a ClusterClass get its definition (clusterclass-{name}.yaml) added, unless the ClusterClass is in the
management cluster already.

Variables are read from the environment and from the clusterctl config file; CLUSTER_NAME, NAMESPACE,
KUBERNETES_VERSION, CONTROL_PLANE_MACHINE_COUNT and WORKER_MACHINE_COUNT come from the argument and flags.`,
		Example: `  # Generate a workload cluster using the infrastructure provider installed in the management cluster.
  clusterctl generate cluster my-cluster

  # Use a specific version of the AWS infrastructure provider.
  clusterctl generate cluster my-cluster --infrastructure=aws:v2.8.0

  # Put the cluster in a custom namespace.
  clusterctl generate cluster my-cluster --target-namespace=foo

  # Set the Kubernetes version and the number of machines (if the template supports them).
  clusterctl generate cluster my-cluster --kubernetes-version=v1.31.0 --control-plane-machine-count=3 --worker-machine-count=10

  # Use a template stored in a ConfigMap of the management cluster.
  clusterctl generate cluster my-cluster --from-config-map MyTemplates

  # Use a template from a URL, a local file, or standard input.
  clusterctl generate cluster my-cluster --from https://github.com/foo-org/foo-repository/blob/main/cluster-template.yaml
  clusterctl generate cluster my-cluster --from ~/workspace/cluster-template.yaml
  cat ~/workspace/cluster-template.yaml | clusterctl generate cluster my-cluster --from -

  # List the variables the template expects.
  clusterctl generate cluster my-cluster --infrastructure=aws --list-variables`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("generate cluster takes exactly one argument, the name of the cluster (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args[0], streams, deps)
		},
	}
	f := cmd.Flags()
	clusterctlcli.AddKubeconfigFlags(f, &o.kubeconfig, "")
	f.StringVarP(&o.targetNamespace, "target-namespace", "n", "", "The namespace to use for the workload cluster. If unspecified, the current namespace will be used.")
	f.StringVar(&o.kubernetesVersion, "kubernetes-version", "", "The Kubernetes version to use for the workload cluster. If unspecified, the value from OS environment variables or the $XDG_CONFIG_HOME/cluster-api/clusterctl.yaml config file will be used.")
	f.Int64Var(&o.controlPlaneMachineCount, "control-plane-machine-count", 1, "The number of control plane machines for the workload cluster.")
	f.Int64Var(&o.workerMachineCount, "worker-machine-count", 0, "The number of worker machines for the workload cluster.")
	f.StringVarP(&o.infrastructure, "infrastructure", "i", "", "The infrastructure provider to read the workload cluster template from. If unspecified, the default infrastructure provider will be used.")
	f.StringVarP(&o.flavor, "flavor", "f", "", "The workload cluster template variant to be used when reading from the infrastructure provider repository. If unspecified, the default cluster template will be used.")
	f.StringVar(&o.url, "from", "", "The URL to read the workload cluster template from. If unspecified, the infrastructure provider repository URL will be used. If set to '-', the workload cluster template is read from stdin.")
	f.StringVar(&o.configMapName, "from-config-map", "", "The ConfigMap to read the workload cluster template from. This can be used as alternative to read from the provider repository or from an URL")
	f.StringVar(&o.configMapNamespace, "from-config-map-namespace", "", "The namespace where the ConfigMap exists. If unspecified, the current namespace will be used")
	f.StringVar(&o.configMapKey, "from-config-map-key", "", fmt.Sprintf("The ConfigMap.Data key where the workload cluster template is hosted. If unspecified, %q will be used", client.DefaultConfigMapKey))
	f.BoolVar(&o.listVariables, "list-variables", false, "Returns the list of variables expected by the template instead of the template yaml")
	f.StringVar(&o.outputFile, "write-to", "", "Specify the output file to write the template to, defaults to STDOUT if the flag is not set")
	// The provider contract spells the flag --controlplane-machine-count; accept that spelling too.
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "controlplane-machine-count" {
			name = "control-plane-machine-count"
		}
		return pflag.NormalizedName(name)
	})
	return cmd
}

func (o *options) run(cmd *cobra.Command, name string, streams iostreams.Streams, deps *clusterctlcli.Deps) error {
	ctx, c, err := deps.NewClient(cmd.Context(), streams, clusterctlcli.ClientOptions{
		Kubeconfig: &o.kubeconfig,
	})
	if err != nil {
		return err
	}
	opts := client.ClusterTemplateOptions{
		ClusterName:            name,
		TargetNamespace:        o.targetNamespace,
		KubernetesVersion:      o.kubernetesVersion,
		ListVariablesOnly:      o.listVariables,
		InfrastructureProvider: o.infrastructure,
		Flavor:                 o.flavor,
		URL:                    o.url,
	}
	if cmd.Flags().Changed("control-plane-machine-count") {
		opts.ControlPlaneMachineCount = &o.controlPlaneMachineCount
	}
	if cmd.Flags().Changed("worker-machine-count") {
		opts.WorkerMachineCount = &o.workerMachineCount
	}
	if o.configMapName != "" {
		opts.ConfigMap = &client.ConfigMapSource{Name: o.configMapName, Namespace: o.configMapNamespace, Key: o.configMapKey}
	} else if o.configMapNamespace != "" || o.configMapKey != "" {
		return errors.New("--from-config-map-namespace and --from-config-map-key need --from-config-map")
	}

	tmpl, err := c.ClusterTemplate(ctx, opts)
	if err != nil {
		return err
	}
	if o.listVariables {
		return printVariables(streams.Out, tmpl, opts, c.Config())
	}
	out, err := tmpl.YAML()
	if err != nil {
		return err
	}
	return clusterctlcli.WriteOutput(o.outputFile, out, streams.Out)
}

// printVariables prints the template's variables in upstream's format: required ones, then optional
// ones with the value they will take.
func printVariables(w io.Writer, tmpl *template.Template, opts client.ClusterTemplateOptions, cfg *config.Config) error {
	variables := tmpl.VariableMap()
	var required, optional []string
	values := map[string]string{}
	for name, def := range variables {
		if def != nil {
			v := *def
			if v == "" {
				v = `""`
			} else if !strings.HasPrefix(v, `"`) {
				v = strconv.Quote(v)
			}
			values[name] = v
		}
		// The common variables take the values generate cluster gives them, not the template's defaults.
		switch name {
		case client.ClusterNameVariable:
			values[name] = opts.ClusterName
		case client.NamespaceVariable:
			if opts.TargetNamespace != "" {
				values[name] = opts.TargetNamespace
			} else {
				values[name] = "current Namespace in the KubeConfig file"
			}
		case client.ControlPlaneMachineCountVariable:
			values[name] = countValue(opts.ControlPlaneMachineCount, cfg, name, "1")
		case client.WorkerMachineCountVariable:
			values[name] = countValue(opts.WorkerMachineCount, cfg, name, "0")
		case client.KubernetesVersionVariable:
			if opts.KubernetesVersion != "" {
				values[name] = opts.KubernetesVersion
			} else if v, ok := cfg.Get(name); ok {
				values[name] = v
			}
		}
		if _, ok := values[name]; ok {
			optional = append(optional, name)
		} else {
			required = append(required, name)
		}
	}
	slices.Sort(required)
	slices.Sort(optional)

	var b strings.Builder
	if len(required) > 0 {
		b.WriteString("Required Variables:\n")
		for _, v := range required {
			b.WriteString("  - " + v + "\n")
		}
	}
	if len(optional) > 0 {
		b.WriteString("\nOptional Variables:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.FilterHTML)
		for _, v := range optional {
			_, _ = fmt.Fprintf(tw, "  - %s\t(defaults to %s)\n", v, values[v])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func countValue(flag *int64, cfg *config.Config, name, def string) string {
	if flag != nil {
		return strconv.FormatInt(*flag, 10)
	}
	if v, ok := cfg.Get(name); ok {
		return v
	}
	return def
}

// Package conformance is the `capstan conformance` command: it checks an infrastructure provider's release
// against the Cluster API provider contract with the conformance kit (internal/conformance), the
// provider installed by clusterctl in an embedded management cluster with capstan's core
// (internal/conformance/releasecheck). The command parses and checks its flags and prints the report.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/conformance"
	"github.com/capstan-dev/capstan/internal/conformance/releasecheck"
)

// Options are the flags of `capstan conformance`: those of the check, and how it is shown.
type Options struct {
	releasecheck.Options

	// Executables are IMAGE=PATH pairs: the local runtime runs PATH for containers of IMAGE.
	Executables []string
	Output      string
	Verbosity   int
}

// NewCommand returns `capstan conformance`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Output: "text", Options: releasecheck.Options{KubernetesVersion: "v1.37.1", Timeout: 3 * time.Minute, Quiet: 3 * time.Second}}
	cmd := &cobra.Command{
		Use:   "conformance SOURCE",
		Short: "Check an infrastructure provider's release against the Cluster API provider contract",
		Long: `Check an infrastructure provider's release against the Cluster API provider contract, rule by rule.

SOURCE is a clusterctl local repository (a directory holding infrastructure-<name>/<version>/), a release
directory in the layout of a GitHub release (infrastructure-components.yaml, metadata.yaml,
cluster-template*.yaml, ... side by side, as ` + "`make release`" + ` writes them), or a clusterctl
repository URL (https://github.com/<owner>/<repo>/releases/<version|latest>/infrastructure-components.yaml,
an http(s) or file:// URL of a folder in the local repository layout).

The command starts an embedded management cluster in a temporary directory, installs capstan's core and
the provider with clusterctl init, and runs the conformance kit: it checks the CRDs and the release's
files, then plays Cluster API's core around the provider's InfraCluster and InfraMachine (copies of those
of the cluster template, or of --infra-cluster and --infra-machine) while the provider's Deployment runs.
It prints every rule: Pass, Fail with the reason, Warn, or Skip with why. The exit status is non-zero when
a rule fails.

The embedded cluster runs capstan's image as local processes; a provider's own image needs its manager
built for this machine: --executable <image>=<path>.`,
		Example: `  capstan conformance out/release
  capstan conformance ~/repository --executable ghcr.io/example/cluster-api-provider-foo=./bin/manager
  capstan conformance https://github.com/example/cluster-api-provider-foo/releases/v1.2.0/infrastructure-components.yaml \
      --executable ghcr.io/example/cluster-api-provider-foo=./bin/manager --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Source = args[0]
			return o.Run(cmd.Context(), streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.ProviderName, "provider-name", "", "The provider's clusterctl name; read from the repository's folder or the components' cluster.x-k8s.io/provider label when empty.")
	fs.StringVar(&o.Version, "version", "", "The release to check; the newest of the repository (or metadata.yaml's newest series for a release directory) when empty.")
	fs.StringVar(&o.Flavor, "flavor", "", "The cluster template flavor the InfraCluster and InfraMachine are taken from (cluster-template-<flavor>.yaml).")
	fs.StringVar(&o.InfraCluster, "infra-cluster", "", "A YAML file with the InfraCluster the kit creates copies of, instead of the cluster template's.")
	fs.StringVar(&o.InfraMachine, "infra-machine", "", "A YAML file with the InfraMachine the kit creates copies of, instead of the one of the cluster template's InfraMachineTemplate.")
	fs.StringVar(&o.KubernetesVersion, "kubernetes-version", o.KubernetesVersion, "KUBERNETES_VERSION for the cluster template.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Output format: text or json.")
	fs.StringArrayVar(&o.Executables, "executable", nil, "IMAGE=PATH: run the local executable PATH for containers of IMAGE (without tag), as the image's entrypoint. Repeatable.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long each step waits for the provider, for example for an InfraCluster to be provisioned.")
	fs.DurationVar(&o.Quiet, "quiet", o.Quiet, "How long objects the provider must leave alone are watched.")
	fs.StringVar(&o.Binaries.Etcd, "etcd-path", "", "Path of the etcd executable (looked up next to capstan, in bin/ and on PATH when empty).")
	fs.StringVar(&o.Binaries.KubeAPIServer, "kube-apiserver-path", "", "Path of the kube-apiserver executable.")
	fs.StringVar(&o.Binaries.KubeControllerManager, "kube-controller-manager-path", "", "Path of the kube-controller-manager executable.")
	fs.IntVarP(&o.Verbosity, "v", "v", 0, "Log verbosity: 1 logs each step of the kit, more logs the embedded cluster.")
	return cmd
}

// Run runs the command.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	if o.Output != "text" && o.Output != "json" {
		return fmt.Errorf("invalid --output %q: use text or json", o.Output)
	}
	executables := map[string]string{}
	for _, e := range o.Executables {
		image, path, ok := strings.Cut(e, "=")
		if !ok || image == "" || path == "" {
			return fmt.Errorf("invalid --executable %q: use IMAGE=PATH", e)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("--executable %s: %w", image, err)
		}
		executables[image] = path
	}
	log := zap.New(zap.WriteTo(streams.ErrOut), zap.Level(zapcore.Level(-(o.Verbosity - 1))), zap.ConsoleEncoder())
	if o.Verbosity < 2 {
		log = logr.Discard()
	}
	ctrl.SetLogger(log)
	start := time.Now()
	check := o.Options
	check.ImageExecutables, check.Log = executables, log
	check.Printf = func(format string, args ...any) { fmt.Fprintf(streams.ErrOut, format+"\n", args...) }
	check.Logf = func(format string, args ...any) {
		if o.Verbosity >= 1 {
			fmt.Fprintf(streams.ErrOut, "[%3.0fs] "+format+"\n", append([]any{time.Since(start).Seconds()}, args...)...)
		}
	}
	result, err := releasecheck.Run(ctx, check)
	if err != nil {
		return err
	}
	if err := printReport(streams.Out, o.Output, result.Release, result.Report); err != nil {
		return err
	}
	if failed := result.Report.Failed(); len(failed) > 0 {
		names := make([]string, 0, len(failed))
		for _, f := range failed {
			names = append(names, f.Rule)
		}
		return fmt.Errorf("%d rules failed: %s", len(failed), strings.Join(names, "; "))
	}
	return nil
}

// jsonReport is the --output json document.
type jsonReport struct {
	Provider string       `json:"provider"`
	Version  string       `json:"version"`
	Passed   bool         `json:"passed"`
	Results  []jsonResult `json:"results"`
}

type jsonResult struct {
	Rule      string `json:"rule"`
	Source    string `json:"source"`
	Mandatory bool   `json:"mandatory"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

// printReport writes the report as a table or as JSON.
func printReport(out io.Writer, format string, rel releasecheck.Release, report conformance.Report) error {
	if format == "json" {
		doc := jsonReport{Provider: rel.Label(), Version: rel.Version, Passed: report.Passed(), Results: []jsonResult{}}
		for _, r := range report {
			doc.Results = append(doc.Results, jsonResult{Rule: r.Rule, Source: r.Source, Mandatory: r.Mandatory, Status: string(r.Status), Message: r.Message})
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	counts := map[conformance.Status]int{}
	for _, r := range report {
		counts[r.Status]++
	}
	_, err := fmt.Fprintf(out, "%s\n%s %s: %d passed, %d failed, %d warnings, %d skipped\n", report.String(), rel.Label(), rel.Version,
		counts[conformance.Pass], counts[conformance.Fail], counts[conformance.Warn], counts[conformance.Skip])
	return err
}

// Package clusterctl holds what clusterctl's commands share: the dependencies they take from the outside
// world (environment, HTTP, management cluster, plugins, build information), the root's global options,
// and how a command builds the library client from them. The commands themselves
// live in the packages below this one, each exporting NewCommand(streams, deps).
package clusterctl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/version"
)

// GlobalOptions are the root command's persistent flags.
type GlobalOptions struct {
	// ConfigFile is --config.
	ConfigFile string
	// Verbosity is -v; negative when the flag was not given.
	Verbosity int
}

// Deps are the dependencies of the commands. Tests replace them to run commands against loopback
// servers and temporary directories.
type Deps struct {
	// LookupEnv reads the environment.
	LookupEnv func(string) (string, bool)
	// HTTPClient makes every download and API call, bounded by HTTP; a client of HTTP's limits when nil.
	HTTPClient *http.Client
	// HTTP bounds every download and API call: --http-connect-timeout, --http-timeout and
	// --http-max-response-size.
	HTTP httpclient.Limits
	// Retry is the retry policy of downloads.
	Retry repository.Retry
	// ManagementCluster returns the management cluster of a kubeconfig; nil means commands never consult
	// a management cluster.
	ManagementCluster func(cluster.Kubeconfig) client.ManagementCluster
	// Plugins finds and runs kubectl-style plugins (clusterctl-<name> executables).
	Plugins PluginHandler
	// Version describes the binary.
	Version func() version.Info
	// Options are filled in by the root command's flags.
	Options GlobalOptions

	clientOnce sync.Once
	client     *http.Client
}

// PluginHandler finds and runs plugins.
type PluginHandler interface {
	// Lookup returns the path of the plugin executable clusterctl-<name>, if there is one.
	Lookup(name string) (string, bool)
	// Execute runs a plugin with args; a non-zero exit is returned as an *ExitError.
	Execute(path string, args []string, streams iostreams.Streams) error
}

// ExitError asks main to exit with Code without printing anything (the error was already reported).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// DefaultDeps returns the dependencies of the real binary.
func DefaultDeps() *Deps {
	return &Deps{
		LookupEnv: os.LookupEnv,
		HTTP:      DefaultHTTPLimits,
		Retry:     repository.DefaultRetry,
		ManagementCluster: func(k cluster.Kubeconfig) client.ManagementCluster {
			return cluster.New(k)
		},
		Plugins: ExecPlugins{LookupEnv: os.LookupEnv},
		Version: version.Get,
		Options: GlobalOptions{Verbosity: -1},
	}
}

// DefaultHTTPLimits bound clusterctl's downloads and API calls (repository.DefaultHTTPLimits).
var DefaultHTTPLimits = repository.DefaultHTTPLimits

// Client returns the HTTP client of every download and API call: HTTPClient (or a new client) within
// the limits of HTTP. It is made once.
func (d *Deps) Client() *http.Client {
	d.clientOnce.Do(func() { d.client = httpclient.Bound(d.HTTPClient, d.HTTP) })
	return d.client
}

// Config loads the configuration named by --config.
func (d *Deps) Config(ctx context.Context) (*config.Config, error) {
	return config.Load(ctx, config.LoadOptions{Path: d.Options.ConfigFile, LookupEnv: d.LookupEnv, HTTPClient: d.Client()})
}

// ClientOptions say how to build a client.
type ClientOptions struct {
	// Kubeconfig names the management cluster; nil for commands that never consult one.
	Kubeconfig *cluster.Kubeconfig
}

// NewClient loads the configuration, sets up logging (-v, else CLUSTERCTL_LOG_LEVEL) and returns the
// library client, with a context that carries the logger.
func (d *Deps) NewClient(ctx context.Context, streams iostreams.Streams, o ClientOptions) (context.Context, *client.Client, error) {
	cfg, err := d.Config(ctx)
	if err != nil {
		return ctx, nil, err
	}
	verbosity := d.Options.Verbosity
	if verbosity < 0 {
		verbosity = 0
		if v, ok := cfg.Get(config.LogLevelVariable); ok {
			if n, err := strconv.Atoi(v); err == nil {
				verbosity = n
			}
		}
	}
	ctx = logr.NewContext(ctx, NewLogger(streams.ErrOut, verbosity))

	var mc client.ManagementCluster
	if o.Kubeconfig != nil && d.ManagementCluster != nil {
		mc = d.ManagementCluster(*o.Kubeconfig)
	}
	repos := repository.NewFactory(cfg, repository.WithHTTPClient(d.Client()), repository.WithRetry(d.Retry))
	return ctx, client.New(client.Options{Config: cfg, Repositories: repos, Cluster: mc, Stdin: streams.In}), nil
}

// RunE returns the run of a command that works on the management cluster k with the library client: it
// builds the client as NewClient does, then runs run.
func (d *Deps) RunE(streams iostreams.Streams, k *cluster.Kubeconfig, run func(context.Context, *client.Client) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		ctx, c, err := d.NewClient(cmd.Context(), streams, ClientOptions{Kubeconfig: k})
		if err != nil {
			return err
		}
		return run(ctx, c)
	}
}

// WriteOutput writes data, followed by a newline, to the file path, or to out when path is empty.
func WriteOutput(path string, data []byte, out io.Writer) error {
	data = append(data, '\n')
	if path == "" {
		_, err := out.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

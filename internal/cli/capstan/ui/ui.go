// Package ui is the `capstan ui` command: the web view of a management cluster (package internal/ui).
package ui

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	webui "github.com/capstan-dev/capstan/internal/ui"
)

// Options are the flags of `capstan ui`.
type Options struct {
	Kubeconfig string
	Context    string
	Namespace  string
	Address    string
	TokenFile  string
	NoToken    bool
	Verbosity  int
}

// NewCommand returns `capstan ui`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Address: webui.DefaultAddress}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve a live web view of the management cluster's Clusters",
		Long: `Serve a web view of the management cluster: the list of Clusters, and for each the tree of
` + "`clusterctl describe cluster`" + ` with conditions, events and YAML, its ClusterClass, the versions of its Machines
and its workload cluster's Nodes, updated live from watches. It only reads (get, list, watch) with the
kubeconfig's user, or in-cluster credentials in a Pod.

It listens on loopback (a free port unless --address says otherwise) and asks for a random token: open
the URL it prints. See docs/ui.md for running it in a cluster behind ` + "`kubectl port-forward`.",
		Example: `  # The web view of the management cluster of the current kubeconfig context
  capstan ui

  # On a fixed port, reading one namespace
  capstan ui --address 127.0.0.1:8080 --namespace team-a`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path of the management cluster's kubeconfig ($KUBECONFIG or ~/.kube/config when empty; in-cluster credentials in a Pod).")
	fs.StringVar(&o.Context, "kubeconfig-context", "", "Context of the kubeconfig to use (its current context when empty).")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "Show only this namespace's Clusters (every namespace when empty).")
	fs.StringVar(&o.Address, "address", o.Address, "host:port to listen on; keep a loopback address unless the token and a TLS-terminating proxy protect it.")
	fs.StringVar(&o.TokenFile, "token-file", "", "Read the access token from this file instead of making a random one.")
	fs.BoolVar(&o.NoToken, "no-token", false, "Serve without a token; only on a loopback address (for a Pod reached with `kubectl port-forward`).")
	fs.IntVarP(&o.Verbosity, "v", "v", 0, "Log verbosity.")
	return cmd
}

// Run runs the command until ctx is done or SIGINT/SIGTERM.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	log := zap.New(zap.WriteTo(streams.ErrOut), zap.Level(zapcore.Level(-o.Verbosity)), zap.ConsoleEncoder())
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	token := ""
	if o.TokenFile != "" {
		data, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return fmt.Errorf("reading --token-file: %w", err)
		}
		if token = strings.TrimSpace(string(data)); token == "" {
			return fmt.Errorf("--token-file %s is empty", o.TokenFile)
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ctrl.SetupSignalHandler().Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	s, err := webui.New(webui.Options{Config: cfg, Namespace: o.Namespace, Address: o.Address, Token: token, NoToken: o.NoToken, Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.ErrOut, "Reading the Clusters of %s\n", cfg.Host)
	if err := s.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "Web view: %s\n", s.URL())
	return s.Wait()
}

func (o *Options) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the management cluster's kubeconfig: %w (give it with --kubeconfig)", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "capstan-ui"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// Package up is the `capstan up` command: it runs the embedded management cluster.
package up

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/embedded"
	webui "github.com/capstan-dev/capstan/internal/ui"
)

// Options are the flags of `capstan up`.
type Options struct {
	// StateFlags name the cluster: --name and --state-dir.
	embedded.StateFlags
	Detach            bool
	Binaries          embedded.Binaries
	EtcdUnsafeNoFsync bool
	Operator          bool
	// UI serves the web view (package ui) of the cluster on UIAddress, with a random token.
	UI        bool
	UIAddress string
	Verbosity int
	detached  bool
}

// NewCommand returns `capstan up`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{UIAddress: webui.DefaultAddress}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run an embedded management cluster on this machine",
		Long: `Run an embedded management cluster on this machine: etcd, kube-apiserver and kube-controller-manager as
child processes on loopback, state in ~/.capstan/<name>, and a local runtime that runs capstan's provider
Deployments as local processes, so that clusterctl init, upgrade and delete work as on a real cluster.
It stays in the foreground until Ctrl-C (--detach runs it in the background). Running it again keeps
every object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	fs := cmd.Flags()
	o.AddFlags(fs)
	fs.BoolVar(&o.Detach, "detach", false, "Run in the background; stop it with `capstan down`.")
	fs.StringVar(&o.Binaries.Etcd, "etcd-path", "", "Path of the etcd executable (looked up next to capstan, in bin/ and on PATH when empty).")
	fs.StringVar(&o.Binaries.KubeAPIServer, "kube-apiserver-path", "", "Path of the kube-apiserver executable.")
	fs.StringVar(&o.Binaries.KubeControllerManager, "kube-controller-manager-path", "", "Path of the kube-controller-manager executable.")
	fs.BoolVar(&o.EtcdUnsafeNoFsync, "etcd-unsafe-no-fsync", false, "Do not fsync etcd's writes: faster, but a machine crash may lose the last writes (a crash of the processes loses nothing).")
	fs.BoolVar(&o.Operator, "operator", false, "Also run the provider operator (capstan operator): apply its manifests, so that CoreProvider, InfrastructureProvider, ... objects install providers.")
	fs.BoolVar(&o.UI, "ui", false, "Also serve the web view of the cluster's Clusters (as `capstan ui`) on loopback with a random token, and print its URL (kept in <state-dir>/ui-url while it runs).")
	fs.StringVar(&o.UIAddress, "ui-address", o.UIAddress, "host:port of the web view with --ui (a free loopback port by default).")
	fs.IntVarP(&o.Verbosity, "v", "v", 0, "Log verbosity.")
	fs.BoolVar(&o.detached, "detached-child", false, "Internal: this is the background process of --detach.")
	_ = fs.MarkHidden("detached-child")
	return cmd
}

// Run runs the command.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	state, err := o.State()
	if err != nil {
		return err
	}
	if o.Detach && !o.detached {
		return o.detach(streams, state)
	}
	log := zap.New(zap.WriteTo(streams.ErrOut), zap.Level(zapcore.Level(-o.Verbosity)), zap.ConsoleEncoder())
	ctrl.SetLogger(log)
	ctx, cancel := signalContext(ctx)
	defer cancel()
	upOpts := embedded.UpOptions{
		Name: o.Name, State: state, Binaries: o.Binaries, Out: streams.Out, Log: log,
		EtcdUnsafeNoFsync: o.EtcdUnsafeNoFsync, Operator: o.Operator,
	}
	if o.UI {
		_ = os.Remove(UIURLFile(state))
		defer func() { _ = os.Remove(UIURLFile(state)) }()
		upOpts.Ready = func(cfg *rest.Config) { o.serveUI(ctx, cfg, state, streams, log) }
	}
	return embedded.Up(ctx, upOpts)
}

// UIURLFile is where `capstan up --ui` keeps the web view's URL (with its token) while it runs.
func UIURLFile(state embedded.State) string { return filepath.Join(state.Dir, "ui-url") }

// serveUI starts the web view of the cluster; it stops with ctx. A web view that cannot start is
// logged and leaves the cluster running.
func (o *Options) serveUI(ctx context.Context, cfg *rest.Config, state embedded.State, streams iostreams.Streams, log logr.Logger) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "capstan-ui"
	s, err := webui.New(webui.Options{Config: cfg, Address: o.UIAddress, Log: log.WithName("ui")})
	if err == nil {
		err = s.Start(ctx)
	}
	if err == nil {
		err = os.WriteFile(UIURLFile(state), []byte(s.URL()+"\n"), 0o600)
	}
	if err != nil {
		log.Error(err, "The web view did not start")
		return
	}
	fmt.Fprintf(streams.Out, "Web view: %s\n", s.URL())
}

// signalContext is cancelled on SIGINT or SIGTERM.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-ctrl.SetupSignalHandler().Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// detach starts `capstan up` again as a background process in its own session and returns once the
// cluster answers, or with the end of its log when it fails.
func (o *Options) detach(streams iostreams.Streams, state embedded.State) error {
	if pid, err := state.RunningPid(); err == nil {
		return fmt.Errorf("capstan up is already running for %s (pid %d)", state.Dir, pid)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(state.LogDir(), 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(state.LogDir(), "capstan.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	args := []string{"up", "--detached-child", "--name", o.Name, "--state-dir", state.Dir, fmt.Sprintf("--v=%d", o.Verbosity)}
	if o.Binaries.Etcd != "" {
		args = append(args, "--etcd-path", o.Binaries.Etcd)
	}
	if o.Binaries.KubeAPIServer != "" {
		args = append(args, "--kube-apiserver-path", o.Binaries.KubeAPIServer)
	}
	if o.Binaries.KubeControllerManager != "" {
		args = append(args, "--kube-controller-manager-path", o.Binaries.KubeControllerManager)
	}
	if o.Operator {
		args = append(args, "--operator")
	}
	if o.EtcdUnsafeNoFsync {
		args = append(args, "--etcd-unsafe-no-fsync")
	}
	if o.UI {
		args = append(args, "--ui", "--ui-address", o.UIAddress)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting capstan up in the background: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	fmt.Fprintf(streams.ErrOut, "Starting the management cluster %q in the background (log: %s)\n", o.Name, logPath)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("capstan up exited (%w); end of %s:\n%s", err, logPath, embedded.TailLog(logPath, 15, ""))
		case <-time.After(250 * time.Millisecond):
		}
		if pid, err := state.RunningPid(); err == nil && pid == cmd.Process.Pid && embedded.Ready(context.Background(), state) == nil {
			url, uiErr := os.ReadFile(UIURLFile(state))
			if o.UI && uiErr != nil && time.Now().Before(deadline) {
				continue // the web view starts once the cluster answers
			}
			ports, err := state.LoadPorts()
			if err != nil {
				return err
			}
			embedded.PrintInstructions(streams.Out, o.Name, state, ports, false)
			if o.UI && uiErr == nil {
				fmt.Fprintf(streams.Out, "Web view: %s", url)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the management cluster did not start within 3 minutes; see " + logPath)
		}
	}
}

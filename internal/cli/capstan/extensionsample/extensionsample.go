// Package extensionsample is the `capstan extension-sample` command: the sample Runtime Extension of
// package pkg/extension/sample, served over HTTPS, to run as a Deployment behind a Service.
package extensionsample

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/pkg/extension"
	"github.com/capstan-dev/capstan/pkg/extension/sample"
)

// Options are the flags of `capstan extension-sample`.
type Options struct {
	Host    string
	Port    int
	CertDir string
	// HealthAddr serves /healthz and /readyz over HTTP when set (the embedded cluster's runtime and
	// kubelet probes read them).
	HealthAddr string
	Zap        zap.Options
}

// NewCommand returns `capstan extension-sample`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{Host: localnet.ListenHost(), Port: 9443, CertDir: "/tmp/k8s-webhook-server/serving-certs"}
	cmd := &cobra.Command{
		Use:   "extension-sample",
		Short: "Run the sample Runtime Extension (lifecycle hooks held by annotations, an upgrade plan, a GeneratePatches handler)",
		Long: "Run the sample Runtime Extension: BeforeClusterCreate, BeforeClusterUpgrade, BeforeControlPlaneUpgrade, " +
			"BeforeWorkersUpgrade, AfterWorkersUpgrade and BeforeClusterDelete hold their operation while the Cluster has the " +
			"extension-sample.capstan.dev/hold-create, hold-upgrade, hold-control-plane-upgrade, hold-workers-upgrade, " +
			"hold-after-workers-upgrade or hold-delete annotation; GenerateUpgradePlan steps the control plane through the .0 " +
			"release of every minor up to the target; GeneratePatches echoes the sampleBanner variable in the kubeadm templates' " +
			"preKubeadmCommands. It serves HTTPS with tls.crt and tls.key of --webhook-cert-dir.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := zap.New(zap.UseFlagOptions(&o.Zap), zap.WriteTo(streams.ErrOut))
			ctrl.SetLogger(log)
			srv := extension.NewServer(extension.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir, Logger: log})
			if err := sample.Register(srv); err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			if o.HealthAddr != "" {
				if err := serveHealth(ctx, o.HealthAddr); err != nil {
					return err
				}
			}
			return srv.Start(ctx)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Host, "webhook-host", o.Host, "Address the Runtime Extension server listens on; every address when empty (what a Pod needs), 127.0.0.1 in the embedded management cluster (capstan up).")
	fs.IntVar(&o.Port, "webhook-port", o.Port, "Port the Runtime Extension server listens on.")
	fs.StringVar(&o.CertDir, "webhook-cert-dir", o.CertDir, "Directory with the serving certificate and key, tls.crt and tls.key.")
	fs.StringVar(&o.HealthAddr, "health-addr", "", "Address to serve /healthz and /readyz on over HTTP (for example :9440); none when empty.")
	zfs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.Zap.BindFlags(zfs)
	fs.AddGoFlagSet(zfs)
	cmd.AddCommand(newCertificateCommand(streams))
	return cmd
}

// serveHealth answers /healthz and /readyz with 200 until ctx is done.
func serveHealth(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--health-addr: %w", err)
	}
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}

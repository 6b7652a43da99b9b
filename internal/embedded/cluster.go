package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

// Binaries are the paths of the executables the cluster runs; empty paths are looked up with
// binaries.Find.
type Binaries struct {
	Etcd, KubeAPIServer, KubeControllerManager string
}

func (b Binaries) resolve() (Binaries, error) {
	var err error
	if b.Etcd, err = binaries.Find("etcd", b.Etcd); err != nil {
		return b, err
	}
	if b.KubeAPIServer, err = binaries.Find("kube-apiserver", b.KubeAPIServer); err != nil {
		return b, err
	}
	if b.KubeControllerManager, err = binaries.Find("kube-controller-manager", b.KubeControllerManager); err != nil {
		return b, err
	}
	return b, nil
}

// Cluster is a running embedded management cluster.
type Cluster struct {
	Name  string
	State State
	Ports Ports
	// Processes are etcd, kube-apiserver and kube-controller-manager, in start order.
	Processes []*supervisor.Process
	log       logr.Logger
	stopProxy func()
}

// StartOptions tune Start.
type StartOptions struct {
	Binaries Binaries
	Log      logr.Logger
	// EtcdUnsafeNoFsync trades durability on machine crashes for speed (tests); process crashes lose nothing.
	EtcdUnsafeNoFsync bool
	// ReadyTimeout bounds the wait for the API server; two minutes when zero.
	ReadyTimeout time.Duration
}

// Start starts etcd, kube-apiserver and kube-controller-manager for the state directory and waits until the
// API server answers. The processes stop when ctx is done or Stop is called.
func Start(ctx context.Context, name string, state State, o StartOptions) (*Cluster, error) {
	bins, err := o.Binaries.resolve()
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{state.Dir, state.EtcdDir(), state.LogDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	if _, err := state.certificates(); err != nil {
		return nil, fmt.Errorf("preparing certificates: %w", err)
	}
	ports, err := state.LoadOrAllocatePorts()
	if err != nil {
		return nil, err
	}
	if err := state.writeKubeconfig(state.Kubeconfig(), "capstan-"+name, adminName, ports.APIServer); err != nil {
		return nil, fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	kcmKubeconfig := filepath.Join(state.PKIDir(), "kube-controller-manager.kubeconfig")
	if err := state.writeKubeconfig(kcmKubeconfig, "capstan", controllerName, ports.APIServer); err != nil {
		return nil, err
	}

	egressConfig, stopProxy, err := startEgressProxy(ctx, state)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, State: state, Ports: ports, log: o.Log, stopProxy: stopProxy}
	sopts := supervisor.Options{Log: o.Log}
	start := func(spec supervisor.Spec) error {
		p, err := supervisor.Start(ctx, spec, sopts)
		if err != nil {
			return err
		}
		c.Processes = append(c.Processes, p)
		return nil
	}

	// etcd serves TLS on loopback and only accepts clients with a certificate of its own CA (mTLS).
	etcdClient := fmt.Sprintf("https://127.0.0.1:%d", ports.EtcdClient)
	etcdPeer := fmt.Sprintf("https://127.0.0.1:%d", ports.EtcdPeer)
	etcdArgs := []string{
		"--name=capstan", "--data-dir=" + state.EtcdDir(),
		"--listen-client-urls=" + etcdClient, "--advertise-client-urls=" + etcdClient,
		"--listen-peer-urls=" + etcdPeer, "--initial-advertise-peer-urls=" + etcdPeer,
		"--initial-cluster=capstan=" + etcdPeer,
		"--cert-file=" + state.certFile(etcdServerName), "--key-file=" + state.keyFile(etcdServerName),
		"--client-cert-auth=true", "--trusted-ca-file=" + state.certFile(etcdCAName),
		"--peer-cert-file=" + state.certFile(etcdPeerName), "--peer-key-file=" + state.keyFile(etcdPeerName),
		"--peer-client-cert-auth=true", "--peer-trusted-ca-file=" + state.certFile(etcdCAName),
		"--auto-compaction-mode=periodic", "--auto-compaction-retention=1h",
		"--log-level=warn",
	}
	if o.EtcdUnsafeNoFsync {
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	pkiDir := state.PKIDir()
	err = start(supervisor.Spec{Name: "etcd", Path: bins.Etcd, Args: etcdArgs, LogFile: filepath.Join(state.LogDir(), "etcd.log")})
	if err == nil {
		err = start(supervisor.Spec{Name: "kube-apiserver", Path: bins.KubeAPIServer, LogFile: filepath.Join(state.LogDir(), "kube-apiserver.log"), Args: []string{
			"--etcd-servers=" + etcdClient,
			"--etcd-cafile=" + state.certFile(etcdCAName),
			"--etcd-certfile=" + state.certFile(apiServerEtcdName), "--etcd-keyfile=" + state.keyFile(apiServerEtcdName),
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports.APIServer),
			"--tls-cert-file=" + state.certFile(apiServerName), "--tls-private-key-file=" + state.keyFile(apiServerName),
			"--client-ca-file=" + state.certFile(caName),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + filepath.Join(pkiDir, saPubFile),
			"--service-account-signing-key-file=" + filepath.Join(pkiDir, saKeyFile),
			"--service-cluster-ip-range=10.96.0.0/12",
			"--authorization-mode=RBAC",
			"--allow-privileged=true",
			// The kubernetes Service would point at 127.0.0.1, which the endpoint reconciler rejects.
			"--endpoint-reconciler-type=none",
			// Webhooks, conversion webhooks and aggregated APIs are called through the EndpointSlices of their
			// Service, which the local runtime writes, and the egress proxy to its pod network.
			"--enable-aggregator-routing=true",
			"--egress-selector-config-file=" + egressConfig,
			"--cert-dir=" + filepath.Join(pkiDir, "generated"),
			// Custom resources served in CBOR to the clients that ask for it (capstan's do, see package
			// cborclient) and stored in CBOR; a server without the feature still reads them.
			"--feature-gates=CBORServingAndStorage=true",
			"--v=1",
		}})
	}
	if err == nil {
		err = start(supervisor.Spec{Name: "kube-controller-manager", Path: bins.KubeControllerManager, LogFile: filepath.Join(state.LogDir(), "kube-controller-manager.log"), Args: []string{
			"--kubeconfig=" + kcmKubeconfig,
			"--authentication-kubeconfig=" + kcmKubeconfig, "--authorization-kubeconfig=" + kcmKubeconfig,
			"--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller",
			"--root-ca-file=" + state.certFile(caName),
			"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false",
			"--v=1",
		}})
	}
	if err != nil {
		c.Stop()
		return nil, err
	}

	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if err := c.waitReady(ctx, timeout); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// RESTConfig returns an administrator's configuration for the cluster.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.State.Kubeconfig())
}

// Stop stops the processes in reverse start order, then the egress proxy.
func (c *Cluster) Stop() {
	for i := len(c.Processes) - 1; i >= 0; i-- {
		c.Processes[i].Stop()
	}
	if c.stopProxy != nil {
		c.stopProxy()
	}
}

// waitReady polls /readyz until it answers ok.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return err
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if tlsConfig.RootCAs == nil {
		tlsConfig.RootCAs = x509.NewCertPool()
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	deadline := time.Now().Add(timeout)
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("the API server did not become ready within %s (last answer: %s); see the logs in %s%s",
				timeout, last, c.State.LogDir(), c.exitSummary())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// exitSummary describes the processes that have exited, with the end of their logs, for error messages.
func (c *Cluster) exitSummary() string {
	var out string
	for _, p := range c.Processes {
		if p.LastExit() == nil {
			continue
		}
		out += fmt.Sprintf("\n%s exited (%v), restarted %d times; last log lines:\n%s", p.Name(), p.LastExit(), p.Starts()-1,
			TailLog(filepath.Join(c.State.LogDir(), p.Name()+".log"), 5, "  "))
	}
	return out
}

// TailLog returns the last n lines of the log file at path, each after indent, for error messages;
// "(no log)" after indent when the file cannot be read.
func TailLog(path string, n int, indent string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return indent + "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return indent + strings.Join(lines, "\n"+indent)
}

package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/supervisor"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/stallproxy"
)

// harness is one embedded management cluster: `capstan up` run as a child of the test (it dies with the
// test, and its processes with it), with capstan's providers installed by `clusterctl init`.
type harness struct {
	name                string
	capstan, clusterctl string
	state               embedded.State
	logPath             string

	up     *exec.Cmd
	exited chan struct{}

	cfg    *rest.Config
	client client.Client
	// proxy, when set, stands between the managers and the management API server (see stall).
	proxy *stallproxy.Proxy
}

// manager is one of the providers' managers, run by the local runtime as its Deployment.
type manager struct {
	// name is how the reports call it; subcommand the capstan subcommand its Deployment runs.
	name, subcommand string
}

var managers = []manager{
	{name: "core manager", subcommand: "manager"},
	{name: "bootstrap manager", subcommand: "bootstrap-kubeadm"},
	{name: "control plane manager", subcommand: "controlplane-kubeadm"},
	{name: "local provider manager", subcommand: "infra-local"},
}

// buildBinaries builds capstan and clusterctl into dir.
func buildBinaries(dir string) (capstan, clusterctl string, err error) {
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/capstan-dev/capstan/cmd/capstan", "github.com/capstan-dev/capstan/cmd/clusterctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building capstan and clusterctl: %w\n%s", err, out)
	}
	return filepath.Join(dir, "capstan"), filepath.Join(dir, "clusterctl"), nil
}

// root is the directory of the suite's management clusters.
func (h *harness) root() string { return filepath.Dir(h.state.Dir) }

func newHarness(root, name, capstan, clusterctl string) *harness {
	return &harness{name: name, capstan: capstan, clusterctl: clusterctl,
		state: embedded.State{Dir: filepath.Join(root, name)}, logPath: filepath.Join(root, name+"-up.log")}
}

// start runs `capstan up` and waits until its API server answers.
func (h *harness) start() error {
	logFile, err := os.OpenFile(h.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	fmt.Fprintf(logFile, "--- %s capstan up\n", time.Now().Format(time.RFC3339))
	cmd := exec.Command(h.capstan, "up", "--name", h.name, "--state-dir", h.state.Dir, "--etcd-unsafe-no-fsync")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := supervisor.StartChild(cmd); err != nil {
		return fmt.Errorf("starting capstan up: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	h.up, h.exited = cmd, exited
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-exited:
			return fmt.Errorf("capstan up exited; end of %s:\n%s", h.logPath, tailFile(h.logPath, 20))
		case <-time.After(250 * time.Millisecond):
		}
		if pid, err := h.state.RunningPid(); err == nil && pid == cmd.Process.Pid && embedded.Ready(context.Background(), h.state) == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("capstan up did not answer within 3 minutes; end of %s:\n%s", h.logPath, tailFile(h.logPath, 20))
		}
	}
	if h.cfg, err = clientcmd.BuildConfigFromFlags("", h.state.Kubeconfig()); err != nil {
		return err
	}
	h.cfg.QPS, h.cfg.Burst = 50, 100
	h.client, err = newClient(h.cfg)
	return err
}

func newClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := core.NewScheme()
	if err != nil {
		return nil, err
	}
	for _, add := range []func(*runtime.Scheme) error{bootstrapv1.AddToScheme, controlplanev1.AddToScheme, infrav1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// initProviders runs clusterctl init with capstan's providers.
func (h *harness) initProviders() error {
	cmd := exec.Command(h.clusterctl, "init", "--config", h.state.ClusterctlConfig(), "--infrastructure", "local", "--wait-providers")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.state.Kubeconfig())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("clusterctl init: %w\n%s", err, out)
	}
	return nil
}

// down runs `capstan down` and waits for capstan up to exit.
func (h *harness) down() error {
	cmd := exec.Command(h.capstan, "down", "--name", h.name, "--state-dir", h.state.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("capstan down: %w\n%s", err, out)
	}
	select {
	case <-h.exited:
	case <-time.After(time.Minute):
		return errors.New("capstan up did not exit after capstan down")
	}
	h.up = nil
	return nil
}

// kill kills capstan up with SIGKILL and waits until none of its processes is left.
func (h *harness) kill() error {
	if h.up == nil {
		return nil
	}
	pid := h.up.Process.Pid
	all := append(procs.Descendants(pid), pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	<-h.exited
	h.up = nil
	return waitGone(all, time.Minute)
}

// stop stops capstan up for good: down, or a kill when down fails.
func (h *harness) stop() {
	if h.up == nil {
		return
	}
	if err := h.down(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v; killing capstan up\n", err)
		_ = h.kill()
	}
}

// waitGone waits until none of pids runs.
func waitGone(pids []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, p := range pids {
			if procs.Alive(p) {
				left = append(left, fmt.Sprintf("%d (%s)", p, procs.Cmdline(p)))
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still running: %s", strings.Join(left, ", "))
		}
		// Polled until the deadline.
		time.Sleep(100 * time.Millisecond)
	}
}

// pids returns the processes of capstan up (its descendants) for which match is true, given their
// arguments.
func (h *harness) pids(match func(args []string) bool) []int {
	if h.up == nil {
		return nil
	}
	var out []int
	for _, p := range procs.Descendants(h.up.Process.Pid) {
		if args := strings.Fields(procs.Cmdline(p)); len(args) > 0 && match(args) {
			out = append(out, p)
		}
	}
	return out
}

// managerPids returns the processes of a manager.
func (h *harness) managerPids(m manager) []int {
	return h.pids(func(args []string) bool {
		return filepath.Base(args[0]) == "capstan" && len(args) > 1 && args[1] == m.subcommand
	})
}

// apiServerPids and etcdPids return the management cluster's own kube-apiserver and etcd.
func (h *harness) apiServerPids() []int {
	dir := "--cert-dir=" + filepath.Join(h.state.PKIDir(), "generated")
	return h.pids(func(args []string) bool {
		return filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, dir)
	})
}

func (h *harness) etcdPids() []int {
	dir := "--data-dir=" + h.state.EtcdDir()
	return h.pids(func(args []string) bool { return filepath.Base(args[0]) == "etcd" && slices.Contains(args, dir) })
}

// deployment returns the Deployment that runs a manager.
func (h *harness) deployment(ctx context.Context, m manager) (*appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := h.client.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		d := &list.Items[i]
		if cs := d.Spec.Template.Spec.Containers; len(cs) == 1 && len(cs[0].Args) > 0 && cs[0].Args[0] == m.subcommand {
			return d, nil
		}
	}
	return nil, fmt.Errorf("no Deployment runs capstan %s", m.subcommand)
}

// waitManagerReady waits until a manager runs one process other than those of before and its Deployment
// reports it ready.
func (h *harness) waitManagerReady(ctx context.Context, m manager, before []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		now := h.managerPids(m)
		if len(now) == 1 && !slices.Contains(before, now[0]) {
			if d, err := h.deployment(ctx, m); err == nil && d.Status.ReadyReplicas == 1 && d.Status.ObservedGeneration == d.Generation {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the %s did not run again within %s (processes %v, before %v)", m.name, timeout, now, before)
		}
		// Polled until the deadline.
		time.Sleep(250 * time.Millisecond)
	}
}

// waitAPIServer waits until the management API server answers again, from a process other than before.
func (h *harness) waitAPIServer(before []int, pidsOf func() []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		now := pidsOf()
		if len(now) == 1 && !slices.Contains(before, now[0]) && embedded.Ready(context.Background(), h.state) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the management cluster did not answer again within %s", timeout)
		}
		// Polled until the deadline.
		time.Sleep(250 * time.Millisecond)
	}
}

// runtimeKubeconfig is the kubeconfig the local runtime gives a Deployment's processes.
func (h *harness) runtimeKubeconfig(d *appsv1.Deployment) string {
	return filepath.Join(h.state.RuntimeDir(), d.Namespace, d.Name, "kubeconfig")
}

// routeThroughProxy makes every manager reach the management API server through h.proxy: a kubeconfig
// like the runtime's with the proxy's address, given to the manager with --kubeconfig (its Deployment
// changes, so the runtime starts a new process).
func (h *harness) routeThroughProxy(ctx context.Context) error {
	for _, m := range managers {
		d, err := h.deployment(ctx, m)
		if err != nil {
			return err
		}
		cfg, err := clientcmd.LoadFromFile(h.runtimeKubeconfig(d))
		if err != nil {
			return err
		}
		for _, c := range cfg.Clusters {
			c.Server = "https://" + h.proxy.Addr()
		}
		path := filepath.Join(filepath.Dir(h.runtimeKubeconfig(d)), "chaos-kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return err
		}
		flag := "--kubeconfig=" + path
		if slices.Contains(d.Spec.Template.Spec.Containers[0].Args, flag) {
			continue
		}
		before := h.managerPids(m)
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Args = append(d.Spec.Template.Spec.Containers[0].Args, flag)
		if err := h.client.Patch(ctx, d, patch); err != nil {
			return err
		}
		if err := h.waitManagerReady(ctx, m, before, 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

func tailFile(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// key is a shorthand for an object key.
func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

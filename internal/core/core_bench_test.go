package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/cborclient"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/builder"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/netcount"
	"github.com/capstan-dev/capstan/internal/test/procstat"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// BenchmarkClustersToRunning measures how long 200 Clusters, each with one MachineDeployment of 2
// replicas, take from creation until all 400 Machines are Running, and what that costs per Machine: the
// core's writes to the management API server by verb (issue 21's target: at most 12), the CPU seconds of the
// core's process, of the management kube-apiserver and of its etcd, and the bytes the API server received
// from and sent to the core and the test provider. It starts its own management and workload API servers;
// the core controllers run in a process of their own, as `capstan manager` does (the test binary run again,
// see runCoreIfChild), the test provider in the benchmark's process. It logs the core's writes by resource.
// CAPSTAN_BENCH_CLUSTERS changes the number of Clusters (for a quick look); CAPSTAN_BENCH_WRITES=1 prints
// every write's body.
func BenchmarkClustersToRunning(b *testing.B) {
	clusters, replicas := 200, 2
	if n, err := strconv.Atoi(os.Getenv("CAPSTAN_BENCH_CLUSTERS")); err == nil && n > 0 {
		clusters = n
	}
	machines := clusters * replicas
	g := NewWithT(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		envs, err := envtest.StartAll(envtest.Options{CRDs: builder.CRDs()}, envtest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		mgmt, wl := envs[0], envs[1]
		apiserverPid, etcdPid, err := mgmt.Pids()
		if err != nil {
			envtest.StopAll(envs)
			b.Fatal(err)
		}
		coreProc := startCoreProcess(b, mgmt)
		// The test provider, counted as the core is, by its own user agent.
		provider, wire := apicount.New(), netcount.New()
		cfg := rest.CopyConfig(mgmt.Config)
		cfg.Wrap(provider.Wrap)
		cfg.Dial = wire.Dial
		providerCtx, stopProvider := context.WithCancel(ctx)
		s, err := stack.Start(providerCtx, cfg, stack.Options{Workload: wl.Config, WithoutCore: true})
		if err != nil {
			stopProvider()
			envtest.StopAll(envs)
			b.Fatal(err)
		}
		ns := mgmt.NewNamespace(b)
		b.StartTimer()

		before, providerBefore, wireBefore := coreProc.counts(b), provider.Snapshot(), wire.Bytes()
		usage0 := usageOf(b, map[string]int{"core": coreProc.pid(), "apiserver": apiserverPid, "etcd": etcdPid})
		start := time.Now()
		var wg sync.WaitGroup
		names := make(chan string)
		for w := 0; w < 10; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for name := range names {
					newClusterIn(ctx, g, mgmt.Client, ns, name, int32(replicas))
				}
			}()
		}
		for c := 0; c < clusters; c++ {
			names <- fmt.Sprintf("bench-%03d", c)
		}
		close(names)
		wg.Wait()
		created := time.Since(start)

		// From the test provider's cache, which watches the Machines anyway: a list from the API server every
		// second would add its encoding of every Machine to the API server's figures.
		g.Eventually(func(g Gomega) {
			list := &clusterv1.MachineList{}
			g.Expect(s.Manager.GetCache().List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(running(list.Items)).To(Equal(machines))
		}, 30*time.Minute, time.Second).Should(Succeed())
		elapsed := time.Since(start)
		b.StopTimer()
		after := coreProc.counts(b)
		usage := usageOf(b, map[string]int{"core": coreProc.pid(), "apiserver": apiserverPid, "etcd": etcdPid})
		counts := after.Requests.Since(before.Requests)
		for k, n := range provider.Snapshot().Since(providerBefore) {
			counts[k] += n
		}
		bytes := after.Bytes.Since(before.Bytes)
		providerBytes := wire.Bytes().Since(wireBefore)
		bytes.Sent += providerBytes.Sent
		bytes.Received += providerBytes.Received

		b.ReportMetric(elapsed.Seconds(), "s/"+strconv.Itoa(clusters)+"-clusters")
		b.ReportMetric(created.Seconds(), "s-to-create")
		b.ReportMetric(float64(machines)/elapsed.Seconds(), "machines/s")
		reportWrites(b, counts, machines)
		for _, name := range []string{"core", "apiserver", "etcd"} {
			b.ReportMetric((usage[name].CPUSeconds-usage0[name].CPUSeconds)/float64(machines), name+"-cpu-s/machine")
		}
		b.ReportMetric(float64(bytes.Sent)/1024/float64(machines), "apiserver-KiB-received/machine")
		b.ReportMetric(float64(bytes.Received)/1024/float64(machines), "apiserver-KiB-sent/machine")
		b.Logf("the management API server's responses to the core, by media type: %v", after.MediaTypes)

		stopProvider()
		if err := s.Wait(); err != nil {
			b.Errorf("the test provider: %v", err)
		}
		coreProc.stop(b)
		envtest.StopAll(envs)
	}
}

func usageOf(b *testing.B, pids map[string]int) map[string]procstat.Usage {
	b.Helper()
	out := map[string]procstat.Usage{}
	for name, pid := range pids {
		u, err := procstat.Of(pid)
		if err != nil {
			b.Fatal(fmt.Errorf("the %s's process: %w", name, err))
		}
		out[name] = u
	}
	return out
}

// reportWrites reports the core's writes per Machine, in all and by verb, and the test provider's, and
// logs the core's writes by resource.
func reportWrites(b *testing.B, counts apicount.Counts, machines int) {
	perMachine := func(match func(apicount.Key) bool) float64 { return float64(counts.Sum(match)) / float64(machines) }
	core := func(k apicount.Key) bool { return k.Agent != stack.ProviderUserAgent }
	b.ReportMetric(perMachine(func(k apicount.Key) bool { return core(k) && apicount.IsWrite(k.Verb) }), "core-writes/machine")
	for _, verb := range []string{http.MethodPatch, http.MethodPost, http.MethodPut} {
		b.ReportMetric(perMachine(func(k apicount.Key) bool { return core(k) && k.Verb == verb }), "core-"+verb+"/machine")
	}
	b.ReportMetric(perMachine(func(k apicount.Key) bool { return !core(k) && apicount.IsWrite(k.Verb) }), "provider-writes/machine")
	writes := apicount.Counts{}
	for k, n := range counts {
		if core(k) && apicount.IsWrite(k.Verb) {
			writes[k] = n
		}
	}
	b.Logf("the core's writes to the management API server for %d Machines:\n%s", machines, writes)
}

// printWrite prints a write's body (CAPSTAN_BENCH_WRITES=1).
func printWrite(k apicount.Key, path string, body []byte) {
	fmt.Fprintf(os.Stderr, "WRITE %s %s %s %s\n", k.Agent, k.Verb, path, body)
}

// The environment of the core's process that BenchmarkClustersToRunning starts: the management cluster's
// kubeconfig, and the unix socket on which the process says what it counted.
const (
	coreKubeconfigEnv = "CAPSTAN_BENCH_CORE_KUBECONFIG"
	coreSocketEnv     = "CAPSTAN_BENCH_CORE_SOCKET"
)

// coreCounts are what the core's process counted: its requests to the management API server, the bytes of
// its connections to it and the media types of the responses.
type coreCounts struct {
	Requests   apicount.Counts
	Bytes      netcount.Bytes
	MediaTypes map[string]int
}

// coreCountsWire is coreCounts as JSON (a map keyed by a struct is not).
type coreCountsWire struct {
	Requests []struct {
		Key   apicount.Key
		Count int
	}
	Bytes      netcount.Bytes
	MediaTypes map[string]int
}

// runCoreIfChild must be called first in TestMain: in the process that startCoreProcess starts (the test
// binary again), it runs the core controllers as `capstan manager` does (the same manager options, cache,
// client and controllers, without webhooks, health and diagnostics endpoints), counting its requests, until
// SIGTERM, and exits; otherwise it returns at once.
func runCoreIfChild() {
	kubeconfig := os.Getenv(coreKubeconfigEnv)
	if kubeconfig == "" {
		return
	}
	if err := runCore(kubeconfig, os.Getenv(coreSocketEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "the core's process: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runCore(kubeconfig, sock string) error {
	cborclient.Enable() // as capstan's main does
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	o := controllermanager.DefaultOptions("capi-controller-manager")
	o.Kubeconfig, o.HealthAddr, o.DiagnosticsAddress = kubeconfig, "0", "0"
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	requests, wire := apicount.New(), netcount.New()
	if os.Getenv("CAPSTAN_BENCH_WRITES") != "" {
		requests.Bodies = printWrite
	}
	cfg.Wrap(requests.Wrap)
	cfg.Dial = wire.Dial
	scheme, err := core.NewScheme()
	if err != nil {
		return err
	}
	mgr, err := o.New(cfg, scheme)
	if err != nil {
		return err
	}
	if err := core.Setup(ctx, mgr, core.Options{Concurrency: core.DefaultConcurrency(), FeatureGates: o.FeatureGates}); err != nil {
		return err
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		out := coreCountsWire{Bytes: wire.Bytes(), MediaTypes: requests.MediaTypes()}
		for k, n := range requests.Snapshot() {
			out.Requests = append(out.Requests, struct {
				Key   apicount.Key
				Count int
			}{k, n})
		}
		_ = json.NewEncoder(w).Encode(out)
	})}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()
	return mgr.Start(ctx)
}

// coreProcess is the core's process that startCoreProcess started.
type coreProcess struct {
	cmd    *exec.Cmd
	client *http.Client
	exited chan error
}

// startCoreProcess starts the core's process against env (see runCoreIfChild); it is killed if this process
// dies first.
func startCoreProcess(b *testing.B, env *envtest.Environment) *coreProcess {
	b.Helper()
	// A short directory: a unix socket's path is limited to 107 bytes.
	dir, err := os.MkdirTemp("", "capstan-core-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "core.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$") //nolint:gosec // the test binary itself.
	cmd.Env = append(os.Environ(), coreKubeconfigEnv+"="+env.KubeconfigFile(b, "default"), coreSocketEnv+"="+sock)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(fmt.Errorf("starting the core's process: %w", err))
	}
	p := &coreProcess{cmd: cmd, exited: make(chan error, 1), client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}}
	go func() { p.exited <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := p.read(); err == nil {
			return p
		} else if time.Now().After(deadline) {
			p.stop(b)
			b.Fatal(fmt.Errorf("the core's process does not answer on %s after 2 minutes: %w", sock, err))
		}
		select {
		case err := <-p.exited:
			b.Fatal(fmt.Errorf("the core's process exited: %w", err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *coreProcess) pid() int { return p.cmd.Process.Pid }

func (p *coreProcess) read() (coreCounts, error) {
	resp, err := p.client.Get("http://core/counts")
	if err != nil {
		return coreCounts{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	var in coreCountsWire
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		return coreCounts{}, err
	}
	out := coreCounts{Requests: apicount.Counts{}, Bytes: in.Bytes, MediaTypes: in.MediaTypes}
	for _, r := range in.Requests {
		out.Requests[r.Key] = r.Count
	}
	return out, nil
}

func (p *coreProcess) counts(b *testing.B) coreCounts {
	b.Helper()
	c, err := p.read()
	if err != nil {
		b.Fatal(fmt.Errorf("reading the core's counts: %w", err))
	}
	return c
}

func (p *coreProcess) stop(b *testing.B) {
	b.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			b.Errorf("the core's process: %v", err)
		}
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		b.Errorf("the core's process did not stop within a minute of SIGTERM: killed")
	}
}

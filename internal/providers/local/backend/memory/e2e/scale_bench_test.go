package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/netcount"
	"github.com/capstan-dev/capstan/internal/test/procstat"
	"github.com/capstan-dev/capstan/internal/test/remotebackend"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkScale is `make bench-scale`: N clusters (CAPSTAN_BENCH_N, default 1000) of one
// KubeadmControlPlane Machine and one worker, from the default flavor (or with CAPSTAN_BENCH_CLUSTERCLASS=1
// the ClusterClass "local" and the topology flavor), created C at a time
// (CAPSTAN_BENCH_C, default 50) with the core, the kubeadm providers and the local provider in this
// process (the managers' process), against a real management API server. The local provider's memory
// backend — the fake workload clusters — runs in a child process (see package remotebackend), unless
// CAPSTAN_BENCH_IN_PROCESS=1 runs it in this process as before; the benchmark's record of what changes
// runs in another child (see observeChanges). It reports the time until every Cluster is Available,
// p50/p99 of each Cluster's time from creation to Available, the managers' API requests to the management
// cluster (per cluster, and per Machine by verb) and to the workload clusters, each process's CPU seconds
// while creating, cores over CAPSTAN_BENCH_IDLE seconds of idling (default 300), peak RSS and RSS at the
// end of the idle period, and the time to delete every Cluster. CAPSTAN_BENCH_HEAP_PROFILE writes a heap
// profile of the managers' process at the end of the idle period. It runs only with
// CAPSTAN_BENCH_SCALE=1.
func BenchmarkScale(b *testing.B) {
	if os.Getenv("CAPSTAN_BENCH_SCALE") == "" {
		b.Skip("set CAPSTAN_BENCH_SCALE=1 (make bench-scale) to run the scale benchmark")
	}
	n, c := envInt("CAPSTAN_BENCH_N", 1000), envInt("CAPSTAN_BENCH_C", 50)
	idle := time.Duration(envInt("CAPSTAN_BENCH_IDLE", 300)) * time.Second
	inProcess := os.Getenv("CAPSTAN_BENCH_IN_PROCESS") != ""
	g := NewWithT(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		ns := env.NewNamespace(b)
		counter := apicount.New()
		// CAPSTAN_BENCH_BODIES=k logs the first k writes of the managers, with their bodies; only those whose
		// path contains CAPSTAN_BENCH_BODIES_MATCH when it is set.
		if k := envInt("CAPSTAN_BENCH_BODIES", 0); k > 0 {
			var logged atomic.Int64
			match := os.Getenv("CAPSTAN_BENCH_BODIES_MATCH")
			counter.Bodies = func(key apicount.Key, path string, body []byte) {
				if strings.Contains(path, match) && logged.Add(1) <= int64(k) {
					b.Logf("%s write: %s %s (%s): %s", time.Now().Format("15:04:05.000"), key.Verb, path, key.Agent, body)
				}
			}
		}
		// CAPSTAN_BENCH_CONFLICTS=k logs the first k writes that lost a race (409, or a failed JSON patch
		// test) while deleting, with their bodies (with CAPSTAN_BENCH_DIFFS, the versions they raced with).
		var deleting atomic.Bool
		if k := envInt("CAPSTAN_BENCH_CONFLICTS", 0); k > 0 {
			var logged atomic.Int64
			counter.OnConflict = func(key apicount.Key, path string, body []byte) {
				if deleting.Load() && logged.Add(1) <= int64(k) {
					b.Logf("%s conflict: %s %s (%s): %s", time.Now().Format("15:04:05.000"), key.Verb, path, key.Agent, body)
				}
			}
		}
		opts := stack.Options{Local: true, Kubeadm: true, Transport: counter.WrapAs}
		var child *remotebackend.Child
		if inProcess {
			opts.LocalMemory = &memory.Options{}
		} else {
			child = remotebackend.Start(b, memory.Options{})
			opts.LocalBackend = child
			b.Logf("memory backend: process %d; managers: process %d", child.Pid(), os.Getpid())
		}
		// The managers' connections to the management API server are counted: the bytes it receives from
		// them and sends them.
		wire := netcount.New()
		managersCfg := rest.CopyConfig(env.Config)
		managersCfg.Dial = wire.Dial
		managers := stack.ForTest(b, managersCfg, opts)
		procs := measuredProcesses(b, child)
		mgmtHost := env.Config.Host
		if u, err := url.Parse(env.Config.Host); err == nil && u.Host != "" {
			mgmtHost = u.Host
		}
		b.Logf("management API server: %s", mgmtHost)
		before, byKey0, conflicts0, counters0, wire0 := requests(mgmtHost), counter.Snapshot(), counter.Conflicts(), managerCounters(), wire.Bytes()
		usage0 := procs.usage(b)

		// CAPSTAN_BENCH_DIFFS=k logs the first k modifications of each kind while creating, to see which
		// writes a cluster's creation takes.
		var creationChanges *observer
		if k := envInt("CAPSTAN_BENCH_DIFFS", 0); k > 0 {
			creationChanges = observeChanges(b, k)
		}
		// CAPSTAN_BENCH_CLUSTERCLASS=1 creates the clusters from the local provider's ClusterClass "local"
		// (the topology flavor, as `clusterctl generate cluster --flavor topology`), the class created once.
		flavor := "cluster-template.yaml"
		if os.Getenv("CAPSTAN_BENCH_CLUSTERCLASS") != "" {
			flavor = "cluster-template-topology.yaml"
			for _, o := range stack.LocalTemplate(b, "clusterclass-local.yaml", nil) {
				o.SetNamespace(ns) // clusterctl puts the class and its templates in the clusters' namespace
				g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
			}
		}
		b.Logf("creating %d clusters from %s, %d at a time", n, flavor, c)
		apiserverProfile := profileAPIServer(b, "CAPSTAN_BENCH_APISERVER_PROFILE", "creation")
		start := time.Now()
		created := make([]time.Time, n)
		concurrently(c, n, func(k int) {
			objs := stack.LocalTemplate(b, flavor, map[string]string{
				"CLUSTER_NAME": fmt.Sprintf("s%04d", k), "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
				"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "1",
			})
			created[k] = time.Now()
			for _, o := range objs {
				g.Eventually(func() error { return client.IgnoreAlreadyExists(env.Client.Create(ctx, o)) }, time.Minute, time.Second).Should(Succeed())
			}
		})
		b.Logf("created %d clusters in %s", n, time.Since(start).Round(time.Second))

		available := map[string]time.Time{}
		lastLog := time.Now()
		g.Eventually(func(g Gomega) {
			if time.Since(lastLog) > 30*time.Second {
				b.Logf("%s: %d of %d clusters Available", time.Since(start).Round(time.Second), len(available), n)
				lastLog = time.Now()
			}
			// From the managers' cache, which watches the Clusters anyway: a list from the API server every
			// 2 s would add its encoding of every Cluster to the API server's figures.
			list := &clusterv1.ClusterList{}
			g.Expect(managers.Manager.GetCache().List(ctx, list, client.InNamespace(ns))).To(Succeed())
			for i := range list.Items {
				cl := &list.Items[i]
				if _, seen := available[cl.Name]; !seen && conditions.IsV1Beta2True(cl, clusterv1.ClusterAvailableV1Beta2Condition) {
					available[cl.Name] = time.Now()
				}
			}
			g.Expect(available).To(HaveLen(n))
		}, 2*time.Hour, 2*time.Second).Should(Succeed())
		allAvailable := time.Since(start)
		var perCluster []float64
		for k := 0; k < n; k++ {
			perCluster = append(perCluster, available[fmt.Sprintf("s%04d", k)].Sub(created[k]).Seconds())
		}
		sort.Float64s(perCluster)
		creating, byKeyCreating, conflictsCreating, wireCreating := requests(mgmtHost).minus(before), counter.Snapshot().Since(byKey0), counter.Conflicts().Since(conflicts0), wire.Bytes().Since(wire0)
		b.Logf("while creating: %s", managerCounters().report(counters0))
		b.Logf("the management API server's responses to the managers so far, by media type: %v", counter.MediaTypes())
		apiserverProfile() // after the counts: the profile may outlast the creation of a few clusters
		if creationChanges != nil {
			_, report := creationChanges.stop(b)
			b.Logf("objects modified while creating:\n%s", report)
		}
		usageCreated := procs.usage(b)

		b.Logf("all %d clusters Available after %s; per Cluster p50 %.0fs, p99 %.0fs; CPU while creating: %s",
			n, allAvailable.Round(time.Second), percentile(perCluster, 0.50), percentile(perCluster, 0.99), usageCreated.cpuSince(usage0))
		b.Logf("while creating, per Machine: the management API server's CPU %.3f s, etcd's %.3f s; the managers' connections to the API server carried %.1f KiB to it and %.1f KiB from it",
			usageCreated.perMachine("apiserver", usage0, 2*n), usageCreated.perMachine("etcd", usage0, 2*n),
			float64(wireCreating.Sent)/1024/float64(2*n), float64(wireCreating.Received)/1024/float64(2*n))
		b.Logf("idling %s", idle)
		changes := observeChanges(b, 3)
		changes.start(b)
		idleBefore, byKeyIdle0, conflictsIdle0, usageIdle0 := requests(mgmtHost), counter.Snapshot(), counter.Conflicts(), procs.usage(b)
		stopProfile := startProfile(b, "CAPSTAN_BENCH_IDLE_PROFILE")
		// The benchmark measures what idle clusters cost over this time.
		time.Sleep(idle)
		stopProfile()
		usageIdle := procs.usage(b)
		procstat.WriteHeapProfile(b, "CAPSTAN_BENCH_HEAP_PROFILE") // the managers' heap
		if u, err := changes.usage(); err == nil {
			b.Logf("the observer (not counted): peak RSS %.0f MiB, RSS %.0f MiB", u.PeakRSSMiB, u.RSSMiB)
		}
		changed, changeReport := changes.stop(b)
		b.Logf("objects modified while idle (%d):\n%s", changed, changeReport)
		idling, byKeyIdle, conflictsIdle := requests(mgmtHost).minus(idleBefore), counter.Snapshot().Since(byKeyIdle0), counter.Conflicts().Since(conflictsIdle0)

		stopProfile = startProfile(b, "CAPSTAN_BENCH_DELETE_PROFILE")
		byKeyDelete0, conflictsDelete0, usageDelete0, countersDelete0 := counter.Snapshot(), counter.Conflicts(), procs.usage(b), managerCounters()
		apiserverDeleteProfile := profileAPIServer(b, "CAPSTAN_BENCH_APISERVER_DELETE_PROFILE", "deletion")
		var deletionChanges *observer
		if k := envInt("CAPSTAN_BENCH_DIFFS", 0); k > 0 {
			deletionChanges = observeChanges(b, k)
			deletionChanges.start(b)
		}
		delStart := time.Now()
		deleting.Store(true)
		// The Clusters are deleted one by one, c at a time, as `kubectl delete clusters --all` deletes them
		// (one request each): a collection delete of a thousand Clusters outlasts the API server's request
		// timeout on a loaded machine, and a retry starts again from the first.
		toDelete := &clusterv1.ClusterList{}
		g.Expect(env.Client.List(ctx, toDelete, client.InNamespace(ns))).To(Succeed())
		concurrently(c, len(toDelete.Items), func(i int) {
			cl := &toDelete.Items[i]
			g.Eventually(func() error { return client.IgnoreNotFound(env.Client.Delete(ctx, cl)) }, time.Minute, time.Second).Should(Succeed())
		})
		b.Logf("%s: every Cluster's deletion requested", time.Since(delStart).Round(time.Second))
		lastLog = time.Now()
		g.Eventually(func(g Gomega) {
			left := make([]int, 0, 2)
			for _, list := range []client.ObjectList{&clusterv1.ClusterList{}, &clusterv1.MachineList{}} {
				g.Expect(managers.Manager.GetCache().List(ctx, list, client.InNamespace(ns))).To(Succeed())
				left = append(left, metaLen(list))
			}
			if time.Since(lastLog) > 30*time.Second {
				b.Logf("%s: %d Clusters and %d Machines left", time.Since(delStart).Round(time.Second), left[0], left[1])
				lastLog = time.Now()
			}
			g.Expect(left).To(HaveEach(0))
		}, time.Hour, 2*time.Second).Should(Succeed())
		deletion := time.Since(delStart)
		stopProfile()
		apiserverDeleteProfile()
		usageDeleted := procs.usage(b)
		b.Logf("all %d clusters deleted after %s; CPU while deleting: %s", n, deletion.Round(time.Second), usageDeleted.cpuSince(usageDelete0))
		b.Logf("while deleting: %s", managerCounters().report(countersDelete0))
		byKeyDeleting, conflictsDeleting := counter.Snapshot().Since(byKeyDelete0), counter.Conflicts().Since(conflictsDelete0)
		if deletionChanges != nil {
			_, report := deletionChanges.stop(b)
			b.Logf("objects modified while deleting:\n%s", report)
		}

		machines := float64(2 * n)
		b.Logf("requests to the management API server from creation to Available, by component (per Machine; 409: the requests answered Conflict, and JSON patches whose test failed):\n%s", requestTable(byKeyCreating, conflictsCreating, machines, "/machine"))
		b.Logf("requests to the management API server while idle, by component (per second):\n%s", requestTable(byKeyIdle, conflictsIdle, idle.Seconds(), "/s"))
		b.Logf("requests to the management API server while deleting, by component (per Cluster):\n%s", requestTable(byKeyDeleting, conflictsDeleting, float64(n), "/cluster"))
		b.ReportMetric(allAvailable.Seconds(), "s-all-available")
		b.ReportMetric(percentile(perCluster, 0.50), "s-p50-cluster")
		b.ReportMetric(percentile(perCluster, 0.99), "s-p99-cluster")
		b.ReportMetric(float64(creating.mgmtTotal())/float64(n), "mgmt-requests/cluster")
		b.ReportMetric(float64(creating.workload)/float64(n), "workload-requests/cluster")
		b.ReportMetric(float64(creating.writes())/machines, "mgmt-writes/machine")
		b.ReportMetric(float64(conflictsCreating.Sum(func(apicount.Key) bool { return true }))/machines, "conflicts/machine")
		for _, verb := range []string{"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE"} {
			if v := creating.mgmt[verb]; v > 0 {
				b.ReportMetric(float64(v)/machines, verb+"/machine")
			}
		}
		for _, c := range components {
			b.ReportMetric(float64(componentWrites(byKeyCreating, c))/machines, c+"-writes/machine")
			b.ReportMetric(float64(componentWrites(byKeyIdle, c))/idle.Seconds(), c+"-writes/s-idle")
		}
		for name, u := range usageIdle {
			b.ReportMetric(usageCreated[name].CPUSeconds-usage0[name].CPUSeconds, name+"-cpu-s-creating")
			b.ReportMetric(usageDeleted[name].CPUSeconds-usageDelete0[name].CPUSeconds, name+"-cpu-s-deleting")
			b.ReportMetric((u.CPUSeconds-usageIdle0[name].CPUSeconds)/idle.Seconds(), name+"-cores-idle")
			b.ReportMetric(u.PeakRSSMiB, name+"-MiB-peak-rss")
			b.ReportMetric(u.RSSMiB, name+"-MiB-rss-idle")
		}
		b.ReportMetric(usageCreated.perMachine("apiserver", usage0, 2*n), "apiserver-cpu-s/machine")
		b.ReportMetric(usageCreated.perMachine("etcd", usage0, 2*n), "etcd-cpu-s/machine")
		b.ReportMetric(float64(wireCreating.Sent)/1024/machines, "apiserver-KiB-received/machine")
		b.ReportMetric(float64(wireCreating.Received)/1024/machines, "apiserver-KiB-sent/machine")
		b.ReportMetric(float64(idling.mgmtTotal())/idle.Seconds(), "mgmt-requests/s-idle")
		b.ReportMetric(float64(idling.writes())/idle.Seconds(), "mgmt-writes/s-idle")
		b.ReportMetric(float64(changed)/idle.Seconds(), "modified/s-idle")
		b.ReportMetric(deletion.Seconds(), "s-delete-all")
	}
}

// profileAPIServer takes, when the environment variable envVar names a file, a CPU profile of the
// management cluster's kube-apiserver (its /debug/pprof/profile) over the first
// CAPSTAN_BENCH_APISERVER_PROFILE_SECONDS (default 120) seconds of phase (CAPSTAN_BENCH_APISERVER_PROFILE
// of creation, CAPSTAN_BENCH_APISERVER_DELETE_PROFILE of deletion), to see what the API server spends its
// cores on; wait returns once the profile is written.
func profileAPIServer(b *testing.B, envVar, phase string) (wait func()) {
	path := os.Getenv(envVar)
	if path == "" {
		return func() {}
	}
	seconds := envInt("CAPSTAN_BENCH_APISERVER_PROFILE_SECONDS", 120)
	httpClient, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	httpClient.Timeout = time.Duration(seconds+60) * time.Second
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := httpClient.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(env.Config.Host, "/"), seconds))
		if err != nil {
			b.Errorf("profiling the API server: %v", err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, data)
		}
		if err == nil {
			err = os.WriteFile(path, data, 0o600)
		}
		if err != nil {
			b.Errorf("profiling the API server: %v", err)
			return
		}
		b.Logf("the API server's CPU profile of the first %d s of %s: %s", seconds, phase, path)
	}()
	return func() { <-done }
}

// startProfile takes a CPU profile into the file the environment variable env names, if set, until stop:
// CAPSTAN_BENCH_IDLE_PROFILE of the idle period, CAPSTAN_BENCH_DELETE_PROFILE of the deletion (not
// together with go test's -cpuprofile: one CPU profile at a time).
func startProfile(b *testing.B, env string) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

func metaLen(list client.ObjectList) int {
	switch l := list.(type) {
	case *clusterv1.ClusterList:
		return len(l.Items)
	case *clusterv1.MachineList:
		return len(l.Items)
	}
	return 0
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// requestCounts are client-go's request counts (rest_client_requests_total) of this process: to the
// management API server by verb, and to every other host (the workload clusters).
type requestCounts struct {
	mgmt     map[string]int
	workload int
}

func (r requestCounts) minus(o requestCounts) requestCounts {
	out := requestCounts{mgmt: map[string]int{}, workload: r.workload - o.workload}
	for k, v := range r.mgmt {
		out.mgmt[k] = v - o.mgmt[k]
	}
	return out
}

func (r requestCounts) mgmtTotal() int {
	n := 0
	for _, v := range r.mgmt {
		n += v
	}
	return n
}

// writes are the PATCH, POST and PUT requests.
func (r requestCounts) writes() int { return r.mgmt["PATCH"] + r.mgmt["POST"] + r.mgmt["PUT"] }

func requests(mgmtHost string) requestCounts {
	out := requestCounts{mgmt: map[string]int{}}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := labelMap(m)
			v := int(m.GetCounter().GetValue())
			if labels["host"] == mgmtHost || strings.HasPrefix(mgmtHost, labels["host"]+"/") {
				out.mgmt[labels["method"]] += v
			} else {
				out.workload += v
			}
		}
	}
	return out
}

// managerCounts are counters of the managers' registry: capstan_stale_reads_total by outcome ("stale:"
// and the outcome) and controller_runtime_reconcile_total by controller ("reconciles:" and its name).
type managerCounts map[string]int

func managerCounters() managerCounts {
	out := managerCounts{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case patch.StaleReadsMetric:
				out["stale:"+labelMap(m)["outcome"]] += int(m.GetCounter().GetValue())
			case "controller_runtime_reconcile_total":
				out["reconciles:"+labelMap(m)["controller"]] += int(m.GetCounter().GetValue())
			}
		}
	}
	return out
}

// report says, since before, how many reads were stale and how many reconciles each controller ran.
func (s managerCounts) report(before managerCounts) string {
	var controllers []string
	for k, v := range s {
		if name, ok := strings.CutPrefix(k, "reconciles:"); ok && v > before[k] {
			controllers = append(controllers, fmt.Sprintf("%s %d", name, v-before[k]))
		}
	}
	sort.Strings(controllers)
	return fmt.Sprintf("stale reads (the managers' caches behind their own writes): %d waited for the cache, %d reconciled after 2 minutes; reconciles: %s",
		s["stale:waited"]-before["stale:waited"], s["stale:expired"]-before["stale:expired"], strings.Join(controllers, ", "))
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// processes are the measured processes' usage by name: "managers" (this process) and "backend" (the
// memory backend's child process), or "managers+backend" when the backend runs in this process; and the
// management cluster's "apiserver" and "etcd".
type processes struct {
	child               *remotebackend.Child
	apiserver, etcdProc int
}

func measuredProcesses(b testing.TB, child *remotebackend.Child) processes {
	b.Helper()
	apiserver, etcd, err := env.Pids()
	if err != nil {
		b.Fatal(fmt.Errorf("the management cluster's processes: %w", err))
	}
	b.Logf("management kube-apiserver: process %d; etcd: process %d", apiserver, etcd)
	return processes{child: child, apiserver: apiserver, etcdProc: etcd}
}

type usages map[string]procstat.Usage

func (p processes) usage(b testing.TB) usages {
	b.Helper()
	self, err := procstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	out := usages{}
	for name, pid := range map[string]int{"apiserver": p.apiserver, "etcd": p.etcdProc} {
		u, err := procstat.Of(pid)
		if err != nil {
			b.Fatal(fmt.Errorf("the management cluster's %s: %w", name, err))
		}
		out[name] = u
	}
	if p.child == nil {
		out["managers+backend"] = self
		return out
	}
	child, err := p.child.Usage()
	if err != nil {
		b.Fatal(fmt.Errorf("the memory backend's process: %w", err))
	}
	out["managers"], out["backend"] = self, child
	return out
}

// perMachine returns the CPU seconds process name used since u0, per Machine.
func (u usages) perMachine(name string, u0 usages, machines int) float64 {
	return (u[name].CPUSeconds - u0[name].CPUSeconds) / float64(machines)
}

// cpuSince says each process's CPU seconds since u0.
func (u usages) cpuSince(u0 usages) string {
	names := make([]string, 0, len(u))
	for name := range u {
		names = append(names, name)
	}
	sort.Strings(names)
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %.1fs", name, u[name].CPUSeconds-u0[name].CPUSeconds))
	}
	return strings.Join(parts, ", ")
}

// concurrently calls do(k) for k from 0 to n-1, c at a time, and returns when all have returned.
func concurrently(c, n int, do func(k int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				do(k)
			}
		}()
	}
	for k := 0; k < n; k++ {
		next <- k
	}
	close(next)
	wg.Wait()
}

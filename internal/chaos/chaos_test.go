package chaos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/stack"
	"github.com/capstan-dev/capstan/internal/test/stallproxy"
)

// The suite's settings, from the environment (see TestMain).
var (
	mode   string // "smoke", "full", or "" (the tests skip)
	seed   uint64
	rounds = 1
	// maxFaults is the most faults a step of the full run plans (it plans 2 to maxFaults).
	maxFaults = 5
	mgmt      *harness
	report    = &figures{}
	// stateRoot holds the run's state, kept when the run fails.
	stateRoot string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	mode = os.Getenv("CAPSTAN_CHAOS")
	if mode == "" {
		return m.Run()
	}
	if mode != "smoke" && mode != "full" {
		fmt.Fprintf(os.Stderr, "CAPSTAN_CHAOS=%q: use smoke or full\n", mode)
		return 2
	}
	seed = 1
	if mode == "full" {
		seed = uint64(time.Now().UnixNano()) % 1_000_000_000 //nolint:gosec // A seed, printed.
	}
	if s := os.Getenv("CAPSTAN_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "CAPSTAN_CHAOS_SEED=%q is not a number\n", s)
			return 2
		}
		seed = v
	}
	if s := os.Getenv("CAPSTAN_CHAOS_ROUNDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			fmt.Fprintf(os.Stderr, "CAPSTAN_CHAOS_ROUNDS=%q is not a positive number\n", s)
			return 2
		}
		rounds = v
	}
	if s := os.Getenv("CAPSTAN_CHAOS_FAULTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 2 {
			fmt.Fprintf(os.Stderr, "CAPSTAN_CHAOS_FAULTS=%q: give the most faults a step plans, 2 or more (5 by default)\n", s)
			return 2
		}
		maxFaults = v
	}
	fmt.Printf("chaos: %s run, seed %d, %d round(s), up to %d faults a step\n%s\n", mode, seed, rounds, maxFaults, replayHint(""))

	// Not under /tmp: the local provider's Deployment mounts a volume there, so the local runtime would
	// read the paths of its arguments below /tmp (the managers' --kubeconfig) in that volume.
	cache, err := os.UserCacheDir()
	if err == nil {
		cache = filepath.Join(cache, "capstan-chaos")
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root, err := os.MkdirTemp(cache, "run-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stateRoot = root
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(root)
		} else {
			fmt.Printf("chaos: the management cluster's state and logs are kept in %s\n", root)
		}
	}()
	start := time.Now()
	capstan, clusterctl, err := buildBinaries(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgmt = newHarness(root, "chaos", capstan, clusterctl)
	defer mgmt.stop()
	if err := mgmt.start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := mgmt.initProviders(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ports, err := mgmt.state.LoadPorts()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mgmt.proxy, err = stallproxy.New("127.0.0.1:" + strconv.Itoa(ports.APIServer)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mgmt.proxy.Close()
	if err := mgmt.routeThroughProxy(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("chaos: the management cluster and its providers ran after %s\n", time.Since(start).Round(time.Second))
	code = m.Run()
	if target != nil {
		target.stop()
	}
	report.print(os.Stdout, mode, seed, time.Since(start))
	if path := os.Getenv("CAPSTAN_CHAOS_REPORT"); path != "" {
		if err := report.write(path, mode, seed, time.Since(start)); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

func replayHint(scenario string) string {
	run := ""
	if scenario != "" {
		run = fmt.Sprintf(" -run 'TestChaos/%s$'", scenario)
	}
	return fmt.Sprintf("chaos: replay with CAPSTAN_CHAOS=%s CAPSTAN_CHAOS_SEED=%d CAPSTAN_CHAOS_ROUNDS=%d CAPSTAN_CHAOS_FAULTS=%d go test -count=1 -v -timeout 0 ./internal/chaos/%s",
		mode, seed, rounds, maxFaults, run)
}

// clusterSpec is a workload cluster a scenario creates.
type clusterSpec struct {
	name string
	// topology creates it from the local provider's ClusterClass; otherwise from the default flavor.
	topology      bool
	controlPlanes int
	workers       int
	version       string
	// mhc adds a MachineHealthCheck of the control plane Machines that finds a Node NotReady for 10 s
	// unhealthy.
	mhc bool
}

// step is one operation of a scenario, during which faults are injected.
type step struct {
	name string
	// bound is how long the operation may take to converge, from its start, faults included.
	bound time.Duration
	// window is how long after the start faults may be injected.
	window time.Duration
	faults []fault
	// only, when set, injects exactly these faults (the first alone in the smoke) instead of random ones.
	only []fault
	// smoke: the step runs in the smoke (in a scenario of the smoke); smokeFaults, when set, are the faults
	// the smoke injects in it instead of one chosen at random.
	smoke       bool
	smokeFaults []fault
	// prepare runs before the faults of before; before are faults injected right before the operation
	// starts, which last while it runs.
	prepare func(ctx context.Context, g Gomega, r *run)
	before  []fault
	// excuse names the cluster whose only control plane Machine the step replaces: its samples are
	// excused during the step.
	excuse string
	start  func(ctx context.Context, g Gomega, r *run)
	// done checks what the step must reach, besides every remaining cluster having converged.
	done func(ctx context.Context, g Gomega, r *run)
	// deletes names the cluster the step deletes.
	deletes string
}

type scenario struct {
	name     string
	smoke    bool
	clusters []clusterSpec
	steps    []step
}

const (
	v136 = "v1.36.3"
	v137 = "v1.37.1"
)

var haFaults = []fault{faultKillWorkloadEtcd, faultKillWorkloadAPIServer}

func with(lists ...[]fault) []fault {
	var out []fault
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var scenarios = []scenario{
	{
		name:     "control-plane-scale",
		smoke:    true,
		clusters: []clusterSpec{{name: "scale", controlPlanes: 1, version: v137}},
		steps: []step{
			{name: "scale 1 → 3", bound: 8 * time.Minute, window: 45 * time.Second, faults: with(managerFaults, []fault{faultStall}),
				start: scaleControlPlane("scale", 3), smoke: true, smokeFaults: []fault{faultOutage}},
			// Right after the control plane provider read etcd healthy (a read it reuses for 15 s), a member other
			// than those scale down removes or hands the leadership to stalls: no Machine may be deleted until it
			// answers again.
			{name: "scale 3 → 1", bound: 8 * time.Minute, window: 30 * time.Second, faults: with(managerFaults, haFaults, []fault{faultStall}),
				prepare: readEtcdNow("scale"), before: []fault{faultStallWorkloadEtcd}, start: scaleControlPlane("scale", 1), smoke: true},
		},
	},
	{
		name:     "control-plane-rollout",
		clusters: []clusterSpec{{name: "rollout", controlPlanes: 3, version: v136}},
		steps: []step{
			{name: "rolling upgrade " + v136 + " → " + v137, bound: 10 * time.Minute, window: 90 * time.Second,
				faults: with(managerFaults, haFaults, []fault{faultStall}), start: upgradeControlPlane("rollout", v137)},
		},
	},
	{
		name:     "machinedeployment-rollout",
		clusters: []clusterSpec{{name: "workers", controlPlanes: 1, workers: 2, version: v137}},
		steps: []step{
			{name: "rollout of the workers", bound: 8 * time.Minute, window: 40 * time.Second,
				faults: with(managerFaults, []fault{faultStall}), start: rolloutWorkers("workers"), done: workersReplaced("workers")},
		},
	},
	{
		name:     "topology-upgrade",
		clusters: []clusterSpec{{name: "topology", topology: true, controlPlanes: 1, workers: 1, version: v136}},
		steps: []step{
			{name: "topology upgrade " + v136 + " → " + v137, bound: 10 * time.Minute, window: 90 * time.Second, excuse: "topology",
				faults: with(managerFaults, []fault{faultStall}), start: upgradeTopology("topology", v137), done: allMachinesAt("topology", v137)},
		},
	},
	{
		name:     "remediation",
		clusters: []clusterSpec{{name: "remediation", controlPlanes: 3, version: v137, mhc: true}},
		steps: []step{
			{name: "remediation of a control plane Machine whose Node is NotReady", bound: 10 * time.Minute, window: 60 * time.Second,
				faults: managerFaults, start: makeControlPlaneMachineUnhealthy("remediation"), done: unhealthyMachineReplaced("remediation")},
		},
	},
	{
		name:     "deletion",
		clusters: []clusterSpec{{name: "deletion", controlPlanes: 3, workers: 1, version: v137}},
		steps: []step{
			{name: "Cluster deletion", bound: 6 * time.Minute, window: 30 * time.Second, faults: managerFaults,
				start: deleteCluster("deletion"), deletes: "deletion"},
		},
	},
	{
		name:     "move",
		clusters: []clusterSpec{{name: "moved", controlPlanes: 1, workers: 1, version: v137}},
		steps: []step{
			// The local provider of the source stops the cluster's processes and the target's starts them from
			// the same data: the workload API does not answer meanwhile.
			{name: "clusterctl move to another management cluster", bound: 10 * time.Minute, window: 45 * time.Second, excuse: "moved",
				faults: []fault{faultKillMove, faultKillMove, faultKillCore, faultKillLocalProvider, faultRestartAPIServer,
					onTarget(faultKillCore), onTarget(faultKillLocalProvider), onTarget(faultRestartAPIServer)},
				start: startMove, done: moved},
			{name: "Cluster deletion in the target", bound: 6 * time.Minute, window: 30 * time.Second,
				faults: []fault{onTarget(faultKillCore), onTarget(faultKillControlPlane), onTarget(faultKillLocalProvider)},
				start:  deleteCluster("moved"), deletes: "moved"},
		},
	},
	{
		name:     "down-up",
		clusters: []clusterSpec{{name: "single", controlPlanes: 1, version: v136}, {name: "ha", controlPlanes: 3, version: v136}},
		steps: []step{
			{name: "steady", bound: 8 * time.Minute, only: []fault{faultKillUp, faultDownUp},
				start: func(context.Context, Gomega, *run) {}},
			{name: "mid-rollout", bound: 12 * time.Minute, window: 60 * time.Second, only: []fault{faultKillUp},
				start: upgradeControlPlane("ha", v137)},
		},
	},
}

// TestChaos runs each scenario (the smoke's in smoke mode) `rounds` times, injecting faults at random
// points chosen from the seed.
func TestChaos(t *testing.T) {
	if mode == "" {
		t.Skip("CAPSTAN_CHAOS is not set: the chaos suite runs with make chaos (CAPSTAN_CHAOS=full) or make chaos-smoke (CAPSTAN_CHAOS=smoke)")
	}
	for _, sc := range scenarios {
		if mode == "smoke" && !sc.smoke {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			for round := range rounds {
				runScenario(t, sc, round)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// run is one run of a scenario.
type run struct {
	t        *testing.T
	h        *harness
	rng      *rand.Rand
	ns       string
	clusters map[string]*workloadCluster
	samplers map[string]*sampler
	stats    *scenarioFigures
	// marks holds what steps remember (the Machine made unhealthy, the rollout's time).
	marks map[string]string
	// where is the management cluster of each cluster, when not h (it moved); move is the scenario's
	// clusterctl move.
	where   map[string]*harness
	whereMu *sync.Mutex
	move    *moveRun
	// resume holds the processes stopped by a fault, to continue them at the latest when the run ends.
	resume map[int]bool
}

// hOf returns the management cluster that manages a cluster.
func (r *run) hOf(cluster string) *harness {
	r.whereMu.Lock()
	defer r.whereMu.Unlock()
	if h, ok := r.where[cluster]; ok {
		return h
	}
	return r.h
}

func (r *run) setHarness(cluster string, h *harness) {
	r.whereMu.Lock()
	defer r.whereMu.Unlock()
	r.where[cluster] = h
}

func (r *run) clusterNames() []string {
	names := make([]string, 0, len(r.clusters))
	for n := range r.clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func scenarioSeed(name string, round int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", name, round)
	return h.Sum64()
}

func runScenario(t *testing.T, sc scenario, round int) {
	g := NewWithT(t)
	ctx := context.Background()
	t.Logf("scenario %s, round %d, seed %d", sc.name, round+1, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(replayHint(sc.name))
		}
	})
	r := &run{t: t, h: mgmt, rng: rand.New(rand.NewPCG(seed, scenarioSeed(sc.name, round))), //nolint:gosec // Not for security.
		clusters: map[string]*workloadCluster{}, samplers: map[string]*sampler{}, marks: map[string]string{}, where: map[string]*harness{},
		resume: map[int]bool{}, whereMu: &sync.Mutex{},
		stats: report.scenario(sc.name)}
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "chaos-"}}
	g.Expect(r.h.client.Create(ctx, nsObj)).To(Succeed())
	r.ns = nsObj.Name
	defer r.cleanup(ctx)

	for _, spec := range sc.clusters {
		createCluster(ctx, t, g, r, spec)
	}
	for _, spec := range sc.clusters {
		eventually(g, 10*time.Minute, func(g Gomega) { converged(ctx, g, r.h.client, r.ns, spec.name) })
		w, err := connect(ctx, r.h.client, r.ns, spec.name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(w.write(ctx, "chaos-0")).To(Succeed())
		r.clusters[spec.name] = w
		name := spec.name
		r.samplers[name] = startSampler(w, func() client.Client { return r.hOf(name).client })
	}
	t.Logf("clusters %v available, sampling every %s", r.clusterNames(), sampleInterval)

	for i, st := range sc.steps {
		if mode == "smoke" && !st.smoke {
			continue
		}
		runStep(ctx, t, g, r, i+1, st)
		if t.Failed() {
			return
		}
	}

	violations := 0
	for _, name := range r.clusterNames() {
		res := r.samplers[name].stop()
		delete(r.samplers, name)
		r.stats.addSamples(res)
		t.Logf("cluster %s: %d API samples (%d failed, the slowest answered in %s), %d etcd samples (%d without quorum, the slowest answered in %s)",
			name, res.api, res.apiFailures, res.slowestAPI.Round(10*time.Millisecond), res.etcd, res.etcdLosses, res.slowestEtcd.Round(10*time.Millisecond))
		for _, v := range res.violations {
			t.Errorf("invariant violated: %s", v)
			violations++
		}
		w := r.clusters[name]
		if err := w.checkData(ctx); err != nil {
			r.stats.dataLost++
			t.Errorf("data lost: %v", err)
		}
	}
	for _, h := range []*harness{r.h, target} {
		if h == nil {
			continue
		}
		managed := map[string]*workloadCluster{}
		for name, w := range r.clusters {
			if r.hOf(name) == h {
				managed[name] = w
			}
		}
		eventually(g, 2*time.Minute, func(g Gomega) { checkNothingLeaked(ctx, g, h.client, r.ns, managed) })
	}
	if violations == 0 && !t.Failed() {
		r.stats.survived += r.stats.injectedThisRun
	}
	r.stats.injectedThisRun = 0
}

// runStep runs one step: starts its operation, injects faults at random points of its window, and waits
// for the operation to converge within its bound.
func runStep(ctx context.Context, t *testing.T, g Gomega, r *run, n int, st step) {
	if mode == "smoke" && st.smokeFaults != nil {
		st.only = st.smokeFaults
	}
	for _, name := range r.clusterNames() {
		g.Expect(r.clusters[name].write(ctx, fmt.Sprintf("chaos-%d", n))).To(Succeed())
	}
	if st.excuse != "" {
		r.samplers[st.excuse].excuseStep(true)
	}
	plan := r.plan(st)
	start := time.Now()
	t.Logf("step %d: %s (bound %s, %d faults planned)", n, st.name, st.bound, len(plan)+len(st.before))
	if st.prepare != nil {
		st.prepare(ctx, g, r)
	}
	for _, f := range st.before {
		r.inject(ctx, t, g, f, start)
	}
	st.start(ctx, g, r)
	done := func(g Gomega) {
		if st.done != nil {
			st.done(ctx, g, r)
		}
		if st.deletes != "" {
			gone := &clusterv1.Cluster{}
			err := r.hOf(st.deletes).client.Get(ctx, key(r.ns, st.deletes), gone)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Cluster %s is gone", st.deletes)
		}
		for _, name := range r.clusterNames() {
			if name != st.deletes {
				converged(ctx, g, r.hOf(name).client, r.ns, name)
			}
		}
	}
	for _, p := range plan {
		if wait := time.Until(start.Add(p.at)); wait > 0 {
			// The plan injects each fault at its time.
			time.Sleep(wait)
		}
		if st.only == nil && succeeds(done) {
			t.Logf("  the operation converged before the next fault (+%s)", time.Since(start).Round(time.Second))
			break
		}
		r.inject(ctx, t, g, p.fault, start)
	}
	eventually(g, time.Until(start.Add(st.bound)), done)
	took := time.Since(start)
	t.Logf("  converged in %s", took.Round(time.Second))
	r.stats.converged(st.name, took, st.bound)
	if st.deletes != "" {
		w := r.clusters[st.deletes]
		r.samplers[st.deletes].stop()
		delete(r.samplers, st.deletes)
		delete(r.clusters, st.deletes)
		eventually(g, 2*time.Minute, func(g Gomega) { checkClusterGone(ctx, g, r.hOf(st.deletes).client, w) })
	}
	if st.excuse != "" {
		if s := r.samplers[st.excuse]; s != nil {
			s.excuseStep(false)
		}
	}
	for _, name := range r.clusterNames() {
		g.Expect(r.samplers[name].waitUp(workloadBackBound)).To(BeTrue(), "cluster %s is back", name)
	}
}

// succeeds reports whether f passes now.
func succeeds(f func(Gomega)) (ok bool) {
	type failed struct{}
	ok = true
	g := NewGomega(func(string, ...int) { panic(failed{}) })
	defer func() {
		if v := recover(); v != nil {
			if _, is := v.(failed); !is {
				panic(v)
			}
			ok = false
		}
	}()
	f(g)
	return ok
}

// planned is a fault planned at a time after a step's start.
type planned struct {
	at    time.Duration
	fault fault
}

// plan chooses the step's faults and when, from the run's random source.
func (r *run) plan(st step) []planned {
	if st.only != nil {
		only := st.only
		if mode == "smoke" {
			only = only[:1]
		}
		out := make([]planned, 0, len(only))
		for _, f := range only {
			p := planned{fault: f}
			if st.window > 0 {
				p.at = time.Duration(r.rng.Int64N(int64(st.window)))
			}
			out = append(out, p)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
		return out
	}
	candidates := st.faults
	if !r.hasHA() {
		candidates = nil
		for _, f := range st.faults {
			if !f.ha {
				candidates = append(candidates, f)
			}
		}
	}
	n := 1
	if mode == "full" {
		n = 2 + r.rng.IntN(maxFaults-1)
	}
	out := make([]planned, 0, n)
	for range n {
		out = append(out, planned{at: time.Duration(r.rng.Int64N(int64(st.window))), fault: candidates[r.rng.IntN(len(candidates))]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

func (r *run) hasHA() bool {
	for _, name := range r.clusterNames() {
		if st, err := r.clusters[name].state(); err == nil {
			n := 0
			for _, m := range st.Machines {
				if m.ControlPlane {
					n++
				}
			}
			if n >= 3 {
				return true
			}
		}
	}
	return false
}

// inject injects one fault and waits for what it broke to run again. A fault on the workload clusters'
// processes waits for a stalled etcd member to continue first: a member stopped and another killed are
// two failures at once, which a cluster of 3 members does not survive, by design.
func (r *run) inject(ctx context.Context, t *testing.T, g Gomega, f fault, start time.Time) {
	if f.ha || f.workloadDown {
		waited := time.Now()
		for r.stalled() && time.Since(waited) < time.Minute {
			time.Sleep(100 * time.Millisecond)
		}
		if d := time.Since(waited); d >= time.Second {
			t.Logf("  +%s: %s waited %s for the stalled etcd member to continue", time.Since(start).Round(100*time.Millisecond), f.name, d.Round(100*time.Millisecond))
		}
	}
	at := time.Since(start)
	if f.workloadDown {
		for _, name := range r.clusterNames() {
			r.samplers[name].down(f.name, workloadBackBound)
		}
	}
	began := time.Now()
	detail, err := f.inject(ctx, r)
	if f.workloadDown {
		for _, name := range r.clusterNames() {
			r.samplers[name].over()
		}
	}
	if errors.Is(err, errSkipFault) {
		t.Logf("  +%s: %s skipped: no target", at.Round(100*time.Millisecond), f.name)
		return
	}
	if detail != "" {
		detail = " (" + detail + ")"
	}
	r.stats.injected(f.name)
	t.Logf("  fault at +%s: %s%s; back after %s", at.Round(100*time.Millisecond), f.name, detail, time.Since(began).Round(100*time.Millisecond))
	g.Expect(err).NotTo(HaveOccurred(), "after %s", f.name)
}

// stalled reports whether a process a fault stopped has not been continued yet.
func (r *run) stalled() bool {
	r.whereMu.Lock()
	defer r.whereMu.Unlock()
	return len(r.resume) > 0
}

// cleanup deletes the scenario's namespace: its remaining Clusters first, then the namespace. When the
// scenario failed, the logs of its workload clusters' processes are kept first (their data goes with them).
func (r *run) cleanup(ctx context.Context) {
	if r.t.Failed() {
		r.keepWorkloadLogs()
	}
	r.whereMu.Lock()
	for pid := range r.resume {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	r.whereMu.Unlock()
	for _, s := range r.samplers {
		s.stop()
	}
	if r.move != nil {
		r.move.kill()
	}
	for _, h := range []*harness{r.h, target} {
		if h == nil || h.up == nil {
			continue
		}
		list := &clusterv1.ClusterList{}
		if err := h.client.List(ctx, list, client.InNamespace(r.ns)); err == nil {
			for i := range list.Items {
				_ = h.client.Delete(ctx, &list.Items[i])
			}
		}
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			if err := h.client.List(ctx, list, client.InNamespace(r.ns)); err == nil && len(list.Items) == 0 {
				break
			}
			// Polled until the namespace is empty.
			time.Sleep(time.Second)
		}
		_ = h.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}})
	}
}

// createCluster creates a workload cluster from the local provider's templates.
func createCluster(ctx context.Context, t *testing.T, g Gomega, r *run, spec clusterSpec) {
	vars := map[string]string{
		"CLUSTER_NAME": spec.name, "NAMESPACE": r.ns, "KUBERNETES_VERSION": spec.version,
		"CONTROL_PLANE_MACHINE_COUNT": strconv.Itoa(spec.controlPlanes), "WORKER_MACHINE_COUNT": strconv.Itoa(spec.workers),
	}
	template := "cluster-template.yaml"
	if spec.topology {
		template = "cluster-template-topology.yaml"
		for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
			o.SetNamespace(r.ns)
			if err := r.h.client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				g.Expect(err).NotTo(HaveOccurred(), "creating %s %s", o.GetKind(), o.GetName())
			}
		}
	}
	for _, o := range stack.LocalTemplate(t, template, vars) {
		g.Expect(r.h.client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	if spec.mhc {
		mhc := &clusterv1.MachineHealthCheck{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: spec.name + "-control-plane"},
			Spec: clusterv1.MachineHealthCheckSpec{
				ClusterName: spec.name,
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{
					clusterv1.ClusterNameLabel: spec.name, clusterv1.MachineControlPlaneLabel: ""}},
				UnhealthyConditions: []clusterv1.UnhealthyCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 10 * time.Second}},
				},
				MaxUnhealthy: ptr.To(intstr.FromString("100%")),
			},
		}
		g.Expect(r.h.client.Create(ctx, mhc)).To(Succeed())
	}
}

// Operations.

func kcpOf(ctx context.Context, g Gomega, r *run, cluster string) *controlplanev1.KubeadmControlPlane {
	c := &clusterv1.Cluster{}
	g.Expect(r.h.client.Get(ctx, key(r.ns, cluster), c)).To(Succeed())
	g.Expect(c.Spec.ControlPlaneRef).NotTo(BeNil())
	kcp := &controlplanev1.KubeadmControlPlane{}
	g.Expect(r.h.client.Get(ctx, key(r.ns, c.Spec.ControlPlaneRef.Name), kcp)).To(Succeed())
	return kcp
}

// patch changes an object read fresh, retrying conflicts, until it succeeds or a minute passed (the
// management API may be restarting).
func patch(ctx context.Context, g Gomega, r *run, obj client.Object, change func()) {
	g.Eventually(func() error {
		if err := r.h.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		before := obj.DeepCopyObject().(client.Object)
		change()
		return r.h.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, time.Minute, time.Second).Should(Succeed())
}

func scaleControlPlane(cluster string, replicas int32) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		kcp := kcpOf(ctx, g, r, cluster)
		patch(ctx, g, r, kcp, func() { kcp.Spec.Replicas = ptr.To(replicas) })
	}
}

// readEtcdNow makes the control plane provider read the cluster's etcd: an annotation of the
// KubeadmControlPlane brings a reconcile, which reads the health of every member; the read takes a moment.
func readEtcdNow(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		kcp := kcpOf(ctx, g, r, cluster)
		patch(ctx, g, r, kcp, func() {
			if kcp.Annotations == nil {
				kcp.Annotations = map[string]string{}
			}
			kcp.Annotations["chaos.capstan.dev/read-etcd"] = time.Now().Format(time.RFC3339Nano)
		})
		// The read takes a moment and leaves no trace to poll for.
		time.Sleep(3 * time.Second)
	}
}

func upgradeControlPlane(cluster, version string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		kcp := kcpOf(ctx, g, r, cluster)
		patch(ctx, g, r, kcp, func() { kcp.Spec.Version = version })
	}
}

func upgradeTopology(cluster, version string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: cluster}}
		patch(ctx, g, r, c, func() { c.Spec.Topology.Version = version })
	}
}

func rolloutWorkers(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		mds := &clusterv1.MachineDeploymentList{}
		g.Expect(r.h.client.List(ctx, mds, client.InNamespace(r.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
		g.Expect(mds.Items).NotTo(BeEmpty())
		at := metav1.NewTime(time.Now().Truncate(time.Second).Add(time.Second))
		r.marks["rolloutAfter/"+cluster] = at.Format(time.RFC3339)
		for i := range mds.Items {
			md := &mds.Items[i]
			patch(ctx, g, r, md, func() { md.Spec.RolloutAfter = &at })
		}
	}
}

func workersReplaced(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		at, err := time.Parse(time.RFC3339, r.marks["rolloutAfter/"+cluster])
		g.Expect(err).NotTo(HaveOccurred())
		machines := &clusterv1.MachineList{}
		g.Expect(r.h.client.List(ctx, machines, client.InNamespace(r.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster},
			client.HasLabels{clusterv1.MachineDeploymentNameLabel})).To(Succeed())
		g.Expect(machines.Items).NotTo(BeEmpty())
		for _, m := range machines.Items {
			g.Expect(m.CreationTimestamp.Time).NotTo(BeTemporally("<", at), "worker Machine %s was created before the rollout", m.Name)
		}
	}
}

func allMachinesAt(cluster, version string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		machines := &clusterv1.MachineList{}
		g.Expect(r.h.client.List(ctx, machines, client.InNamespace(r.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
		for _, m := range machines.Items {
			g.Expect(m.Spec.Version).To(Equal(ptr.To(version)), "Machine %s", m.Name)
		}
	}
}

func makeControlPlaneMachineUnhealthy(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		machines := &clusterv1.MachineList{}
		g.Expect(r.h.client.List(ctx, machines, client.InNamespace(r.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster},
			client.HasLabels{clusterv1.MachineControlPlaneLabel})).To(Succeed())
		sort.Slice(machines.Items, func(i, j int) bool { return machines.Items[i].Name < machines.Items[j].Name })
		m := machines.Items[r.rng.IntN(len(machines.Items))]
		r.marks["unhealthy/"+cluster] = m.Name
		lm := &infrav1.LocalMachine{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: m.Spec.InfrastructureRef.Name}}
		patch(ctx, g, r, lm, func() {
			if lm.Annotations == nil {
				lm.Annotations = map[string]string{}
			}
			lm.Annotations[infrav1.NodeReadyAnnotation] = "False"
		})
		r.t.Logf("  Machine %s's Node made NotReady", m.Name)
	}
}

func unhealthyMachineReplaced(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		name := r.marks["unhealthy/"+cluster]
		err := r.h.client.Get(ctx, key(r.ns, name), &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the unhealthy Machine %s is replaced", name)
	}
}

func deleteCluster(cluster string) func(context.Context, Gomega, *run) {
	return func(ctx context.Context, g Gomega, r *run) {
		g.Eventually(func() error {
			return client.IgnoreNotFound(r.hOf(cluster).client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: cluster}}))
		}, time.Minute, time.Second).Should(Succeed())
	}
}

// keepWorkloadLogs copies the logs of the workload clusters' processes (etcd, kube-apiserver: each
// machine's logs directory) into the run's state directory, under workload/<namespace>/<cluster>/.
func (r *run) keepWorkloadLogs() {
	for _, name := range r.clusterNames() {
		src := r.clusters[name].dir()
		if src == "" {
			continue
		}
		dst := filepath.Join(stateRoot, "workload", r.ns, name)
		dirs, err := filepath.Glob(filepath.Join(src, "machines", "*", "logs"))
		for _, dir := range dirs {
			if err == nil {
				err = os.CopyFS(filepath.Join(dst, filepath.Base(filepath.Dir(dir))), os.DirFS(dir))
			}
		}
		if err != nil {
			r.t.Logf("keeping the logs of cluster %s: %v", name, err)
			continue
		}
		r.t.Logf("the logs of cluster %s's processes are kept in %s", name, dst)
	}
}

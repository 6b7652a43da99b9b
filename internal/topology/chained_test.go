package topology

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
)

// walk runs an upgrade to its end as the topology controller does with the Runtime SDK on: every
// computation's hooks answered by answer, the pending-hooks annotation kept, each desired state applied
// with the control plane and the workers done at once, AfterClusterUpgrade called after the apply. It
// returns the hook calls in order, and the versions the control plane and the MachineDeployments took.
type walk struct {
	t       *testing.T
	bp      *Blueprint
	opts    Options
	answer  func(HookCall) HookResponse
	calls   []HookCall
	cpSteps []string
	mdSteps map[string][]string
	// upgradeSteps are the values the Cluster's upgrade-step annotation took ("" when removed).
	upgradeSteps []string
}

func (w *walk) run(cur *Current) *Current {
	w.t.Helper()
	if w.answer == nil {
		w.answer = blocking()
	}
	w.mdSteps = map[string][]string{}
	w.opts.RuntimeHooks = true
	for range 60 {
		cur.HookResponses = map[string]HookResponse{}
		var d *Desired
		for range maxRounds {
			var err error
			if d, err = Compute(context.Background(), w.bp, cur, w.opts); err != nil {
				w.t.Fatal(err)
			}
			if len(d.Hooks.Call) == 0 {
				break
			}
			for _, call := range d.Hooks.Call {
				w.calls = append(w.calls, call)
				cur.HookResponses[call.Hook] = w.answer(call)
			}
		}
		markHooks(cur.Cluster, d)
		step := d.Cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation]
		if n := len(w.upgradeSteps); n == 0 || w.upgradeSteps[n-1] != step {
			w.upgradeSteps = append(w.upgradeSteps, step)
		}
		if v := cpVersion(w.t, d); !d.ControlPlane.Held && (len(w.cpSteps) == 0 || w.cpSteps[len(w.cpSteps)-1] != v) {
			w.cpSteps = append(w.cpSteps, v)
		}
		for name, v := range mdVersions(d) {
			if steps := w.mdSteps[name]; len(steps) == 0 || steps[len(steps)-1] != v {
				w.mdSteps[name] = append(steps, v)
			}
		}
		cur = apply(w.t, cur, d, true)
		for _, call := range d.Hooks.CallAfterApply {
			w.calls = append(w.calls, call)
			if !w.answer(call).Blocking() {
				hooks.MarkDone(cur.Cluster, runtimehooksv1.Hook(call.Hook))
			}
		}
		if d.Upgrade.upgraded() && !hooks.IsPending(runtimehooksv1.AfterClusterUpgrade, cur.Cluster) {
			return cur
		}
	}
	w.t.Fatal("the upgrade does not end")
	return nil
}

// markHooks keeps the pending-hooks annotation as the controller does: the hooks done first, then the
// pending ones (a step's AfterControlPlaneUpgrade may be done and the next step's pending in one
// computation).
func markHooks(c *clusterv1.Cluster, d *Desired) {
	for _, h := range d.Hooks.MarkDone {
		hooks.MarkDone(c, runtimehooksv1.Hook(h))
	}
	for _, h := range d.Hooks.MarkPending {
		hooks.MarkPending(c, runtimehooksv1.Hook(h))
	}
}

// maxRounds is the topology controller's bound on the computations of one reconcile.
const maxRounds = 7

// hookLine writes a hook call in one line, for comparing sequences.
func hookLine(c HookCall) string {
	s := c.Hook
	if c.FromVersion != "" {
		s += " " + c.FromVersion + "->"
	} else {
		s += " "
	}
	s += c.ToVersion
	if c.Hook != AfterClusterUpgradeHook {
		s += fmt.Sprintf(" cp%v workers%v", c.ControlPlaneUpgrades, c.WorkersUpgrades)
	}
	return s
}

func hookLines(calls []HookCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, hookLine(c))
	}
	return out
}

// chainedFixture is a running Cluster at v1.30.0 with two MachineDeployments, its class listing
// Kubernetes versions from v1.30 to v1.34, and its topology moved to version.
func chainedFixture(t *testing.T, version string) (*Blueprint, *Current) {
	t.Helper()
	bp, cur := upgradeFixture(t, func(c *clusterv1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments = c.Spec.Topology.Workers.MachineDeployments[:2]
	})
	bp.ClusterClass.Spec.KubernetesVersions = []string{"v1.30.0", "v1.31.0", "v1.31.2", "v1.32.1", "v1.33.0", "v1.33.4", "v1.34.0"}
	cur.Cluster.Spec.Topology.Version = version
	return bp, cur
}

// TestChainedUpgradeFromKubernetesVersions: a change of spec.topology.version from v1.30 to v1.34 with
// the class's kubernetesVersions: the control plane goes through each minor at the last listed patch,
// the workers only to v1.33.4 (three minors, the most the skew policy allows) and v1.34.0; each hook
// is called once per step, with the plan still ahead.
func TestChainedUpgradeFromKubernetesVersions(t *testing.T) {
	g := NewWithT(t)
	bp, cur := chainedFixture(t, "v1.34.0")

	d := compute(t, bp, cur)
	g.Expect(d.Upgrade.ControlPlanePlan).To(Equal([]string{"v1.31.2", "v1.32.1", "v1.33.4", "v1.34.0"}))
	g.Expect(d.Upgrade.WorkersPlan).To(Equal([]string{"v1.33.4", "v1.34.0"}))
	g.Expect(d.Upgrade.PlanComputed).To(BeTrue())

	w := &walk{t: t, bp: bp}
	cur = w.run(cur)
	g.Expect(w.cpSteps).To(Equal([]string{"v1.31.2", "v1.32.1", "v1.33.4", "v1.34.0"}))
	g.Expect(w.mdSteps).To(Equal(map[string][]string{"md-1": {"v1.30.0", "v1.33.4", "v1.34.0"}, "md-2": {"v1.30.0", "v1.33.4", "v1.34.0"}}))
	// The Cluster's upgrade-step annotation says the control plane's step while the upgrade runs (so that
	// the control plane and MachineSets create Machines at it), and goes once AfterClusterUpgrade is done.
	g.Expect(w.upgradeSteps).To(Equal([]string{"v1.31.2", "v1.32.1", "v1.33.4", "v1.34.0"}))
	g.Expect(compute(t, bp, cur).Cluster.Annotations).NotTo(HaveKey(clusterv1.ClusterTopologyUpgradeStepAnnotation))
	g.Expect(hookLines(w.calls)).To(Equal([]string{
		"BeforeClusterUpgrade v1.30.0->v1.34.0 cp[v1.31.2 v1.32.1 v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"BeforeControlPlaneUpgrade v1.30.0->v1.31.2 cp[v1.31.2 v1.32.1 v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"AfterControlPlaneUpgrade v1.31.2 cp[v1.32.1 v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"BeforeControlPlaneUpgrade v1.31.2->v1.32.1 cp[v1.32.1 v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"AfterControlPlaneUpgrade v1.32.1 cp[v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"BeforeControlPlaneUpgrade v1.32.1->v1.33.4 cp[v1.33.4 v1.34.0] workers[v1.33.4 v1.34.0]",
		"AfterControlPlaneUpgrade v1.33.4 cp[v1.34.0] workers[v1.33.4 v1.34.0]",
		"BeforeWorkersUpgrade v1.30.0->v1.33.4 cp[v1.34.0] workers[v1.33.4 v1.34.0]",
		"AfterWorkersUpgrade v1.33.4 cp[v1.34.0] workers[v1.34.0]",
		"BeforeControlPlaneUpgrade v1.33.4->v1.34.0 cp[v1.34.0] workers[v1.34.0]",
		"AfterControlPlaneUpgrade v1.34.0 cp[] workers[v1.34.0]",
		"BeforeWorkersUpgrade v1.33.4->v1.34.0 cp[] workers[v1.34.0]",
		"AfterWorkersUpgrade v1.34.0 cp[] workers[]",
		"AfterClusterUpgrade v1.34.0",
	}))
	g.Expect(cur.Cluster.Annotations).NotTo(HaveKey("runtime.cluster.x-k8s.io/pending-hooks"))
}

// TestChainedUpgradeBlockingHookHoldsItsStep: a hook that blocks holds its step, and only it.
func TestChainedUpgradeBlockingHookHoldsItsStep(t *testing.T) {
	for _, tt := range []struct {
		hook, at   string
		cp, worker string // versions when held
	}{
		{BeforeControlPlaneUpgradeHook, "v1.32.1", "v1.31.2", "v1.30.0"},
		{AfterControlPlaneUpgradeHook, "v1.33.4", "v1.33.4", "v1.30.0"},
		{BeforeWorkersUpgradeHook, "v1.33.4", "v1.33.4", "v1.30.0"},
		{AfterWorkersUpgradeHook, "v1.33.4", "v1.33.4", "v1.33.4"},
	} {
		t.Run(tt.hook, func(t *testing.T) {
			g := NewWithT(t)
			bp, cur := chainedFixture(t, "v1.34.0")
			held := false
			w := &walk{t: t, bp: bp, answer: func(call HookCall) HookResponse {
				if call.Hook == tt.hook && call.ToVersion == tt.at && !held {
					return blocking(tt.hook)(call)
				}
				return HookResponse{}
			}}
			// Run until the hook first blocks, then check the state holds for a few rounds.
			w.opts.RuntimeHooks = true
			for range 30 {
				cur.HookResponses = map[string]HookResponse{}
				d := computeWalkRound(t, w, cur)
				if d.Upgrade.BlockingHook == tt.hook {
					for range 3 {
						cur = w.applyRound(cur, d)
						d = computeWalkRound(t, w, cur)
						g.Expect(d.Upgrade.BlockingHook).To(Equal(tt.hook))
						g.Expect(cpVersion(t, d)).To(Equal(tt.cp))
						g.Expect(mdVersions(d)).To(HaveEach(tt.worker))
					}
					held = true
					cur = w.run(cur)
					g.Expect(cpVersion(t, compute(t, bp, cur))).To(Equal("v1.34.0"))
					return
				}
				cur = w.applyRound(cur, d)
			}
			t.Fatalf("%s never blocked", tt.hook)
		})
	}
}

func computeWalkRound(t *testing.T, w *walk, cur *Current) *Desired {
	t.Helper()
	cur.HookResponses = map[string]HookResponse{}
	for range maxRounds {
		d, err := Compute(context.Background(), w.bp, cur, w.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Hooks.Call) == 0 {
			return d
		}
		for _, call := range d.Hooks.Call {
			cur.HookResponses[call.Hook] = w.answer(call)
		}
	}
	t.Fatal("the engine keeps asking for hooks")
	return nil
}

func (w *walk) applyRound(cur *Current, d *Desired) *Current {
	markHooks(cur.Cluster, d)
	return apply(w.t, cur, d, true)
}

// fakePlanner answers GenerateUpgradePlan with fixed steps and records the requests.
type fakePlanner struct {
	cp, workers []string
	err         error
	requests    []UpgradePlanRequest
}

func (p *fakePlanner) GenerateUpgradePlan(_ context.Context, req *UpgradePlanRequest) ([]string, []string, error) {
	r := *req
	r.Cluster = nil
	p.requests = append(p.requests, r)
	return p.cp, p.workers, p.err
}

// TestChainedUpgradeFromExtension: the class's upgrade plan extension gives the plan, workers' steps
// included, and takes precedence over kubernetesVersions.
func TestChainedUpgradeFromExtension(t *testing.T) {
	g := NewWithT(t)
	bp, cur := chainedFixture(t, "v1.33.0")
	bp.ClusterClass.Spec.Upgrade.External.GenerateUpgradePlanExtension = "plan.ext"
	planner := &fakePlanner{cp: []string{"v1.31.0", "v1.32.1", "v1.33.0"}, workers: []string{"v1.31.0", "v1.33.0"}}

	d, err := Compute(context.Background(), bp, cur, Options{UpgradePlanner: planner})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(planner.requests).To(Equal([]UpgradePlanRequest{{Extension: "plan.ext",
		FromControlPlaneKubernetesVersion: "v1.30.0", FromWorkersKubernetesVersion: "v1.30.0", ToKubernetesVersion: "v1.33.0"}}))
	g.Expect(d.Upgrade.ControlPlanePlan).To(Equal([]string{"v1.31.0", "v1.32.1", "v1.33.0"}))
	g.Expect(d.Upgrade.WorkersPlan).To(Equal([]string{"v1.31.0", "v1.33.0"}))

	// The extension's plan is asked again as the Cluster moves; it answers for the current versions.
	answers := map[string][2][]string{
		"v1.30.0/v1.30.0": {{"v1.31.0", "v1.32.1", "v1.33.0"}, {"v1.31.0", "v1.33.0"}},
		"v1.31.0/v1.30.0": {{"v1.32.1", "v1.33.0"}, {"v1.31.0", "v1.33.0"}},
		"v1.31.0/v1.31.0": {{"v1.32.1", "v1.33.0"}, {"v1.33.0"}},
		"v1.32.1/v1.31.0": {{"v1.33.0"}, {"v1.33.0"}},
		"v1.33.0/v1.31.0": {nil, {"v1.33.0"}},
	}
	w := &walk{t: t, bp: bp, opts: Options{UpgradePlanner: plannerFunc(func(req *UpgradePlanRequest) ([]string, []string, error) {
		a, ok := answers[req.FromControlPlaneKubernetesVersion+"/"+req.FromWorkersKubernetesVersion]
		if !ok {
			return nil, nil, fmt.Errorf("unexpected request %+v", *req)
		}
		return a[0], a[1], nil
	})}}
	w.run(cur)
	g.Expect(w.cpSteps).To(Equal([]string{"v1.31.0", "v1.32.1", "v1.33.0"}))
	g.Expect(w.mdSteps).To(Equal(map[string][]string{"md-1": {"v1.30.0", "v1.31.0", "v1.33.0"}, "md-2": {"v1.30.0", "v1.31.0", "v1.33.0"}}))

	// Without a planner (clusterctl alpha topology plan), or when the extension fails, the computation fails.
	_, err = Compute(context.Background(), bp, cur, Options{})
	g.Expect(err).To(MatchError(ContainSubstring(`gets its upgrade plans from the Runtime Extension "plan.ext", which cannot be called here`)))
	_, err = Compute(context.Background(), bp, cur, Options{UpgradePlanner: &fakePlanner{err: errors.New("boom")}})
	g.Expect(err).To(MatchError(ContainSubstring("failed to get the upgrade plan from plan.ext: boom")))
}

type plannerFunc func(*UpgradePlanRequest) ([]string, []string, error)

func (f plannerFunc) GenerateUpgradePlan(_ context.Context, req *UpgradePlanRequest) ([]string, []string, error) {
	return f(req)
}

// TestUpgradePlanErrors: a plan that breaks the rules fails the computation with upstream's message.
func TestUpgradePlanErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		versions []string
		planner  *fakePlanner
		wantErr  string
	}{
		{name: "kubernetesVersions lack a minor", versions: []string{"v1.30.0", "v1.31.0", "v1.33.0"},
			wantErr: "invalid ControlPlane upgrade plan: item 1; expecting a version with minor 31 or 32, found version v1.33.0"},
		{name: "extension skips a minor", planner: &fakePlanner{cp: []string{"v1.31.0", "v1.33.0"}},
			wantErr: "invalid ControlPlane upgrade plan: item 1; expecting a version with minor 31 or 32, found version v1.33.0"},
		{name: "extension's workers go too far", planner: &fakePlanner{cp: []string{"v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0"}, workers: []string{"v1.34.0"}},
			wantErr: "workers cannot go from minor 30 (v1.30.0) to minor 34 (v1.34.0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bp, cur := chainedFixture(t, "v1.33.0")
			if tt.planner != nil {
				bp.ClusterClass.Spec.Upgrade.External.GenerateUpgradePlanExtension = "plan.ext"
				if strings.Contains(tt.name, "too far") {
					cur.Cluster.Spec.Topology.Version = "v1.34.0"
				}
			}
			if tt.versions != nil {
				bp.ClusterClass.Spec.KubernetesVersions = tt.versions
			}
			opts := Options{}
			if tt.planner != nil {
				opts.UpgradePlanner = tt.planner
			}
			_, err := Compute(context.Background(), bp, cur, opts)
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

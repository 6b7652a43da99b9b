package lifecycle

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// planRequest asks for the plan of c from v1.31.4 (control plane) and v1.30.1 (workers) to v1.33.1.
func planRequest(c *clusterv1.Cluster) *topology.UpgradePlanRequest {
	return &topology.UpgradePlanRequest{
		Cluster: c, Extension: "plan.ext",
		FromControlPlaneKubernetesVersion: "v1.31.4", FromWorkersKubernetesVersion: "v1.30.1", ToKubernetesVersion: "v1.33.1",
	}
}

// servePlans registers a GenerateUpgradePlan handler named plan that answers with answer, sends each
// request on the returned channel and counts the calls.
func servePlans(t *testing.T, ext *runtimetest.Extension, calls *atomic.Int32, answer func(*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse)) <-chan *hooksv1.GenerateUpgradePlanRequest {
	t.Helper()
	got := make(chan *hooksv1.GenerateUpgradePlanRequest, 10)
	if err := extension.AddHandler(ext.Server, extension.Handler[*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse]{
		Hook: hooksv1.GenerateUpgradePlan, Name: "plan",
		Func: func(_ context.Context, req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
			calls.Add(1)
			got <- req
			answer(req, resp)
		},
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestGenerateUpgradePlan(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	got := servePlans(t, ext, &calls, func(req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
		resp.ControlPlaneUpgrades = []hooksv1.UpgradeStep{{Version: "v1.32.2"}, {Version: req.ToKubernetesVersion}}
		resp.WorkersUpgrades = []hooksv1.UpgradeStep{{Version: req.ToKubernetesVersion}}
	})
	p := &Planner{Runtime: clienttest.New(t, "ext", ext)}

	cp, workers, err := p.GenerateUpgradePlan(context.Background(), planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cp).To(Equal([]string{"v1.32.2", "v1.33.1"}))
	g.Expect(workers).To(Equal([]string{"v1.33.1"}))

	// What the extension received: upstream's request.
	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.FromControlPlaneKubernetesVersion).To(Equal("v1.31.4"))
	g.Expect(req.FromWorkersKubernetesVersion).To(Equal("v1.30.1"))
	g.Expect(req.ToKubernetesVersion).To(Equal("v1.33.1"))
}

// An answer with no workers' steps (capstan then defaults them) or no steps at all gives no versions.
func TestGenerateUpgradePlanWithoutSteps(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	_ = servePlans(t, ext, &calls, func(*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse) {})
	p := &Planner{Runtime: clienttest.New(t, "ext", ext)}
	cp, workers, err := p.GenerateUpgradePlan(context.Background(), planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cp).To(BeEmpty())
	g.Expect(workers).To(BeEmpty())
}

// Answers are kept for ten minutes per Cluster and versions: the topology is computed at every change of
// the Cluster, and the extension is asked once per step.
func TestGenerateUpgradePlanIsCached(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	_ = servePlans(t, ext, &calls, func(req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
		resp.ControlPlaneUpgrades = []hooksv1.UpgradeStep{{Version: req.ToKubernetesVersion}}
	})
	clock := clocktesting.NewFakeClock(time.Now())
	p := &Planner{Runtime: clienttest.New(t, "ext", ext), clock: clock}
	ctx := context.Background()

	cp, _, err := p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(1))
	cp[0] = "changed by the caller"

	// The same Cluster and versions: the cached answer, which the caller's change did not touch.
	cp, _, err = p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cp).To(Equal([]string{"v1.33.1"}))
	g.Expect(calls.Load()).To(BeEquivalentTo(1))

	// Other versions, or another Cluster of the same name (a new UID): asked again.
	other := planRequest(hookTestCluster())
	other.FromWorkersKubernetesVersion = "v1.31.4"
	_, _, err = p.GenerateUpgradePlan(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(2))
	recreated := hookTestCluster()
	recreated.UID = "uid-2"
	_, _, err = p.GenerateUpgradePlan(ctx, planRequest(recreated))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(3))

	// After ten minutes the extension is asked again.
	clock.Step(PlanCacheTTL - time.Second)
	_, _, err = p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(3))
	clock.Step(2 * time.Second)
	_, _, err = p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(4))
}

// A failure is an error that names the extension, and is not cached: the next computation asks again.
func TestGenerateUpgradePlanFailure(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	_ = servePlans(t, ext, &calls, func(_ *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
		resp.Status, resp.Message = hooksv1.ResponseStatusFailure, "no version of Kubernetes 1.32 is available"
	})
	p := &Planner{Runtime: clienttest.New(t, "ext", ext)}
	ctx := context.Background()

	_, _, err := p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).To(MatchError(`GenerateUpgradePlan handler "plan.ext" of ExtensionConfig ext failed: ` +
		"the handler answered with a failure: no version of Kubernetes 1.32 is available"))
	_, _, err = p.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).To(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(2))

	// An extension nobody serves.
	missing := planRequest(hookTestCluster())
	missing.Extension = "plan.missing"
	_, _, err = p.GenerateUpgradePlan(ctx, missing)
	g.Expect(err).To(MatchError(And(ContainSubstring(`GenerateUpgradePlan handler "plan.missing"`), ContainSubstring("no ExtensionConfig has discovered this handler"))))

	// Before the registry is filled: the error names the extension too.
	notReady := &Planner{Runtime: &runtimeclient.Client{Registry: registry.New()}}
	_, _, err = notReady.GenerateUpgradePlan(ctx, planRequest(hookTestCluster()))
	g.Expect(err).To(MatchError("calling the GenerateUpgradePlan extension plan.ext: " + runtimeclient.ErrNotReady.Error()))
	g.Expect(err).To(MatchError(runtimeclient.ErrNotReady))
}

// Without the Runtime SDK (feature gate RuntimeSDK off) a class that names an extension cannot be planned.
func TestGenerateUpgradePlanWithoutRuntimeSDK(t *testing.T) {
	g := NewWithT(t)
	_, _, err := (&Planner{}).GenerateUpgradePlan(context.Background(), planRequest(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}))
	g.Expect(err).To(MatchError(`can not use GenerateUpgradePlan extension "plan.ext" if RuntimeSDK feature flag is disabled`))
}

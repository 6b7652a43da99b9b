package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/internal/topology"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// serve registers a handler of hook that sends each request it receives on the returned channel and
// answers with answer.
func serve[Req hooksv1.RequestObject, Resp hooksv1.RetryResponseObject](t *testing.T, ext *runtimetest.Extension, hook hooksv1.Hook, answer func(hooksv1.RetryResponseObject)) <-chan Req {
	t.Helper()
	got := make(chan Req, 10)
	if err := extension.AddHandler(ext.Server, extension.Handler[Req, Resp]{
		Hook: hook, Name: strings.ToLower(string(hook)),
		Func: func(_ context.Context, req Req, resp Resp) {
			got <- req
			answer(resp)
		},
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// hold asks to be called again in 7 seconds.
func hold(resp hooksv1.RetryResponseObject) {
	resp.SetRetryAfterSeconds(7)
	resp.SetMessage("Waiting for the add-ons")
}

// holding is the blocking answer of hold.
var holding = topology.HookResponse{RetryAfter: 7 * time.Second, Message: "Waiting for the add-ons"}

func hookTestCluster() *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "uid-1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "capstan"}}}}
}

// steps is a plan as the requests carry it.
func steps(versions ...string) []hooksv1.UpgradeStepInfo {
	out := make([]hooksv1.UpgradeStepInfo, 0, len(versions))
	for _, v := range versions {
		out = append(out, hooksv1.UpgradeStepInfo{Version: v})
	}
	return out
}

// receive returns the request a handler received.
func receive[Req any](g Gomega, got <-chan Req) Req {
	var req Req
	g.Eventually(got).Should(Receive(&req))
	return req
}

// expectHookCluster checks the Cluster of a request: with its apiVersion and kind, without managed fields.
func expectHookCluster(g Gomega, c clusterv1.Cluster) {
	g.Expect(c.APIVersion).To(Equal(clusterv1.GroupVersion.String()))
	g.Expect(c.Kind).To(Equal("Cluster"))
	g.Expect(c.Name).To(Equal("c"))
	g.Expect(c.ManagedFields).To(BeEmpty())
}

// The plan of a chained upgrade as the engine hands it over: the control plane's remaining steps and the
// workers'.
var chained = topology.HookCall{ControlPlaneUpgrades: []string{"v1.32.2", "v1.33.1"}, WorkersUpgrades: []string{"v1.33.1"}}

func TestBeforeClusterUpgradeSendsThePlan(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.BeforeClusterUpgradeRequest, *hooksv1.BeforeClusterUpgradeResponse](t, ext, hooksv1.BeforeClusterUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := chained
	call.Hook, call.FromVersion, call.ToVersion = topology.BeforeClusterUpgradeHook, "v1.31.4", "v1.33.1"
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))
	g.Expect(resp.Blocking()).To(BeTrue())

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.FromKubernetesVersion).To(Equal("v1.31.4"))
	g.Expect(req.ToKubernetesVersion).To(Equal("v1.33.1"))
	g.Expect(req.ControlPlaneUpgrades).To(Equal(steps("v1.32.2", "v1.33.1")), cmp.Diff(steps("v1.32.2", "v1.33.1"), req.ControlPlaneUpgrades))
	g.Expect(req.WorkersUpgrades).To(Equal(steps("v1.33.1")))
}

func TestBeforeControlPlaneUpgrade(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.BeforeControlPlaneUpgradeRequest, *hooksv1.BeforeControlPlaneUpgradeResponse](t, ext, hooksv1.BeforeControlPlaneUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := chained
	call.Hook, call.FromVersion, call.ToVersion = topology.BeforeControlPlaneUpgradeHook, "v1.31.4", "v1.32.2"
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))
	g.Expect(resp.Blocking()).To(BeTrue())

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.FromKubernetesVersion).To(Equal("v1.31.4"))
	g.Expect(req.ToKubernetesVersion).To(Equal("v1.32.2"))
	g.Expect(req.ControlPlaneUpgrades).To(Equal(steps("v1.32.2", "v1.33.1")))
	g.Expect(req.WorkersUpgrades).To(Equal(steps("v1.33.1")))
}

func TestAfterControlPlaneUpgradeSendsThePlan(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.AfterControlPlaneUpgradeRequest, *hooksv1.AfterControlPlaneUpgradeResponse](t, ext, hooksv1.AfterControlPlaneUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := topology.HookCall{Hook: topology.AfterControlPlaneUpgradeHook, ToVersion: "v1.32.2", ControlPlaneUpgrades: []string{"v1.33.1"}, WorkersUpgrades: []string{"v1.33.1"}}
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.KubernetesVersion).To(Equal("v1.32.2"))
	g.Expect(req.ControlPlaneUpgrades).To(Equal(steps("v1.33.1")))
	g.Expect(req.WorkersUpgrades).To(Equal(steps("v1.33.1")))
}

func TestBeforeWorkersUpgrade(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse](t, ext, hooksv1.BeforeWorkersUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := topology.HookCall{Hook: topology.BeforeWorkersUpgradeHook, FromVersion: "v1.30.1", ToVersion: "v1.33.1", WorkersUpgrades: []string{"v1.33.1"}}
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))
	g.Expect(resp.Blocking()).To(BeTrue())

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.FromKubernetesVersion).To(Equal("v1.30.1"))
	g.Expect(req.ToKubernetesVersion).To(Equal("v1.33.1"))
	g.Expect(req.ControlPlaneUpgrades).To(BeNil(), "the control plane has no step left")
	g.Expect(req.WorkersUpgrades).To(Equal(steps("v1.33.1")))
}

func TestAfterWorkersUpgrade(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.AfterWorkersUpgradeRequest, *hooksv1.AfterWorkersUpgradeResponse](t, ext, hooksv1.AfterWorkersUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := topology.HookCall{Hook: topology.AfterWorkersUpgradeHook, ToVersion: "v1.32.2", ControlPlaneUpgrades: []string{"v1.33.1", "v1.34.0"}, WorkersUpgrades: []string{"v1.34.0"}}
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))
	g.Expect(resp.Blocking()).To(BeTrue())

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.KubernetesVersion).To(Equal("v1.32.2"))
	g.Expect(req.ControlPlaneUpgrades).To(Equal(steps("v1.33.1", "v1.34.0")))
	g.Expect(req.WorkersUpgrades).To(Equal(steps("v1.34.0")))
}

// AfterClusterUpgrade blocks as upstream's since v1.12: its retryAfterSeconds comes back.
func TestAfterClusterUpgradeBlocks(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	got := serve[*hooksv1.AfterClusterUpgradeRequest, *hooksv1.AfterClusterUpgradeResponse](t, ext, hooksv1.AfterClusterUpgrade, hold)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}

	call := topology.HookCall{Hook: topology.AfterClusterUpgradeHook, ToVersion: "v1.33.1"}
	resp, err := h.Call(context.Background(), hookTestCluster(), call)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(holding))
	g.Expect(resp.Blocking()).To(BeTrue())

	req := receive(g, got)
	expectHookCluster(g, req.Cluster)
	g.Expect(req.KubernetesVersion).To(Equal("v1.33.1"))
}

// A handler that lets the operation go on gives an answer that does not block, with its message.
func TestAnswersThatDoNotBlock(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	proceed := func(resp hooksv1.RetryResponseObject) { resp.SetMessage("Go ahead") }
	_ = serve[*hooksv1.BeforeControlPlaneUpgradeRequest, *hooksv1.BeforeControlPlaneUpgradeResponse](t, ext, hooksv1.BeforeControlPlaneUpgrade, proceed)
	_ = serve[*hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse](t, ext, hooksv1.BeforeWorkersUpgrade, proceed)
	_ = serve[*hooksv1.AfterWorkersUpgradeRequest, *hooksv1.AfterWorkersUpgradeResponse](t, ext, hooksv1.AfterWorkersUpgrade, proceed)
	_ = serve[*hooksv1.AfterClusterUpgradeRequest, *hooksv1.AfterClusterUpgradeResponse](t, ext, hooksv1.AfterClusterUpgrade, proceed)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext)}
	for _, hook := range []string{topology.BeforeControlPlaneUpgradeHook, topology.BeforeWorkersUpgradeHook, topology.AfterWorkersUpgradeHook, topology.AfterClusterUpgradeHook} {
		resp, err := h.Call(context.Background(), hookTestCluster(), topology.HookCall{Hook: hook, FromVersion: "v1.31.4", ToVersion: "v1.32.2"})
		g.Expect(err).NotTo(HaveOccurred(), hook)
		g.Expect(resp).To(Equal(topology.HookResponse{Message: "Go ahead"}), hook)
		g.Expect(resp.Blocking()).To(BeFalse(), hook)
	}
}

// A handler that fails fails the hook, with a Warning event on the Cluster.
func TestFailedHookIsAnErrorAndAnEvent(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	_ = serve[*hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse](t, ext, hooksv1.BeforeWorkersUpgrade, func(resp hooksv1.RetryResponseObject) {
		resp.SetStatus(hooksv1.ResponseStatusFailure)
		resp.SetMessage("drain failed")
	})
	recorder := record.NewFakeRecorder(1)
	h := &Hooks{Runtime: clienttest.New(t, "ext", ext), Recorder: recorder}
	_, err := h.Call(context.Background(), hookTestCluster(), topology.HookCall{Hook: topology.BeforeWorkersUpgradeHook, FromVersion: "v1.31.4", ToVersion: "v1.32.2"})
	g.Expect(err).To(MatchError(`BeforeWorkersUpgrade handler "beforeworkersupgrade.ext" of ExtensionConfig ext failed: the handler answered with a failure: drain failed`))
	g.Expect(recorder.Events).To(Receive(Equal(corev1.EventTypeWarning + " " + FailedEventReason +
		` BeforeWorkersUpgrade hook failed: BeforeWorkersUpgrade handler "beforeworkersupgrade.ext" of ExtensionConfig ext failed: the handler answered with a failure: drain failed`)))
}

// A hook the topology controller does not call is refused before any Extension is called (Runtime is nil
// here).
func TestCallRefusesOtherHooks(t *testing.T) {
	g := NewWithT(t)
	_, err := (&Hooks{}).Call(context.Background(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, topology.HookCall{Hook: "BeforeClusterDelete"})
	g.Expect(err).To(MatchError("BeforeClusterDelete is not a lifecycle hook of managed topologies"))
}

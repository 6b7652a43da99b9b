package machine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// updateCall is what the Machine controller passed to UpdateMachine.
type updateCall struct {
	version          string
	infra, bootstrap string
}

// testUpdaters stands in for the UpdateMachine hook of the Runtime SDK (internal/runtime/inplace calls the
// real one): each test registers the answers for its Machine, by namespace.
type testUpdaters struct {
	mu      sync.Mutex
	answers map[string]func(n int) (time.Duration, string, error)
	calls   map[string][]updateCall
}

var updaters = &testUpdaters{answers: map[string]func(int) (time.Duration, string, error){}, calls: map[string][]updateCall{}}

func (u *testUpdaters) UpdateMachine(_ context.Context, m *clusterv1.Machine, infra, bootstrap *unstructured.Unstructured) (time.Duration, string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	call := updateCall{infra: infra.GetName()}
	if m.Spec.Version != nil {
		call.version = *m.Spec.Version
	}
	if bootstrap != nil {
		call.bootstrap = bootstrap.GetName()
	}
	u.calls[m.Namespace] = append(u.calls[m.Namespace], call)
	answer, ok := u.answers[m.Namespace]
	if !ok {
		return 0, "", errors.New("no answer registered for this Machine's namespace")
	}
	return answer(len(u.calls[m.Namespace]))
}

func (u *testUpdaters) answer(ns string, f func(n int) (time.Duration, string, error)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.answers[ns] = f
}

func (u *testUpdaters) callsOf(ns string) []updateCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]updateCall(nil), u.calls[ns]...)
}

// annotate sets annotations on obj (read anew) with a merge patch.
func annotate(t *testing.T, obj client.Object, annotations map[string]string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	before := obj.DeepCopyObject().(client.Object)
	all := obj.GetAnnotations()
	if all == nil {
		all = map[string]string{}
	}
	for k, v := range annotations {
		all[k] = v
	}
	obj.SetAnnotations(all)
	g.Expect(env.Client.Patch(context.Background(), obj, client.MergeFrom(before))).To(Succeed())
}

func updating(g Gomega, m *clusterv1.Machine) *metav1.Condition {
	c := conditions.GetV1Beta2(getMachine(g, m), clusterv1.MachineUpdatingV1Beta2Condition)
	g.Expect(c).NotTo(BeNil(), "the Machine has an Updating condition")
	return c
}

// An in-place update as the owner of a Machine starts it (upstream v1.12's protocol): the Machine is
// Updating from the moment it is marked; the UpdateMachine hook is called once the hook is pending and the
// InfraMachine and bootstrap config are marked too, again while it asks for a retry; then every mark goes.
func TestMachineInPlaceUpdate(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	_, tm, _ := runningMachine(t, builder.V1Beta1, ns)
	g.Eventually(func(g Gomega) {
		c := updating(g, tm.machine)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineNotUpdatingV1Beta2Reason))
	}, timeout, interval).Should(Succeed())
	updaters.answer(ns, func(n int) (time.Duration, string, error) {
		if n < 3 {
			return time.Second, "restarting kube-apiserver", nil
		}
		return 0, "", nil
	})

	// Marked by its owner, without the pending hook yet: Updating, not Ready, and no call.
	annotate(t, tm.machine, map[string]string{clusterv1.UpdateInProgressAnnotation: ""})
	g.Eventually(func(g Gomega) {
		c := updating(g, tm.machine)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineInPlaceUpdatingV1Beta2Reason))
		g.Expect(c.Message).To(Equal("In-place update in progress"))
		m := getMachine(g, tm.machine)
		g.Expect(v1beta2Status(m, clusterv1.MachineReadyV1Beta2Condition)).To(Equal(metav1.ConditionFalse))
		g.Expect(conditions.GetV1Beta2(m, clusterv1.MachineReadyV1Beta2Condition).Message).To(ContainSubstring("* Updating: In-place update in progress"))
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "v1beta1 has no Updating phase")
	}, timeout, interval).Should(Succeed())
	g.Expect(updaters.callsOf(ns)).To(BeEmpty(), "the hook waits until it is pending")

	// The hook pending, the InfraMachine marked but not the bootstrap config: still no call.
	annotate(t, tm.machine, map[string]string{runtimev1.PendingHooksAnnotation: string(runtimehooksv1.UpdateMachine)})
	annotate(t, tm.infra, map[string]string{clusterv1.UpdateInProgressAnnotation: ""})
	g.Consistently(func() []updateCall { return updaters.callsOf(ns) }, 2*time.Second, interval).Should(BeEmpty(),
		"the bootstrap config is not marked yet")

	// Everything marked: the hook is called, asks for retries (its message on the condition), then completes.
	annotate(t, tm.bootstrap, map[string]string{clusterv1.UpdateInProgressAnnotation: ""})
	g.Eventually(func(g Gomega) {
		g.Expect(updating(g, tm.machine).Message).To(Equal("In-place update in progress: restarting kube-apiserver"))
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		m := getMachine(g, tm.machine)
		g.Expect(m.Annotations).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation))
		g.Expect(m.Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation))
		c := updating(g, tm.machine)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(v1beta2Status(m, clusterv1.MachineReadyV1Beta2Condition)).To(Equal(metav1.ConditionTrue))
		for _, obj := range []*unstructured.Unstructured{tm.infra.DeepCopy(), tm.bootstrap.DeepCopy()} {
			g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			g.Expect(obj.GetAnnotations()).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation), obj.GetKind())
		}
	}, timeout, interval).Should(Succeed())
	calls := updaters.callsOf(ns)
	g.Expect(calls).To(HaveLen(3), "called until it no longer asks for a retry, and not after")
	g.Expect(calls[0]).To(Equal(updateCall{version: *tm.machine.Spec.Version, infra: tm.infra.GetName(), bootstrap: tm.bootstrap.GetName()}))
	g.Consistently(func() []updateCall { return updaters.callsOf(ns) }, time.Second, interval).Should(HaveLen(3))
}

// A failing hook says so on the Updating condition and is tried again.
func TestMachineInPlaceUpdateFails(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	_, tm, _ := runningMachine(t, builder.V1Beta1, ns)
	updaters.answer(ns, func(int) (time.Duration, string, error) { return 0, "", errors.New("the node agent is down") })
	annotate(t, tm.infra, map[string]string{clusterv1.UpdateInProgressAnnotation: ""})
	annotate(t, tm.bootstrap, map[string]string{clusterv1.UpdateInProgressAnnotation: ""})
	annotate(t, tm.machine, map[string]string{clusterv1.UpdateInProgressAnnotation: "", runtimev1.PendingHooksAnnotation: string(runtimehooksv1.UpdateMachine)})
	g.Eventually(func(g Gomega) {
		c := updating(g, tm.machine)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineInPlaceUpdateFailedV1Beta2Reason))
		g.Expect(c.Message).To(Equal("UpdateMachine hook failed: please check controller logs for errors"))
		g.Expect(len(updaters.callsOf(ns))).To(BeNumerically(">=", 2), "retried")
	}, timeout, interval).Should(Succeed())

	// The owner gives up and takes its mark away: the pending hook and the other marks are cleaned up.
	removeAnnotation(t, tm.machine, clusterv1.UpdateInProgressAnnotation)
	g.Eventually(func(g Gomega) {
		m := getMachine(g, tm.machine)
		g.Expect(m.Annotations).NotTo(HaveKey(runtimev1.PendingHooksAnnotation))
		g.Expect(updating(g, tm.machine).Status).To(Equal(metav1.ConditionFalse))
		infra := tm.infra.DeepCopy()
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(infra), infra)).To(Succeed())
		g.Expect(infra.GetAnnotations()).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation))
	}, timeout, interval).Should(Succeed())
}

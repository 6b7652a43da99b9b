package kubeadmcontrolplane_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/hooks"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// namespaceCheckers gives each test namespace its own CanUpdateMachine extension; a namespace without one
// has none registered (its Machines are replaced, as without the gate: the other tests of the suite).
type namespaceCheckers struct {
	byNamespace sync.Map
	none        *inplace.Updater
}

var inPlaceCheckers = func() *namespaceCheckers {
	reg := registry.New()
	if err := reg.WarmUp(nil); err != nil {
		panic(err)
	}
	return &namespaceCheckers{none: &inplace.Updater{Runtime: &runtimeclient.Client{Registry: reg}}}
}()

func (c *namespaceCheckers) CanUpdateMachine(ctx context.Context, current, desired inplace.Objects) (bool, []string, error) {
	if u, ok := c.byNamespace.Load(current.Machine.Namespace); ok {
		return u.(*inplace.Updater).CanUpdateMachine(ctx, current, desired)
	}
	return c.none.CanUpdateMachine(ctx, current, desired)
}

// serveCanUpdateMachine registers for ns an extension whose CanUpdateMachine handler covers a version change
// of the Machine and the KubeadmConfig when accept, nothing otherwise (and one more handler of the hook when
// twice); it returns how many times it was called.
func serveCanUpdateMachine(t *testing.T, ns string, accept bool, twice ...bool) func() int {
	t.Helper()
	ext := runtimetest.Start(t)
	var mu sync.Mutex
	calls := 0
	if len(twice) > 0 && twice[0] {
		if err := extension.AddHandler(ext.Server, extension.Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
			Hook: hooksv1.CanUpdateMachine, Name: "another",
			Func: func(_ context.Context, _ *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
				resp.SetStatus(hooksv1.ResponseStatusSuccess)
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := extension.AddHandler(ext.Server, extension.Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
		Hook: hooksv1.CanUpdateMachine, Name: "can-update",
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
			mu.Lock()
			calls++
			mu.Unlock()
			resp.SetStatus(hooksv1.ResponseStatusSuccess)
			if !accept {
				return
			}
			resp.MachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType,
				Patch: []byte(`{"spec":{"version":"` + req.Desired.Machine.Spec.Version + `"}}`)}
			// The KubeadmConfig as wanted: the first Machine's init configuration becomes a join configuration.
			desired, ok := req.Desired.BootstrapConfig.Object.(*unstructured.Unstructured)
			if !ok {
				return
			}
			resp.BootstrapConfigPatch = hooksv1.Patch{PatchType: hooksv1.JSONPatchType,
				Patch: mustJSON(t, []map[string]any{{"op": "replace", "path": "/spec", "value": desired.Object["spec"]}})}
		},
	}); err != nil {
		t.Fatal(err)
	}
	inPlaceCheckers.byNamespace.Store(ns, &inplace.Updater{Runtime: clienttest.New(t, "inplace-"+ns, ext)})
	t.Cleanup(func() { inPlaceCheckers.byNamespace.Delete(ns) })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}

// finishInPlaceUpdate does what the core's Machine controller does once UpdateMachine completed: it removes
// the marks from the InfraMachine, the KubeadmConfig and the Machine.
func finishInPlaceUpdate(ctx context.Context, g Gomega, m *clusterv1.Machine) {
	unmark := func(obj client.Object) {
		g.Eventually(func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			before, _ := obj.DeepCopyObject().(client.Object)
			annotations := obj.GetAnnotations()
			delete(annotations, clusterv1.UpdateInProgressAnnotation)
			obj.SetAnnotations(annotations)
			if mm, ok := obj.(*clusterv1.Machine); ok {
				hooks.MarkDone(mm, hooksv1.UpdateMachine)
			}
			return env.Client.Patch(ctx, obj, client.MergeFrom(before))
		}, timeout, interval).Should(Succeed())
	}
	infra := &unstructured.Unstructured{}
	infra.SetAPIVersion(m.Spec.InfrastructureRef.APIVersion)
	infra.SetKind(m.Spec.InfrastructureRef.Kind)
	infra.SetNamespace(m.Namespace)
	infra.SetName(m.Spec.InfrastructureRef.Name)
	unmark(infra)
	unmark(&bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}})
	unmark(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}})
}

// With the InPlaceUpdates gate on and a CanUpdateMachine extension that covers a version change, a patch
// upgrade of a three-Machine control plane with maxSurge 0 updates the Machines in place, one at a time: no
// Machine is created or deleted; each Machine, its KubeadmConfig and InfraMachine are marked, the Machine
// gets the new version and the UpdateMachine hook pending, and the control plane waits until the update
// completes before the next one.
func TestInPlaceUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	calls := serveCanUpdateMachine(t, ns, true)
	cluster, kcp := newMaxSurge0ControlPlane(ctx, g, ns, "inplace")
	var names []string
	for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
		names = append(names, m.Name)
	}

	maxMachines := watchMachineCount(ctx, t, ns, cluster.Name)
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Version = "v1.36.1" })
	updated := map[string]bool{}
	for range 3 {
		var m clusterv1.Machine
		g.Eventually(func(g Gomega) {
			machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
			g.Expect(machines).To(HaveLen(3))
			var inProgress []clusterv1.Machine
			for _, mm := range machines {
				g.Expect(names).To(ContainElement(mm.Name))
				if _, ok := mm.Annotations[clusterv1.UpdateInProgressAnnotation]; ok {
					inProgress = append(inProgress, mm)
				}
			}
			g.Expect(inProgress).To(HaveLen(1), "one update at a time")
			m = inProgress[0]
			g.Expect(updated).NotTo(HaveKey(m.Name))
			g.Expect(hooks.IsPending(hooksv1.UpdateMachine, &m)).To(BeTrue())
			g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.36.1")))
			c := conditions.GetV1Beta2(&m, clusterv1.MachineUpToDateV1Beta2Condition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(clusterv1.MachineUpToDateUpdatingV1Beta2Reason))
		}, timeout, interval).Should(Succeed())
		g.Expect(m.Annotations).To(HaveKey(controlplanev1.KubeadmClusterConfigurationAnnotation))
		cfg := &bootstrapv1.KubeadmConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
		g.Expect(cfg.Annotations).To(HaveKey(clusterv1.UpdateInProgressAnnotation))
		g.Expect(cfg.Spec.InitConfiguration).To(BeNil(), "the init configuration goes, as upstream")
		g.Expect(cfg.Spec.JoinConfiguration).NotTo(BeNil())
		infra := &unstructured.Unstructured{}
		infra.SetAPIVersion(m.Spec.InfrastructureRef.APIVersion)
		infra.SetKind(m.Spec.InfrastructureRef.Kind)
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
		g.Expect(infra.GetAnnotations()).To(HaveKey(clusterv1.UpdateInProgressAnnotation))

		if len(updated) == 0 {
			// While the update is in progress the control plane waits, and the extension is not asked again.
			seen := calls()
			g.Consistently(func(g Gomega) {
				var marked int
				for _, mm := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
					if _, ok := mm.Annotations[clusterv1.UpdateInProgressAnnotation]; ok {
						marked++
					}
				}
				g.Expect(marked).To(Equal(1))
			}, "2s", interval).Should(Succeed())
			g.Expect(calls()).To(Equal(seen))
		}
		// The Machine controller is done: the next Machine follows.
		updated[m.Name] = true
		finishInPlaceUpdate(ctx, g, &m)
	}

	// Every Machine is up to date at the new version: no rollout follows.
	readyKCP(ctx, g, kcp, 3, "v1.36.1")
	g.Eventually(func(g Gomega) {
		machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
		g.Expect(machines).To(HaveLen(3))
		for _, m := range machines {
			g.Expect(names).To(ContainElement(m.Name))
			g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.36.1")))
			g.Expect(conditions.IsV1Beta2True(&m, clusterv1.MachineUpToDateV1Beta2Condition)).To(BeTrue())
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(maxMachines()).To(Equal(3), "no Machine created")
	g.Expect(calls()).To(BeNumerically(">=", 3))
}

// newMaxSurge0ControlPlane creates a ready three-Machine control plane whose rollouts delete before they
// create (maxSurge 0): the Machine a rollout would delete is the one it tries to update in place.
func newMaxSurge0ControlPlane(ctx context.Context, g Gomega, ns, name string) (*clusterv1.Cluster, *controlplanev1.KubeadmControlPlane) {
	cluster, kcp := newControlPlane(ctx, g, ns, name, 3)
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) {
		k.Spec.RolloutStrategy = &controlplanev1.RolloutStrategy{Type: controlplanev1.RollingUpdateStrategyType,
			RollingUpdate: &controlplanev1.RollingUpdate{MaxSurge: ptr.To(intstr.FromInt32(0))}}
	})
	readyKCP(ctx, g, kcp, 3, "v1.36.0")
	return cluster, kcp
}

// An extension that covers nothing: the Machines are replaced, as without in-place updates.
func TestInPlaceUpdateRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	calls := serveCanUpdateMachine(t, ns, false)
	cluster, kcp := newMaxSurge0ControlPlane(ctx, g, ns, "refused")
	var names []string
	for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
		names = append(names, m.Name)
	}

	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Version = "v1.36.1" })
	readyKCP(ctx, g, kcp, 3, "v1.36.1")
	for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
		g.Expect(names).NotTo(ContainElement(m.Name), "replaced")
		g.Expect(m.Annotations).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation))
	}
	g.Expect(calls()).To(BeNumerically(">=", 1))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Two CanUpdateMachine handlers for the namespace: the rollout stops with upstream's error (no Machine is
// updated in place, deleted or created) until one goes.
func TestInPlaceUpdateTwoExtensions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	calls := serveCanUpdateMachine(t, ns, true, true)
	cluster, kcp := newMaxSurge0ControlPlane(ctx, g, ns, "two")
	var names []string
	for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
		names = append(names, m.Name)
	}
	patchKCP(ctx, g, kcp, func(k *controlplanev1.KubeadmControlPlane) { k.Spec.Version = "v1.36.1" })
	g.Consistently(func(g Gomega) {
		machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
		g.Expect(machines).To(HaveLen(3))
		for _, m := range machines {
			g.Expect(names).To(ContainElement(m.Name))
			g.Expect(m.Annotations).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation))
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue())
		}
	}, "5s", interval).Should(Succeed())
	g.Expect(calls()).To(BeZero())

	// With one handler left, the rollout goes on in place.
	serveCanUpdateMachine(t, ns, true)
	g.Eventually(func(g Gomega) {
		var marked int
		for _, m := range controlPlaneMachines(ctx, g, ns, cluster.Name) {
			if _, ok := m.Annotations[clusterv1.UpdateInProgressAnnotation]; ok {
				marked++
			}
		}
		g.Expect(marked).To(Equal(1))
	}, timeout, interval).Should(Succeed())
}

// A trigger that stopped after marking the Machine (the KubeadmControlPlane's next writes failed) is
// completed at the next reconcile: the InfraMachine and the KubeadmConfig get marked, the Machine gets the
// UpdateMachine hook pending; the control plane then waits for the update as for any other.
func TestInPlaceTriggerCompleted(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	serveCanUpdateMachine(t, ns, true)
	cluster, kcp := newControlPlane(ctx, g, ns, "halfway", 1)
	readyKCP(ctx, g, kcp, 1, "v1.36.0")
	m := controlPlaneMachines(ctx, g, ns, cluster.Name)[0]
	before := m.DeepCopy()
	m.Annotations[clusterv1.UpdateInProgressAnnotation] = ""
	g.Expect(env.Client.Patch(ctx, &m, client.MergeFrom(before))).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&m), got)).To(Succeed())
		g.Expect(hooks.IsPending(hooksv1.UpdateMachine, got)).To(BeTrue())
		cfg := &bootstrapv1.KubeadmConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.Bootstrap.ConfigRef.Name}, cfg)).To(Succeed())
		g.Expect(cfg.Annotations).To(HaveKey(clusterv1.UpdateInProgressAnnotation))
		infra := &unstructured.Unstructured{}
		infra.SetAPIVersion(m.Spec.InfrastructureRef.APIVersion)
		infra.SetKind(m.Spec.InfrastructureRef.Kind)
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
		g.Expect(infra.GetAnnotations()).To(HaveKey(clusterv1.UpdateInProgressAnnotation))
	}, timeout, interval).Should(Succeed())

	finishInPlaceUpdate(ctx, g, &m)
	readyKCP(ctx, g, kcp, 1, "v1.36.0")
	machines := controlPlaneMachines(ctx, g, ns, cluster.Name)
	g.Expect(machines).To(HaveLen(1))
	g.Expect(machines[0].Name).To(Equal(m.Name))
}

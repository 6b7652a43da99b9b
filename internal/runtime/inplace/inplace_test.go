package inplace

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/pkg/extension"
)

func machine() *clusterv1beta1.Machine {
	return &clusterv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-1", UID: "uid-1", Labels: map[string]string{"l": "v"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "capstan"}}},
		Spec: clusterv1beta1.MachineSpec{
			ClusterName: "c",
			Version:     ptr.To("v1.36.1"),
			InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "LocalMachine",
				Namespace: "ns", Name: "cp-1"},
			Bootstrap: clusterv1beta1.Bootstrap{ConfigRef: &corev1.ObjectReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1beta2",
				Kind: "KubeadmConfig", Namespace: "ns", Name: "cp-1"}},
		},
		Status: clusterv1beta1.MachineStatus{Phase: "Running"},
	}
}

func provider(apiVersion, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"size": "large"},
		"status": map[string]any{"ready": true},
	}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName("cp-1")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "capstan"}})
	return u
}

func serveUpdateMachine(t *testing.T, ext *runtimetest.Extension, name string, f func(*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse)) {
	t.Helper()
	if err := extension.AddHandler(ext.Server, extension.Handler[*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse]{
		Hook: hooksv1.UpdateMachine, Name: name,
		Func: func(_ context.Context, req *hooksv1.UpdateMachineRequest, resp *hooksv1.UpdateMachineResponse) {
			resp.SetStatus(hooksv1.ResponseStatusSuccess)
			f(req, resp)
		},
	}); err != nil {
		t.Fatal(err)
	}
}

// The request carries the Machine as v1beta2 and the provider objects, each with its kind, names, labels,
// annotations and spec only; an answer asking for a retry is kept until then, without calling again.
func TestUpdateMachine(t *testing.T) {
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var calls atomic.Int32
	var got *hooksv1.UpdateMachineRequest
	serveUpdateMachine(t, ext, "update", func(req *hooksv1.UpdateMachineRequest, resp *hooksv1.UpdateMachineResponse) {
		got = req
		if calls.Add(1) == 1 {
			resp.RetryAfterSeconds = 5
			resp.Message = "restarting the kubelet"
		}
	})
	now := time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)
	u := &Updater{Runtime: clienttest.New(t, "ext", ext), now: func() time.Time { return now }}
	ctx := context.Background()
	m := machine()

	after, message, err := u.UpdateMachine(ctx, m, provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine"), provider("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfig"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(5 * time.Second))
	g.Expect(message).To(Equal("restarting the kubelet"))

	desired := got.Desired.Machine
	g.Expect(desired.APIVersion).To(Equal(clusterv1.GroupVersion.String()))
	g.Expect(desired.Kind).To(Equal("Machine"))
	g.Expect(desired.Name).To(Equal("cp-1"))
	g.Expect(desired.Labels).To(Equal(map[string]string{"l": "v"}))
	g.Expect(desired.ManagedFields).To(BeEmpty())
	g.Expect(desired.Spec.Version).To(Equal("v1.36.1"))
	g.Expect(desired.Spec.InfrastructureRef).To(Equal(clusterv1.ContractVersionedObjectReference{
		APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachine", Name: "cp-1"}))
	g.Expect(desired.Status.Phase).To(BeEmpty(), "no status is sent")
	infra := string(got.Desired.InfrastructureMachine.Raw)
	g.Expect(infra).To(ContainSubstring(`"kind":"LocalMachine"`))
	g.Expect(infra).To(ContainSubstring(`"spec":{"size":"large"}`))
	g.Expect(infra).NotTo(ContainSubstring("status"))
	g.Expect(infra).NotTo(ContainSubstring("managedFields"))
	g.Expect(string(got.Desired.BootstrapConfig.Raw)).To(ContainSubstring(`"kind":"KubeadmConfig"`))

	// Before the retry time the Extension is not called again.
	now = now.Add(2 * time.Second)
	after, message, err = u.UpdateMachine(ctx, m, provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(3 * time.Second))
	g.Expect(message).To(Equal("restarting the kubelet"))
	g.Expect(calls.Load()).To(Equal(int32(1)))

	// Then it is, and the update completes.
	now = now.Add(3 * time.Second)
	after, _, err = u.UpdateMachine(ctx, m, provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(BeZero())
	g.Expect(calls.Load()).To(Equal(int32(2)))
	g.Expect(got.Desired.BootstrapConfig.Raw).To(BeEmpty(), "a Machine without a bootstrap config sends none")
}

// As upstream, one handler and only one must serve UpdateMachine; a failure answered is an error.
func TestUpdateMachineRefusals(t *testing.T) {
	infra := provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine")
	ctx := context.Background()

	_, _, err := (&Updater{}).UpdateMachine(ctx, machine(), infra, nil)
	NewWithT(t).Expect(err).To(MatchError("the UpdateMachine hook cannot be called: the RuntimeSDK feature gate is off"))

	none := runtimetest.Start(t)
	if err := extension.AddHandler(none.Server, extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]{
		Hook: hooksv1.BeforeClusterCreate, Name: "create", Func: func(context.Context, *hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse) {},
	}); err != nil {
		t.Fatal(err)
	}
	_, _, err = (&Updater{Runtime: clienttest.New(t, "ext", none)}).UpdateMachine(ctx, machine(), infra, nil)
	NewWithT(t).Expect(err).To(MatchError("no extensions registered for UpdateMachine hook"))

	two := runtimetest.Start(t)
	serveUpdateMachine(t, two, "a", func(*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse) {})
	serveUpdateMachine(t, two, "b", func(*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse) {})
	_, _, err = (&Updater{Runtime: clienttest.New(t, "ext", two)}).UpdateMachine(ctx, machine(), infra, nil)
	NewWithT(t).Expect(err).To(MatchError("found multiple UpdateMachine hooks (a.ext,b.ext): only one hook is supported"))

	failing := runtimetest.Start(t)
	serveUpdateMachine(t, failing, "update", func(_ *hooksv1.UpdateMachineRequest, resp *hooksv1.UpdateMachineResponse) {
		resp.SetStatus(hooksv1.ResponseStatusFailure)
		resp.SetMessage("the node agent is down")
	})
	_, _, err = (&Updater{Runtime: clienttest.New(t, "ext", failing)}).UpdateMachine(ctx, machine(), infra, nil)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("the handler answered with a failure: the node agent is down")))
}

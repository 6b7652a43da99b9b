package inplace

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest"
	"github.com/capstan-dev/capstan/internal/runtime/runtimetest/clienttest"
	"github.com/capstan-dev/capstan/pkg/extension"
)

// currentAndDesired returns a Machine at v1.36.1 with its objects, and the same wanted at v1.36.2, with a
// bigger InfraMachine and a changed KubeadmConfig; fields a rollout never changes in place (taints,
// readiness gates) differ too.
func currentAndDesired() (Objects, Objects) {
	current := Objects{Machine: machine(), Infra: provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine"),
		Bootstrap: provider("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig")}
	desired := Objects{Machine: machine(), Infra: provider("infrastructure.cluster.x-k8s.io/v1beta2", "LocalMachine"),
		Bootstrap: provider("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig")}
	desired.Machine.Spec.Version = ptr.To("v1.36.2")
	desired.Machine.Spec.ProviderID = ptr.To("local://cp-1")
	desired.Infra.Object["spec"] = map[string]any{"size": "huge"}
	desired.Bootstrap.Object["spec"] = map[string]any{"size": "large", "files": []any{"a"}}
	return current, desired
}

func TestCanUpdatePatchesAndMismatches(t *testing.T) {
	machinePatch := hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: []byte(`[{"op":"replace","path":"/spec/version","value":"v1.36.2"}]`)}
	infraPatch := hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"size":"huge"}}`)}
	bootstrapPatch := hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: []byte(`[{"op":"add","path":"/spec/files","value":["a"]}]`)}
	tests := []struct {
		name    string
		resp    hooksv1.CanUpdateMachineResponse
		reasons []string
		err     string
	}{
		{name: "no patch: every object differs", reasons: []string{"Machine cannot", "KubeadmConfig cannot", "LocalMachine cannot"}},
		{name: "all patched", resp: hooksv1.CanUpdateMachineResponse{MachinePatch: machinePatch, InfrastructureMachinePatch: infraPatch, BootstrapConfigPatch: bootstrapPatch}},
		{name: "the infra machine is not covered", resp: hooksv1.CanUpdateMachineResponse{MachinePatch: machinePatch, BootstrapConfigPatch: bootstrapPatch},
			reasons: []string{"LocalMachine cannot"}},
		{name: "changes outside the spec are ignored", resp: hooksv1.CanUpdateMachineResponse{
			MachinePatch:               hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"metadata":{"labels":{"x":"y"}},"spec":{"version":"v1.36.2"}}`)},
			InfrastructureMachinePatch: hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"metadata":{"name":"other"}}`)},
			BootstrapConfigPatch:       bootstrapPatch,
		}, reasons: []string{"LocalMachine cannot"}},
		{name: "a bad patch", resp: hooksv1.CanUpdateMachineResponse{MachinePatch: hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: []byte(`{}`)}},
			err: "Machine: decoding the JSON patch"},
		{name: "an unknown patch type", resp: hooksv1.CanUpdateMachineResponse{InfrastructureMachinePatch: hooksv1.Patch{PatchType: "Strategic", Patch: []byte(`{}`)}},
			err: `LocalMachine: unknown patch type "Strategic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			current, desired := currentAndDesired()
			req, err := canUpdateMachineRequest(context.Background(), current, desired)
			g.Expect(err).NotTo(HaveOccurred())
			err = applyCanUpdatePatches(req, &tt.resp)
			if tt.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(req.Current.Machine.Labels).NotTo(HaveKey("x"))
			g.Expect(req.Current.InfrastructureMachine.Object.(*unstructured.Unstructured).GetName()).To(Equal("cp-1"))
			reasons, err := canUpdateMismatches(req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reasons).To(HaveLen(len(tt.reasons)))
			for i, r := range tt.reasons {
				g.Expect(reasons[i]).To(HavePrefix(r))
			}
		})
	}
}

// The request carries the Machines as v1beta2 and the other objects with their kind, names, labels,
// annotations and spec only.
func TestCanUpdateMachineRequest(t *testing.T) {
	g := NewWithT(t)
	current, desired := currentAndDesired()
	req, err := canUpdateMachineRequest(context.Background(), current, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(req.Current.Machine.APIVersion).To(Equal("cluster.x-k8s.io/v1beta2"))
	g.Expect(req.Current.Machine.Spec.Version).To(Equal("v1.36.1"))
	g.Expect(req.Desired.Machine.Spec.Version).To(Equal("v1.36.2"))
	g.Expect(req.Current.Machine.ManagedFields).To(BeEmpty())
	g.Expect(req.Current.Machine.Status.Phase).To(BeEmpty())
	infra := req.Desired.InfrastructureMachine.Object.(*unstructured.Unstructured)
	g.Expect(infra.Object).NotTo(HaveKey("status"))
	g.Expect(infra.GetManagedFields()).To(BeEmpty())
	g.Expect(infra.Object["spec"]).To(Equal(map[string]any{"size": "huge"}))
	g.Expect(req.Current.BootstrapConfig.Object.(*unstructured.Unstructured).GetKind()).To(Equal("KubeadmConfig"))

	current.Bootstrap, desired.Bootstrap = nil, nil
	req, err = canUpdateMachineRequest(context.Background(), current, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(req.Current.BootstrapConfig.Object).To(BeNil())
	_, err = canUpdateMismatches(req)
	g.Expect(err).NotTo(HaveOccurred())
}

func serveCanUpdateMachine(t *testing.T, ext *runtimetest.Extension, name string, f func(*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse)) {
	t.Helper()
	if err := extension.AddHandler(ext.Server, extension.Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
		Hook: hooksv1.CanUpdateMachine, Name: name,
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
			resp.SetStatus(hooksv1.ResponseStatusSuccess)
			f(req, resp)
		},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCanUpdateMachine(t *testing.T) {
	ctx := context.Background()
	current, desired := currentAndDesired()

	ok, reasons, err := (&Updater{}).CanUpdateMachine(ctx, current, desired)
	NewWithT(t).Expect(ok).To(BeFalse())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(reasons).To(ConsistOf("the RuntimeSDK feature gate is off"))

	none := runtimetest.Start(t)
	ok, _, err = (&Updater{Runtime: clienttest.New(t, "ext", none)}).CanUpdateMachine(ctx, current, desired)
	NewWithT(t).Expect(ok).To(BeFalse())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	two := runtimetest.Start(t)
	serveCanUpdateMachine(t, two, "a", func(*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse) {})
	serveCanUpdateMachine(t, two, "b", func(*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse) {})
	_, _, err = (&Updater{Runtime: clienttest.New(t, "ext", two)}).CanUpdateMachine(ctx, current, desired)
	NewWithT(t).Expect(err).To(MatchError("found multiple CanUpdateMachine hooks (a.ext,b.ext): only one hook is supported"))

	// One extension that covers everything by merging the desired specs.
	g := NewWithT(t)
	ext := runtimetest.Start(t)
	var got *hooksv1.CanUpdateMachineRequest
	serveCanUpdateMachine(t, ext, "all", func(req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
		got = req
		resp.MachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"version":"` + req.Desired.Machine.Spec.Version + `"}}`)}
		resp.InfrastructureMachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"size":"huge"}}`)}
		resp.BootstrapConfigPatch = hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"files":["a"]}}`)}
	})
	ok, reasons, err = (&Updater{Runtime: clienttest.New(t, "ext", ext)}).CanUpdateMachine(ctx, current, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reasons).To(BeEmpty())
	g.Expect(ok).To(BeTrue())
	g.Expect(got.Current.Machine.Spec.Version).To(Equal("v1.36.1"))
	g.Expect(got.Desired.Machine.Spec.Version).To(Equal("v1.36.2"))
}

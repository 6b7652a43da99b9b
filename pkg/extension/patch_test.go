package extension

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

func TestMergePatch(t *testing.T) {
	machine := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"},
		Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: "v1.33.0", FailureDomain: "fd-1"}}
	upgraded := machine.DeepCopy()
	upgraded.Spec.Version = "v1.33.1"
	infra := runtime.RawExtension{Raw: []byte(`{"kind":"DevMachine","spec":{"image":"kindest/node:v1.33.0","extraMounts":[{"hostPath":"/a"}]}}`)}
	infraModified := &unstructured.Unstructured{}
	if err := json.Unmarshal(infra.Raw, &infraModified.Object); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(infraModified.Object, "kindest/node:v1.33.1", "spec", "image"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name              string
		current, modified any
		want              string // the patch; empty when nothing changed
	}{
		{"typed objects", machine, upgraded, `{"spec":{"version":"v1.33.1"}}`},
		{"a field removed", machine, func() *clusterv1.Machine { m := machine.DeepCopy(); m.Spec.FailureDomain = ""; return m }(), `{"spec":{"failureDomain":null}}`},
		{"raw current, unstructured modified", infra, infraModified, `{"spec":{"image":"kindest/node:v1.33.1"}}`},
		{"pointer to raw, raw object", &infra, runtime.RawExtension{Object: infraModified}, `{"spec":{"image":"kindest/node:v1.33.1"}}`},
		{"bytes, a list replaced whole", infra.Raw, []byte(`{"kind":"DevMachine","spec":{"image":"kindest/node:v1.33.0","extraMounts":[]}}`), `{"spec":{"extraMounts":[]}}`},
		{"nothing changed", machine, machine.DeepCopy(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := MergePatch(tt.current, tt.modified)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.want == "" {
				g.Expect(p.IsDefined()).To(BeFalse())
				return
			}
			g.Expect(p.PatchType).To(Equal(hooksv1.JSONMergePatchType))
			g.Expect(p.Patch).To(MatchJSON(tt.want))
			// Applied to current, it gives modified, as the core applies it.
			from, err := jsonOf(tt.current)
			g.Expect(err).NotTo(HaveOccurred())
			to, err := jsonOf(tt.modified)
			g.Expect(err).NotTo(HaveOccurred())
			applied, err := jsonpatch.MergePatch(from, p.Patch)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(applied).To(MatchJSON(to))
		})
	}

	g := NewWithT(t)
	_, err := MergePatch(runtime.RawExtension{Raw: []byte(`{"kind":`)}, infraModified)
	g.Expect(err).To(MatchError(`encoding the current object: not valid JSON: "{\"kind\":"`))
	_, err = MergePatch(runtime.RawExtension{}, infraModified)
	g.Expect(err).To(MatchError("encoding the current object: no object"))
	_, err = MergePatch(machine, func() {})
	g.Expect(err).To(MatchError(ContainSubstring("encoding the modified object")))
}

// With MergePatch, a CanUpdateMachine handler is a few lines: the changes it makes in place, taken from
// desired, patched onto current.
func TestACanUpdateMachineHandlerWithMergePatch(t *testing.T) {
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
		Hook: hooksv1.CanUpdateMachine, Name: "can-update-machine",
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
			m := req.Current.Machine.DeepCopy()
			m.Spec.Version = req.Desired.Machine.Spec.Version // upgraded in place
			var err error
			if resp.MachinePatch, err = MergePatch(req.Current.Machine, m); err != nil {
				resp.Status, resp.Message = hooksv1.ResponseStatusFailure, err.Error()
			}
		}})).To(Succeed())

	rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/canupdatemachine/can-update-machine",
		`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineRequest",
		"current":{"machine":{"metadata":{"name":"m1"},"spec":{"clusterName":"c1","version":"v1.33.0","failureDomain":"fd-1"}},"infrastructureMachine":{"kind":"DevMachine"}},
		"desired":{"machine":{"metadata":{"name":"m1"},"spec":{"clusterName":"c1","version":"v1.33.1","failureDomain":"fd-2"}},"infrastructureMachine":{"kind":"DevMachine"}}}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
	resp := &hooksv1.CanUpdateMachineResponse{}
	g.Expect(json.Unmarshal(rec.Body.Bytes(), resp)).To(Succeed())
	g.Expect(resp.Status).To(Equal(hooksv1.ResponseStatusSuccess))
	g.Expect(resp.MachinePatch.PatchType).To(Equal(hooksv1.JSONMergePatchType))
	g.Expect(resp.MachinePatch.Patch).To(MatchJSON(`{"spec":{"version":"v1.33.1"}}`), "the failure domain is not updated in place")
	g.Expect(resp.InfrastructureMachinePatch.IsDefined()).To(BeFalse())
}

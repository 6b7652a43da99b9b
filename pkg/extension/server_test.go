package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

type deleteHandler = Handler[*hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse]

func post(s *Server, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func TestServerServesDiscoveryAndHandlers(t *testing.T) {
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "cleanup", TimeoutSeconds: ptr.To[int32](5),
		Func: func(_ context.Context, req *hooksv1.BeforeClusterDeleteRequest, resp *hooksv1.BeforeClusterDeleteResponse) {
			resp.RetryAfterSeconds = 3
			resp.Message = "cleaning " + req.Cluster.Name + " " + req.Settings["mode"]
		}})).To(Succeed())
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "panics",
		Func: func(context.Context, *hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse) {
			panic("boom")
		}})).To(Succeed())

	rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", `{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	disc := &hooksv1.DiscoveryResponse{}
	g.Expect(json.Unmarshal(rec.Body.Bytes(), disc)).To(Succeed())
	g.Expect(disc.Kind).To(Equal("DiscoveryResponse"))
	g.Expect(disc.Status).To(Equal(hooksv1.ResponseStatusSuccess))
	g.Expect(disc.Handlers).To(HaveLen(2))
	g.Expect(disc.Handlers[0]).To(Equal(hooksv1.ExtensionHandler{Name: "cleanup", TimeoutSeconds: ptr.To[int32](5),
		RequestHook: hooksv1.GroupVersionHook{APIVersion: "hooks.runtime.cluster.x-k8s.io/v1alpha1", Hook: "BeforeClusterDelete"}}))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup?timeout=10s",
		`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteRequest","settings":{"mode":"fast"},"cluster":{"metadata":{"name":"c1"}}}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	g.Expect(rec.Body.String()).To(MatchJSON(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteResponse",
		"status":"Success","message":"cleaning c1 fast","retryAfterSeconds":3}`))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/panics",
		`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterDeleteRequest","cluster":{}}`)
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	g.Expect(rec.Body.String()).To(ContainSubstring(`"status":"Failure","message":"handler panics panicked"`))

	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup", `{"apiVersion":"v1","kind":"Pod"}`)
	g.Expect(rec.Code).To(Equal(http.StatusBadRequest))
	g.Expect(rec.Body.String()).To(ContainSubstring("not a BeforeClusterDeleteRequest"))
	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/cleanup", `not json`)
	g.Expect(rec.Code).To(Equal(http.StatusBadRequest))
	rec = post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/unknown", `{}`)
	g.Expect(rec.Code).To(Equal(http.StatusNotFound))
}

// The hooks of chained upgrades are served like the others: a handler is a typed function, discovery
// lists it, its request carries the upgrade plan and its response is upstream's.
func TestServerServesTheHooksOfChainedUpgrades(t *testing.T) {
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, Handler[*hooksv1.BeforeControlPlaneUpgradeRequest, *hooksv1.BeforeControlPlaneUpgradeResponse]{
		Hook: hooksv1.BeforeControlPlaneUpgrade, Name: "before-cp",
		Func: func(_ context.Context, req *hooksv1.BeforeControlPlaneUpgradeRequest, resp *hooksv1.BeforeControlPlaneUpgradeResponse) {
			resp.RetryAfterSeconds = 4
			resp.Message = fmt.Sprintf("%s to %s, then %v; workers %v", req.FromKubernetesVersion, req.ToKubernetesVersion, req.ControlPlaneUpgrades, req.WorkersUpgrades)
		}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse]{
		Hook: hooksv1.BeforeWorkersUpgrade, Name: "before-workers",
		Func: func(context.Context, *hooksv1.BeforeWorkersUpgradeRequest, *hooksv1.BeforeWorkersUpgradeResponse) {}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.AfterWorkersUpgradeRequest, *hooksv1.AfterWorkersUpgradeResponse]{
		Hook: hooksv1.AfterWorkersUpgrade, Name: "after-workers",
		Func: func(_ context.Context, _ *hooksv1.AfterWorkersUpgradeRequest, resp *hooksv1.AfterWorkersUpgradeResponse) {
			resp.RetryAfterSeconds = 2
		}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.AfterClusterUpgradeRequest, *hooksv1.AfterClusterUpgradeResponse]{
		Hook: hooksv1.AfterClusterUpgrade, Name: "after-cluster",
		Func: func(_ context.Context, _ *hooksv1.AfterClusterUpgradeRequest, resp *hooksv1.AfterClusterUpgradeResponse) {
			resp.RetryAfterSeconds = 9 // blocking since upstream v1.12
		}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.GenerateUpgradePlanRequest, *hooksv1.GenerateUpgradePlanResponse]{
		Hook: hooksv1.GenerateUpgradePlan, Name: "plan",
		Func: func(_ context.Context, req *hooksv1.GenerateUpgradePlanRequest, resp *hooksv1.GenerateUpgradePlanResponse) {
			resp.ControlPlaneUpgrades = []hooksv1.UpgradeStep{{Version: "v1.31.4"}, {Version: req.ToKubernetesVersion}}
			resp.WorkersUpgrades = []hooksv1.UpgradeStep{{Version: req.ToKubernetesVersion}}
		}})).To(Succeed())

	rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", `{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
	disc := &hooksv1.DiscoveryResponse{}
	g.Expect(json.Unmarshal(rec.Body.Bytes(), disc)).To(Succeed())
	var hooks []string
	for _, h := range disc.Handlers {
		hooks = append(hooks, h.Name+"="+h.RequestHook.Hook)
	}
	g.Expect(hooks).To(Equal([]string{"before-cp=BeforeControlPlaneUpgrade", "before-workers=BeforeWorkersUpgrade",
		"after-workers=AfterWorkersUpgrade", "after-cluster=AfterClusterUpgrade", "plan=GenerateUpgradePlan"}))

	tests := []struct {
		path, request, response string
	}{
		{"beforecontrolplaneupgrade/before-cp",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeControlPlaneUpgradeRequest","cluster":{},
			"fromKubernetesVersion":"v1.30.2","toKubernetesVersion":"v1.31.4","controlPlaneUpgrades":[{"version":"v1.32.2"}],"workersUpgrades":[{"version":"v1.32.2"}]}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeControlPlaneUpgradeResponse",
			"status":"Success","message":"v1.30.2 to v1.31.4, then [{v1.32.2}]; workers [{v1.32.2}]","retryAfterSeconds":4}`},
		{"beforeworkersupgrade/before-workers",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeWorkersUpgradeRequest","cluster":{},"fromKubernetesVersion":"v1.30.2","toKubernetesVersion":"v1.32.2"}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeWorkersUpgradeResponse","status":"Success","retryAfterSeconds":0}`},
		{"afterworkersupgrade/after-workers",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"AfterWorkersUpgradeRequest","cluster":{},"kubernetesVersion":"v1.32.2"}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"AfterWorkersUpgradeResponse","status":"Success","retryAfterSeconds":2}`},
		{"afterclusterupgrade/after-cluster",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"AfterClusterUpgradeRequest","cluster":{},"kubernetesVersion":"v1.32.2"}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"AfterClusterUpgradeResponse","status":"Success","retryAfterSeconds":9}`},
		{"generateupgradeplan/plan",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GenerateUpgradePlanRequest","cluster":{"metadata":{"name":"c1"}},
			"fromControlPlaneKubernetesVersion":"v1.30.2","fromWorkersKubernetesVersion":"v1.30.2","toKubernetesVersion":"v1.32.2"}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GenerateUpgradePlanResponse","status":"Success",
			"controlPlaneUpgrades":[{"version":"v1.31.4"},{"version":"v1.32.2"}],"workersUpgrades":[{"version":"v1.32.2"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			g := NewWithT(t)
			rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/"+tt.path, tt.request)
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			g.Expect(rec.Body.String()).To(MatchJSON(tt.response))
		})
	}
}

// The in-place update hooks (upstream v1.14) are served like the others, though capstan does not call
// them yet: a handler is a typed function, discovery lists it, its request carries the Machine or
// MachineSet and the provider's objects, and its response is upstream's (patches; UpdateMachine's with
// retryAfterSeconds).
func TestServerServesTheInPlaceUpdateHooks(t *testing.T) {
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, Handler[*hooksv1.CanUpdateMachineRequest, *hooksv1.CanUpdateMachineResponse]{
		Hook: hooksv1.CanUpdateMachine, Name: "can-update-machine",
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) {
			if req.Current.Machine.Spec.Version != req.Desired.Machine.Spec.Version {
				resp.MachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONPatchType,
					Patch: []byte(`[{"op":"replace","path":"/spec/version","value":"` + req.Desired.Machine.Spec.Version + `"}]`)}
			}
			resp.Message = string(req.Desired.InfrastructureMachine.Raw)
		}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.CanUpdateMachineSetRequest, *hooksv1.CanUpdateMachineSetResponse]{
		Hook: hooksv1.CanUpdateMachineSet, Name: "can-update-machineset",
		Func: func(_ context.Context, req *hooksv1.CanUpdateMachineSetRequest, resp *hooksv1.CanUpdateMachineSetResponse) {
			resp.BootstrapConfigTemplatePatch = hooksv1.Patch{PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"template":{"spec":{"files":[]}}}}`)}
			resp.Message = req.Desired.MachineSet.Name
		}})).To(Succeed())
	g.Expect(AddHandler(s, Handler[*hooksv1.UpdateMachineRequest, *hooksv1.UpdateMachineResponse]{
		Hook: hooksv1.UpdateMachine, Name: "update-machine",
		Func: func(_ context.Context, req *hooksv1.UpdateMachineRequest, resp *hooksv1.UpdateMachineResponse) {
			resp.RetryAfterSeconds = 5 // in progress: call again
			resp.Message = "updating " + req.Desired.Machine.Name + " to " + req.Desired.Machine.Spec.Version
		}})).To(Succeed())

	rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", `{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
	disc := &hooksv1.DiscoveryResponse{}
	g.Expect(json.Unmarshal(rec.Body.Bytes(), disc)).To(Succeed())
	var hooks []string
	for _, h := range disc.Handlers {
		hooks = append(hooks, h.Name+"="+h.RequestHook.Hook)
	}
	g.Expect(hooks).To(Equal([]string{"can-update-machine=CanUpdateMachine", "can-update-machineset=CanUpdateMachineSet", "update-machine=UpdateMachine"}))

	tests := []struct {
		path, request, response string
	}{
		{"canupdatemachine/can-update-machine",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineRequest",
			"current":{"machine":{"metadata":{"name":"m1"},"spec":{"clusterName":"c1","version":"v1.33.0"}},"infrastructureMachine":{"kind":"DevMachine"}},
			"desired":{"machine":{"metadata":{"name":"m1"},"spec":{"clusterName":"c1","version":"v1.33.1"}},"infrastructureMachine":{"kind":"DevMachine"}}}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineResponse","status":"Success","message":"{\"kind\":\"DevMachine\"}",
			"machinePatch":{"patchType":"JSONPatch","patch":"W3sib3AiOiJyZXBsYWNlIiwicGF0aCI6Ii9zcGVjL3ZlcnNpb24iLCJ2YWx1ZSI6InYxLjMzLjEifV0="}}`},
		{"canupdatemachineset/can-update-machineset",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineSetRequest",
			"current":{"machineSet":{"metadata":{"name":"ms1"}},"infrastructureMachineTemplate":{"kind":"DevMachineTemplate"}},
			"desired":{"machineSet":{"metadata":{"name":"ms1"}},"infrastructureMachineTemplate":{"kind":"DevMachineTemplate"}}}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineSetResponse","status":"Success","message":"ms1",
			"bootstrapConfigTemplatePatch":{"patchType":"JSONMergePatch","patch":"eyJzcGVjIjp7InRlbXBsYXRlIjp7InNwZWMiOnsiZmlsZXMiOltdfX19fQ=="}}`},
		{"updatemachine/update-machine",
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"UpdateMachineRequest",
			"desired":{"machine":{"metadata":{"name":"m1"},"spec":{"version":"v1.33.1"}},"infrastructureMachine":{"kind":"DevMachine"}}}`,
			`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"UpdateMachineResponse","status":"Success","message":"updating m1 to v1.33.1","retryAfterSeconds":5}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			g := NewWithT(t)
			rec := post(s, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/"+tt.path, tt.request)
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			g.Expect(rec.Body.String()).To(MatchJSON(tt.response))
		})
	}
}

func TestAddHandlerRefusesWhatCannotBeServed(t *testing.T) {
	noop := func(context.Context, *hooksv1.BeforeClusterDeleteRequest, *hooksv1.BeforeClusterDeleteResponse) {}
	tests := []struct {
		name string
		h    deleteHandler
		want string
	}{
		{"types of another hook", deleteHandler{Hook: hooksv1.BeforeClusterCreate, Name: "x", Func: noop}, "BeforeClusterCreate takes a *v1alpha1.BeforeClusterCreateRequest"},
		{"discovery", deleteHandler{Hook: hooksv1.Discovery, Name: "x", Func: noop}, "not a hook a handler can serve"},
		{"name not a DNS label", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "Not_A_Label", Func: noop}, "is not a DNS label"},
		{"timeout over 30s", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop, TimeoutSeconds: ptr.To[int32](31)}, "timeoutSeconds must be between 0 and 30"},
		{"no func", deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x"}, "has no Func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := AddHandler(NewServer(Options{}), tt.h)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	g := NewWithT(t)
	s := NewServer(Options{})
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop})).To(Succeed())
	g.Expect(AddHandler(s, deleteHandler{Hook: hooksv1.BeforeClusterDelete, Name: "x", Func: noop})).To(MatchError(ContainSubstring("already registered")))
}

func TestStartRefusesAMissingCertificate(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	err = NewServer(Options{CertDir: t.TempDir()}).Serve(context.Background(), l)
	g.Expect(err).To(MatchError(ContainSubstring("reading the serving certificate")))
}

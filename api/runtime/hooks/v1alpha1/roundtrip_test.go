package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The files in testdata are the request and response examples of the Cluster API book's Runtime SDK pages
// (the seed), with their placeholders ("...", "<Runtime Extension settings>", "<variable-value>") filled in
// with values of the right shape. Each must decode into its type with no unknown field and encode back to
// the same JSON, so that an extension written for upstream Cluster API and capstan understand each other.
func TestHookExamplesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var meta struct{ APIVersion, Kind string }
			if err := json.Unmarshal(data, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.APIVersion != GroupVersion.String() {
				t.Fatalf("apiVersion %q, want %q", meta.APIVersion, GroupVersion)
			}
			hook, isRequest := hookOfKind(meta.Kind)
			req, resp, err := hook.New()
			if err != nil {
				t.Fatalf("kind %s: %v", meta.Kind, err)
			}
			var obj any = resp
			if isRequest {
				obj = req
			}
			if err := decodeStrict(data, obj); err != nil {
				t.Fatalf("decoding (a field the type does not have?): %v", err)
			}
			got, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, have any
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &have); err != nil {
				t.Fatal(err)
			}
			// Go writes an empty struct that is not a pointer as {} (metadata of the topology's classes,
			// as upstream's types do); decoding treats {} and an absent field alike.
			if !reflect.DeepEqual(withoutEmptyObjects(want), withoutEmptyObjects(have)) {
				t.Errorf("the example does not survive a round trip:\nwant %s\ngot  %s", compact(t, data), got)
			}
			seen[meta.Kind] = true
		})
	}
	for _, h := range Hooks() {
		for _, kind := range []string{h.RequestKind().Kind, h.ResponseKind().Kind} {
			if !seen[kind] {
				t.Errorf("no example of %s in testdata", kind)
			}
		}
	}
}

// The builtin variable of the GeneratePatches example decodes into Builtins with no unknown field.
func TestBuiltinVariableOfTheExampleDecodes(t *testing.T) {
	data, err := os.ReadFile("testdata/generatepatches-request.json")
	if err != nil {
		t.Fatal(err)
	}
	req := &GeneratePatchesRequest{}
	if err := json.Unmarshal(data, req); err != nil {
		t.Fatal(err)
	}
	values := append(append([]Variable{}, req.Variables...), req.Items[0].Variables...)
	decoded := 0
	for _, v := range values {
		if v.Name != BuiltinsName {
			continue
		}
		var b Builtins
		if err := decodeStrict(v.Value.Raw, &b); err != nil {
			t.Fatalf("decoding builtin %s: %v", v.Value.Raw, err)
		}
		decoded++
	}
	if decoded != 2 {
		t.Fatalf("decoded %d builtin variables, want 2", decoded)
	}
}

func TestHookPathsAndKinds(t *testing.T) {
	tests := []struct {
		hook     Hook
		handler  string
		path     string
		blocking bool
	}{
		{Discovery, "", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", false},
		{CanUpdateMachine, "can-update-machine", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/canupdatemachine/can-update-machine", false},
		{CanUpdateMachineSet, "can-update-machineset", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/canupdatemachineset/can-update-machineset", false},
		// Called again while the update is in progress: its response has retryAfterSeconds.
		{UpdateMachine, "update-machine", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/updatemachine/update-machine", true},
		{BeforeClusterCreate, "before-cluster-create", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/before-cluster-create", true},
		{AfterControlPlaneInitialized, "Notify", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/aftercontrolplaneinitialized/notify", false},
		{BeforeClusterUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterupgrade/x", true},
		{BeforeControlPlaneUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforecontrolplaneupgrade/x", true},
		{AfterControlPlaneUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/aftercontrolplaneupgrade/x", true},
		{BeforeWorkersUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeworkersupgrade/x", true},
		{AfterWorkersUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/afterworkersupgrade/x", true},
		// Blocking since upstream v1.12: its response has retryAfterSeconds.
		{AfterClusterUpgrade, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/afterclusterupgrade/x", true},
		{BeforeClusterDelete, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterdelete/x", true},
		{GeneratePatches, "x", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/x", false},
		{GenerateUpgradePlan, "plan", "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generateupgradeplan/plan", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.hook), func(t *testing.T) {
			if got := tt.hook.Path(tt.handler); got != tt.path {
				t.Errorf("path %q, want %q", got, tt.path)
			}
			if got := tt.hook.Blocking(); got != tt.blocking {
				t.Errorf("blocking %v, want %v", got, tt.blocking)
			}
		})
	}
	if _, _, err := Hook("BeforeMachineCreate").New(); err == nil {
		t.Error("an unknown hook has request types")
	}
}

// Hooks lists every hook that has types, once.
func TestHooksListsEveryHookWithTypes(t *testing.T) {
	listed := map[Hook]bool{}
	for _, h := range Hooks() {
		if listed[h] {
			t.Errorf("%s is listed twice", h)
		}
		listed[h] = true
		if !h.Known() {
			t.Errorf("%s is listed but has no request and response types", h)
		}
	}
	for h := range hookTypes {
		if !listed[h] {
			t.Errorf("%s has types but is not listed by Hooks()", h)
		}
	}
}

func hookOfKind(kind string) (Hook, bool) {
	if h, ok := strings.CutSuffix(kind, "Request"); ok {
		return Hook(h), true
	}
	return Hook(strings.TrimSuffix(kind, "Response")), false
}

func withoutEmptyObjects(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if m, ok := e.(map[string]any); ok && len(m) == 0 {
				continue
			}
			out[k] = withoutEmptyObjects(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutEmptyObjects(e)
		}
		return out
	}
	return v
}

// decodeStrict decodes data into v, refusing fields v does not have.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func compact(t *testing.T, data []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// As upstream's, the in-place update types leave out what is not set: the patches of an extension that
// can update nothing, the bootstrap config of a Machine without one.
func TestInPlaceUpdateTypesLeaveOutWhatIsNotSet(t *testing.T) {
	resp := &CanUpdateMachineResponse{CommonResponse: CommonResponse{Status: ResponseStatusSuccess}}
	got, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"status":"Success"}` {
		t.Errorf("got %s", got)
	}
	if resp.MachinePatch.IsDefined() {
		t.Error("an empty patch is defined")
	}
	if p := (Patch{PatchType: JSONPatchType}); !p.IsDefined() {
		t.Error("a patch with a type is not defined")
	}

	req := &UpdateMachineRequest{}
	req.Desired.Machine.Name = "m1"
	req.Desired.InfrastructureMachine.Raw = []byte(`{"kind":"DevMachine"}`)
	got, err = json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"desired":{"machine":{"metadata":{"name":"m1"}},"infrastructureMachine":{"kind":"DevMachine"}}}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conversion"
)

// Objects are a Machine, its InfraMachine and its bootstrap config (nil when it has none), as a
// CanUpdateMachine request carries them: current or desired.
type Objects struct {
	Machine   *clusterv1beta1.Machine
	Infra     *unstructured.Unstructured
	Bootstrap *unstructured.Unstructured
}

// CanUpdateMachine asks the one CanUpdateMachine handler that selects the Machine's namespace whether the
// difference between current and desired can be applied in place: it applies the patches of the answer to
// the current objects and compares their specs with the desired ones (upstream's canUpdateMachine). With no
// handler the Machine cannot be updated in place; with more than one it is an error, as upstream. The
// reasons say what no patch covers.
func (u *Updater) CanUpdateMachine(ctx context.Context, current, desired Objects) (bool, []string, error) {
	if u.Runtime == nil {
		return false, []string{"the RuntimeSDK feature gate is off"}, nil
	}
	handlers, err := u.Runtime.Handlers(ctx, runtimehooksv1.CanUpdateMachine, current.Machine)
	if err != nil {
		return false, nil, err
	}
	switch {
	case len(handlers) == 0:
		return false, []string{"no CanUpdateMachine extension registered"}, nil
	case len(handlers) > 1:
		return false, nil, fmt.Errorf("found multiple CanUpdateMachine hooks (%s): only one hook is supported", strings.Join(handlers, ","))
	}
	req, err := canUpdateMachineRequest(ctx, current, desired)
	if err != nil {
		return false, nil, fmt.Errorf("failed to generate CanUpdateMachine request: %w", err)
	}
	resp := &runtimehooksv1.CanUpdateMachineResponse{}
	if err := u.Runtime.Call(ctx, runtimehooksv1.CanUpdateMachine, handlers[0], current.Machine, req, resp); err != nil {
		return false, nil, err
	}
	if err := applyCanUpdatePatches(req, resp); err != nil {
		return false, nil, fmt.Errorf("failed to apply patches from extension %s to the CanUpdateMachine request: %w", handlers[0], err)
	}
	reasons, err := canUpdateMismatches(req)
	if err != nil {
		return false, nil, fmt.Errorf("failed to compare current and desired objects after calling extension %s: %w", handlers[0], err)
	}
	return len(reasons) == 0, reasons, nil
}

// canUpdateMachineRequest builds the request: the Machines as v1beta2, every object with its kind, names,
// labels, annotations and spec only.
func canUpdateMachineRequest(ctx context.Context, current, desired Objects) (*runtimehooksv1.CanUpdateMachineRequest, error) {
	if current.Machine == nil || desired.Machine == nil || current.Infra == nil || desired.Infra == nil {
		return nil, errors.New("the current and desired Machine and InfraMachine are needed")
	}
	objects := func(o Objects) (runtimehooksv1.CanUpdateMachineRequestObjects, error) {
		m, err := conversion.MachineFromV1beta1(ctx, o.Machine)
		if err != nil {
			return runtimehooksv1.CanUpdateMachineRequestObjects{}, fmt.Errorf("converting Machine %s to %s: %w", o.Machine.Name, clusterv1.GroupVersion, err)
		}
		out := runtimehooksv1.CanUpdateMachineRequestObjects{
			Machine:               desiredMachine(m),
			InfrastructureMachine: runtime.RawExtension{Object: desiredObject(o.Infra)},
		}
		if o.Bootstrap != nil {
			out.BootstrapConfig = runtime.RawExtension{Object: desiredObject(o.Bootstrap)}
		}
		return out, nil
	}
	req := &runtimehooksv1.CanUpdateMachineRequest{}
	var err error
	if req.Current, err = objects(current); err != nil {
		return nil, err
	}
	if req.Desired, err = objects(desired); err != nil {
		return nil, err
	}
	return req, nil
}

// applyCanUpdatePatches applies the answer's patches to the current objects of the request; only what they
// change in the specs is kept.
func applyCanUpdatePatches(req *runtimehooksv1.CanUpdateMachineRequest, resp *runtimehooksv1.CanUpdateMachineResponse) error {
	if resp.MachinePatch.IsDefined() {
		patched := &clusterv1.Machine{}
		if err := applyPatch(&req.Current.Machine, resp.MachinePatch, patched); err != nil {
			return fmt.Errorf("Machine: %w", err) //nolint:staticcheck // The kind starts the message.
		}
		req.Current.Machine.Spec = patched.Spec
	}
	for _, p := range []struct {
		obj   *runtime.RawExtension
		patch runtimehooksv1.Patch
	}{{&req.Current.BootstrapConfig, resp.BootstrapConfigPatch}, {&req.Current.InfrastructureMachine, resp.InfrastructureMachinePatch}} {
		if !p.patch.IsDefined() {
			continue
		}
		u, ok := p.obj.Object.(*unstructured.Unstructured)
		if !ok {
			return errors.New("a patch for an object the request does not carry")
		}
		patched := map[string]any{}
		if err := applyPatch(u.Object, p.patch, &patched); err != nil {
			return fmt.Errorf("%s: %w", u.GetKind(), err)
		}
		if spec, ok := patched["spec"]; ok {
			u.Object["spec"] = spec
		} else {
			delete(u.Object, "spec")
		}
	}
	return nil
}

// applyPatch applies p to obj's JSON and decodes the result into out.
func applyPatch(obj any, p runtimehooksv1.Patch, out any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	switch p.PatchType {
	case runtimehooksv1.JSONPatchType:
		patch, err := jsonpatch.DecodePatch(p.Patch)
		if err != nil {
			return fmt.Errorf("decoding the JSON patch: %w", err)
		}
		if data, err = patch.Apply(data); err != nil {
			return fmt.Errorf("applying the JSON patch: %w", err)
		}
	case runtimehooksv1.JSONMergePatchType:
		if data, err = jsonpatch.MergePatch(data, p.Patch); err != nil {
			return fmt.Errorf("applying the JSON merge patch: %w", err)
		}
	default:
		return fmt.Errorf("unknown patch type %q", p.PatchType)
	}
	return json.Unmarshal(data, out)
}

// canUpdateMismatches compares the (patched) current specs with the desired ones, as upstream: the
// Machine's without what never is a reason for an in-place update, the others whole.
func canUpdateMismatches(req *runtimehooksv1.CanUpdateMachineRequest) ([]string, error) {
	var reasons []string
	if a, b := cleanupMachineSpecForDiff(&req.Current.Machine.Spec), cleanupMachineSpecForDiff(&req.Desired.Machine.Spec); !equality.Semantic.DeepEqual(a, b) {
		reasons = append(reasons, "Machine cannot be updated in-place: "+Diff(a, b))
	}
	for _, o := range []struct {
		kind             string
		current, desired runtime.RawExtension
	}{{"KubeadmConfig", req.Current.BootstrapConfig, req.Desired.BootstrapConfig}, {"", req.Current.InfrastructureMachine, req.Desired.InfrastructureMachine}} {
		cur, _ := o.current.Object.(*unstructured.Unstructured)
		des, _ := o.desired.Object.(*unstructured.Unstructured)
		if cur == nil && des == nil {
			continue
		}
		if cur == nil || des == nil {
			return nil, errors.New("a current or desired object is missing")
		}
		kind := cur.GetKind()
		if !equality.Semantic.DeepEqual(cur.Object["spec"], des.Object["spec"]) {
			reasons = append(reasons, kind+" cannot be updated in-place: "+Diff(cur.Object["spec"], des.Object["spec"]))
		}
	}
	return reasons, nil
}

// cleanupMachineSpecForDiff leaves out of a Machine spec what never is the reason of an in-place update:
// what never changes, what the owner changes in place without one, what is not the extension's (upstream's
// CleanupMachineSpecForDiff).
func cleanupMachineSpecForDiff(spec *clusterv1.MachineSpec) *clusterv1.MachineSpec {
	spec = spec.DeepCopy()
	spec.ClusterName = ""
	spec.Bootstrap = clusterv1.Bootstrap{}
	spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{}
	spec.ProviderID = ""
	spec.MinReadySeconds = nil
	spec.ReadinessGates = nil
	spec.Deletion.NodeDrainTimeoutSeconds = nil
	spec.Deletion.NodeVolumeDetachTimeoutSeconds = nil
	spec.Deletion.NodeDeletionTimeoutSeconds = nil
	spec.Taints = nil
	return spec
}

// Diff shows the difference of two API objects (or specs) by their JSON: the objects hold times, which cmp
// cannot compare field by field. The KubeadmControlPlane's rollout says why a Machine is outdated with it.
func Diff(a, b any) string {
	toMap := func(v any) any {
		data, err := json.Marshal(v)
		if err != nil {
			return err.Error()
		}
		var out any
		if err := json.Unmarshal(data, &out); err != nil {
			return err.Error()
		}
		return out
	}
	return cmp.Diff(toMap(a), toMap(b))
}

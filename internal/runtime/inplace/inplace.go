// Package inplace calls the Runtime SDK's in-place update hooks for the controllers that update Machines in
// place (upstream v1.12's InPlaceUpdates feature): UpdateMachine for the Machine controller.
package inplace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta2"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conversion"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
)

// Updater calls the UpdateMachine hook (it implements the Machine controller's InPlaceUpdater).
type Updater struct {
	// Runtime calls the Extensions; nil when the RuntimeSDK gate is off, and every update then fails
	// saying so.
	Runtime *runtimeclient.Client

	// now is time.Now, replaced in tests.
	now func() time.Time

	mu sync.Mutex
	// retries holds, per Machine, when the last answer asked to be called again and its message: the
	// Machine's other events do not call the Extension before then (upstream's hook cache).
	retries map[types.UID]retry
}

type retry struct {
	at      time.Time
	message string
}

// UpdateMachine calls the one UpdateMachine handler that selects the Machine's namespace with the Machine
// (as v1beta2), its InfraMachine and its bootstrap config as they should be (specs, names, labels and
// annotations: no status). As upstream, exactly one handler must serve the hook.
func (u *Updater) UpdateMachine(ctx context.Context, m *clusterv1beta1.Machine, infra, bootstrap *unstructured.Unstructured) (time.Duration, string, error) {
	if u.Runtime == nil {
		return 0, "", errors.New("the UpdateMachine hook cannot be called: the RuntimeSDK feature gate is off")
	}
	now := time.Now
	if u.now != nil {
		now = u.now
	}
	if r, ok := u.retryOf(m.UID); ok && now().Before(r.at) {
		return r.at.Sub(now()), r.message, nil
	}

	handlers, err := u.Runtime.Handlers(ctx, runtimehooksv1.UpdateMachine, m)
	if err != nil {
		return 0, "", err
	}
	switch {
	case len(handlers) == 0:
		return 0, "", errors.New("no extensions registered for UpdateMachine hook")
	case len(handlers) > 1:
		return 0, "", fmt.Errorf("found multiple UpdateMachine hooks (%s): only one hook is supported", strings.Join(handlers, ","))
	}

	machine, err := conversion.MachineFromV1beta1(ctx, m)
	if err != nil {
		return 0, "", fmt.Errorf("converting the Machine to %s: %w", clusterv1.GroupVersion, err)
	}
	req := &runtimehooksv1.UpdateMachineRequest{Desired: runtimehooksv1.UpdateMachineRequestObjects{
		Machine:               desiredMachine(machine),
		InfrastructureMachine: runtime.RawExtension{Object: desiredObject(infra)},
	}}
	if bootstrap != nil {
		req.Desired.BootstrapConfig = runtime.RawExtension{Object: desiredObject(bootstrap)}
	}
	resp := &runtimehooksv1.UpdateMachineResponse{}
	if err := u.Runtime.Call(ctx, runtimehooksv1.UpdateMachine, handlers[0], m, req, resp); err != nil {
		return 0, "", err
	}
	if s := resp.GetRetryAfterSeconds(); s > 0 {
		after := time.Duration(s) * time.Second
		u.setRetry(m.UID, &retry{at: now().Add(after), message: resp.GetMessage()})
		return after, resp.GetMessage(), nil
	}
	u.setRetry(m.UID, nil)
	return 0, resp.GetMessage(), nil
}

func (u *Updater) retryOf(uid types.UID) (retry, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, ok := u.retries[uid]
	return r, ok
}

// setRetry records r for the Machine, or forgets it when r is nil.
func (u *Updater) setRetry(uid types.UID, r *retry) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if r == nil {
		delete(u.retries, uid)
		return
	}
	if u.retries == nil {
		u.retries = map[types.UID]retry{}
	}
	u.retries[uid] = *r
}

// desiredMachine is the Machine an update request carries: its kind, names, labels, annotations and spec.
func desiredMachine(m *clusterv1.Machine) clusterv1.Machine {
	return clusterv1.Machine{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations,
		},
		Spec: *m.Spec.DeepCopy(),
	}
}

// desiredObject is a provider object as an update request carries it: its kind, names, labels, annotations
// and spec.
func desiredObject(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(),
		"kind":       u.GetKind(),
		"spec":       u.Object["spec"],
	}}
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetLabels(u.GetLabels())
	out.SetAnnotations(u.GetAnnotations())
	return out
}

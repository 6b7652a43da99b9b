// Package registry holds, in memory, the handlers of every discovered ExtensionConfig: what the core
// calls for each Runtime Hook, where, with which timeout, failure policy, namespace selector and settings.
// The ExtensionConfig controller writes it; the Runtime SDK client reads it.
package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
)

// notCalled are the hooks of runtimehooksv1 whose handlers capstan registers but does not call yet:
// CanUpdateMachineSet (upstream v1.14), which needs in-place updates in the MachineDeployment controller.
// CanUpdateMachine (the KubeadmControlPlane) and UpdateMachine (the Machine controller) are called with the
// InPlaceUpdates gate.
// TODO(issue 43): empty this list as the MachineDeployment controller calls CanUpdateMachineSet.
var notCalled = []runtimehooksv1.Hook{
	runtimehooksv1.CanUpdateMachineSet,
}

// Called reports whether capstan calls the handlers of hook. Discovery accepts the handlers of every hook
// of runtimehooksv1, as upstream does, so that an Extension written for a newer upstream is not refused
// whole; the handlers of a hook capstan does not call are registered and never called, and the
// ExtensionConfig's Discovered condition says so.
func Called(hook runtimehooksv1.Hook) bool {
	return hook.Known() && !slices.Contains(notCalled, hook)
}

// Registration is one handler of one ExtensionConfig.
type Registration struct {
	// Name is the handler's name in status.handlers: <handler>.<ExtensionConfig>.
	Name string
	// HandlerName is the name the Extension server gave the handler; it is the last segment of its path.
	HandlerName string
	// ExtensionConfigName is the ExtensionConfig the handler belongs to.
	ExtensionConfigName string
	// Hook is the Runtime Hook the handler serves, and APIVersion the version of its request.
	Hook       runtimehooksv1.Hook
	APIVersion string
	// ClientConfig says where the Extension server is and which CA signs its certificate.
	ClientConfig runtimev1.ClientConfig
	// TimeoutSeconds is how long a call may take.
	TimeoutSeconds int32
	// FailurePolicy says what an error calling the handler means.
	FailurePolicy runtimev1.FailurePolicy
	// NamespaceSelector selects the namespaces of the objects the handler is called for.
	NamespaceSelector labels.Selector
	// Settings are passed with every call.
	Settings map[string]string
}

// Registry is the set of registered handlers. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	ready bool
	// byConfig holds the registrations of each ExtensionConfig.
	byConfig map[string][]Registration
}

// New returns an empty Registry that is not ready.
func New() *Registry {
	return &Registry{byConfig: map[string][]Registration{}}
}

// WarmUp registers the handlers every ExtensionConfig of list had discovered (its status.handlers) and
// makes the registry ready. An ExtensionConfig that cannot be registered is skipped and its error
// returned; the others are registered and the registry is ready all the same, so that one broken
// ExtensionConfig never holds the others or the controllers that call hooks.
func (r *Registry) WarmUp(list []runtimev1.ExtensionConfig) error {
	var errs []error
	for i := range list {
		if err := r.Add(&list[i]); err != nil {
			errs = append(errs, err)
		}
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	return errors.Join(errs...)
}

// Ready reports whether WarmUp has run: before, the registry does not know every handler yet, and a
// hook must not be taken as having no handler.
func (r *Registry) Ready() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.ready
}

// Add registers the handlers in ec's status.handlers, replacing those ec had.
func (r *Registry) Add(ec *runtimev1.ExtensionConfig) error {
	regs, err := registrations(ec)
	if err != nil {
		return fmt.Errorf("registering ExtensionConfig %s: %w", ec.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byConfig[ec.Name] = regs
	return nil
}

// Remove unregisters the handlers of the ExtensionConfig named name.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byConfig, name)
}

// List returns the registrations of hook, sorted by name.
func (r *Registry) List(hook runtimehooksv1.Hook) []Registration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Registration
	for _, regs := range r.byConfig {
		for _, reg := range regs {
			if reg.Hook == hook {
				out = append(out, reg)
			}
		}
	}
	slices.SortFunc(out, func(a, b Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Get returns the registration named name (<handler>.<ExtensionConfig>).
func (r *Registry) Get(name string) (Registration, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, regs := range r.byConfig {
		for _, reg := range regs {
			if reg.Name == name {
				return reg, true
			}
		}
	}
	return Registration{}, false
}

func registrations(ec *runtimev1.ExtensionConfig) ([]Registration, error) {
	selector := labels.Everything()
	if ec.Spec.NamespaceSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(ec.Spec.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.namespaceSelector: %w", err)
		}
		selector = s
	}
	out := make([]Registration, 0, len(ec.Status.Handlers))
	for _, h := range ec.Status.Handlers {
		timeout := int32(runtimehooksv1.DefaultHandlersTimeoutSeconds)
		if h.TimeoutSeconds != nil {
			timeout = *h.TimeoutSeconds
		}
		policy := runtimev1.FailurePolicyFail
		if h.FailurePolicy != nil {
			policy = *h.FailurePolicy
		}
		out = append(out, Registration{
			Name:                h.Name,
			HandlerName:         strings.TrimSuffix(h.Name, "."+ec.Name),
			ExtensionConfigName: ec.Name,
			Hook:                runtimehooksv1.Hook(h.RequestHook.Hook),
			APIVersion:          h.RequestHook.APIVersion,
			ClientConfig:        *ec.Spec.ClientConfig.DeepCopy(),
			TimeoutSeconds:      timeout,
			FailurePolicy:       policy,
			NamespaceSelector:   selector,
			Settings:            maps.Clone(ec.Spec.Settings),
		})
	}
	return out, nil
}

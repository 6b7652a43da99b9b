// Package client calls Runtime Extensions: discovery of an ExtensionConfig's handlers, and the calls of a
// hook's registered handlers over HTTPS, with each handler's timeout, failure policy, namespace selector
// and settings. Errors say what failed in words a user can act on (wrong CA, refused connection, no
// answer in time, a response that is not the hook's), without the details that change from call to call.
package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/httpclient"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
)

// DiscoveryTimeout is how long a discovery call may take.
const DiscoveryTimeout = 10 * time.Second

// ErrNotReady is returned by calls made before the registry is warmed up.
var ErrNotReady = errors.New("the Runtime SDK registry is not ready yet: the ExtensionConfigs are being read")

// Client discovers and calls Runtime Extensions.
type Client struct {
	// Registry holds the discovered handlers.
	Registry *registry.Registry
	// Namespaces reads the Namespaces of the objects hooks are called for, to match namespaceSelectors.
	Namespaces client.Reader
	// Dial dials the Extension servers; a net.Dialer when nil. In the embedded management cluster it is
	// localnet's, which resolves <service>.<namespace>.svc without cluster DNS.
	Dial localnet.DialFunc
	// CertFile and KeyFile are a client certificate and key to present to Extension servers that ask for
	// one (--runtime-extension-client-cert-file, --runtime-extension-client-key-file); none when empty.
	// They are read at each TLS handshake, so a renewed certificate is used without a restart.
	CertFile, KeyFile string
	// Limits bound each call's connection and response size (--runtime-extension-connect-timeout,
	// --runtime-extension-max-response-size); zero fields take DefaultLimits'. Limits.Timeout is not
	// used: a call takes at most its handler's timeoutSeconds.
	Limits httpclient.Limits

	transports transports
}

// Discover calls the Discovery hook of ec's Extension server and returns the handlers it serves, as
// status.handlers holds them: named <handler>.<ExtensionConfig>, with their timeout and failure policy
// defaulted.
func (c *Client) Discover(ctx context.Context, ec *runtimev1.ExtensionConfig) ([]runtimev1.ExtensionHandler, error) {
	ctrl.LoggerFrom(ctx).V(4).Info("Discovering the handlers of the Extension server")
	req := &runtimehooksv1.DiscoveryRequest{}
	resp := &runtimehooksv1.DiscoveryResponse{}
	if err := c.post(ctx, ec.Spec.ClientConfig, runtimehooksv1.Discovery, "", DiscoveryTimeout, req, resp); err != nil {
		return nil, err
	}
	if resp.Status == runtimehooksv1.ResponseStatusFailure {
		return nil, fmt.Errorf("the Extension server answered discovery with a failure: %s", messageOrNone(resp.Message))
	}
	return handlersOf(ec.Name, resp)
}

// handlersOf validates a discovery response and turns its handlers into status.handlers.
func handlersOf(extensionConfig string, resp *runtimehooksv1.DiscoveryResponse) ([]runtimev1.ExtensionHandler, error) {
	var errs []error
	seen := map[string]bool{}
	out := make([]runtimev1.ExtensionHandler, 0, len(resp.Handlers))
	for _, h := range resp.Handlers {
		if seen[h.Name] {
			errs = append(errs, fmt.Errorf("handler %q is listed twice", h.Name))
			continue
		}
		seen[h.Name] = true
		if msgs := validation.IsDNS1123Label(h.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("handler name %q is not valid: %v", h.Name, msgs))
		}
		timeout := ptrOr(h.TimeoutSeconds, runtimehooksv1.DefaultHandlersTimeoutSeconds)
		if timeout < 0 || timeout > runtimehooksv1.MaxHandlersTimeoutSeconds {
			errs = append(errs, fmt.Errorf("handler %q: timeoutSeconds %d must be between 0 and %d", h.Name, timeout, runtimehooksv1.MaxHandlersTimeoutSeconds))
		}
		policy := ptrOr(h.FailurePolicy, runtimehooksv1.FailurePolicyFail)
		if policy != runtimehooksv1.FailurePolicyFail && policy != runtimehooksv1.FailurePolicyIgnore {
			errs = append(errs, fmt.Errorf("handler %q: failurePolicy %q must be %q or %q", h.Name, policy, runtimehooksv1.FailurePolicyIgnore, runtimehooksv1.FailurePolicyFail))
		}
		gv, err := schema.ParseGroupVersion(h.RequestHook.APIVersion)
		switch {
		case err != nil || gv != runtimehooksv1.GroupVersion:
			errs = append(errs, fmt.Errorf("handler %q: requestHook apiVersion %q is not supported: capstan serves %s", h.Name, h.RequestHook.APIVersion, runtimehooksv1.GroupVersion))
		case !runtimehooksv1.Hook(h.RequestHook.Hook).Known() || h.RequestHook.Hook == string(runtimehooksv1.Discovery):
			errs = append(errs, fmt.Errorf("handler %q: %q is not a Runtime Hook of %s", h.Name, h.RequestHook.Hook, runtimehooksv1.GroupVersion))
		}
		name := h.Name + "." + extensionConfig
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("handler name %q is not valid: %v", name, msgs))
		}
		out = append(out, runtimev1.ExtensionHandler{
			Name:           name,
			RequestHook:    runtimev1.GroupVersionHook{APIVersion: h.RequestHook.APIVersion, Hook: h.RequestHook.Hook},
			TimeoutSeconds: &timeout,
			FailurePolicy:  (*runtimev1.FailurePolicy)(&policy),
		})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("the discovery response is not valid: %w", err)
	}
	return out, nil
}

// HandlerError is the error of a hook's handler: the call failed (and its failure policy is Fail), or the
// handler answered with status Failure.
type HandlerError struct {
	// Handler is the handler's name, <handler>.<ExtensionConfig>.
	Handler string
	// ExtensionConfig is the ExtensionConfig the handler belongs to.
	ExtensionConfig string
	Hook            runtimehooksv1.Hook
	Err             error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("%s handler %q of ExtensionConfig %s failed: %v", e.Hook, e.Handler, e.ExtensionConfig, e.Err)
}

func (e *HandlerError) Unwrap() error { return e.Err }

// CallAll calls every handler of hook whose ExtensionConfig's namespaceSelector selects forObject's
// namespace, one after the other, and aggregates their responses into resp: status Success, the
// messages joined, and for a blocking hook the shortest non-zero retryAfterSeconds. It stops at the first
// handler that fails (a *HandlerError); the hook is then retried as a whole. A hook with no handler
// succeeds.
func (c *Client) CallAll(ctx context.Context, hook runtimehooksv1.Hook, forObject client.Object, req runtimehooksv1.RequestObject, resp runtimehooksv1.ResponseObject) error {
	if !c.Registry.Ready() {
		return ErrNotReady
	}
	log := ctrl.LoggerFrom(ctx).WithValues("hook", hook)
	ctx = ctrl.LoggerInto(ctx, log)
	var messages []string
	var retry int32
	for _, reg := range c.Registry.List(hook) {
		selected, err := c.selects(ctx, reg.NamespaceSelector, forObject.GetNamespace())
		if err != nil {
			return err
		}
		if !selected {
			log.V(5).Info("Skipping the handler: its namespaceSelector does not select the namespace", "handler", reg.Name)
			continue
		}
		_, one, err := hook.New()
		if err != nil {
			return err
		}
		if err := c.call(ctx, reg, forObject, req, one); err != nil {
			return err
		}
		if one.GetMessage() != "" {
			messages = append(messages, one.GetMessage())
		}
		if r, ok := one.(runtimehooksv1.RetryResponseObject); ok {
			retry = lowestNonZero(retry, r.GetRetryAfterSeconds())
		}
	}
	resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	resp.SetMessage(strings.Join(messages, ", "))
	if r, ok := resp.(runtimehooksv1.RetryResponseObject); ok {
		r.SetRetryAfterSeconds(retry)
	}
	return nil
}

// Handlers returns the names (<handler>.<ExtensionConfig>) of the handlers of hook whose ExtensionConfig's
// namespaceSelector selects forObject's namespace: those CallAll would call.
func (c *Client) Handlers(ctx context.Context, hook runtimehooksv1.Hook, forObject client.Object) ([]string, error) {
	if !c.Registry.Ready() {
		return nil, ErrNotReady
	}
	var names []string
	for _, reg := range c.Registry.List(hook) {
		selected, err := c.selects(ctx, reg.NamespaceSelector, forObject.GetNamespace())
		if err != nil {
			return nil, err
		}
		if selected {
			names = append(names, reg.Name)
		}
	}
	return names, nil
}

// Call calls the handler named name (<handler>.<ExtensionConfig>), as the topology controller does for
// the external patches of a ClusterClass.
func (c *Client) Call(ctx context.Context, hook runtimehooksv1.Hook, name string, forObject client.Object, req runtimehooksv1.RequestObject, resp runtimehooksv1.ResponseObject) error {
	if !c.Registry.Ready() {
		return ErrNotReady
	}
	reg, ok := c.Registry.Get(name)
	if !ok {
		return &HandlerError{Handler: name, Hook: hook, Err: errors.New("no ExtensionConfig has discovered this handler")}
	}
	if reg.Hook != hook {
		return &HandlerError{Handler: name, ExtensionConfig: reg.ExtensionConfigName, Hook: hook, Err: fmt.Errorf("the handler serves %s, not %s", reg.Hook, hook)}
	}
	selected, err := c.selects(ctx, reg.NamespaceSelector, forObject.GetNamespace())
	if err != nil {
		return err
	}
	if !selected {
		return &HandlerError{Handler: name, ExtensionConfig: reg.ExtensionConfigName, Hook: hook,
			Err: fmt.Errorf("the namespaceSelector of ExtensionConfig %s does not select namespace %s", reg.ExtensionConfigName, forObject.GetNamespace())}
	}
	return c.call(ctx, reg, forObject, req, resp)
}

// call calls one handler, applying its failure policy.
func (c *Client) call(ctx context.Context, reg registry.Registration, forObject client.Object, req runtimehooksv1.RequestObject, resp runtimehooksv1.ResponseObject) error {
	log := ctrl.LoggerFrom(ctx).WithValues("handler", reg.Name, forObject.GetObjectKind().GroupVersionKind().Kind, klog.KObj(forObject))
	ctx = ctrl.LoggerInto(ctx, log)
	fail := func(err error) error {
		return &HandlerError{Handler: reg.Name, ExtensionConfig: reg.ExtensionConfigName, Hook: reg.Hook, Err: err}
	}
	// The ExtensionConfig's settings, overridden by the call's (a ClusterClass patch's).
	withSettings, ok := req.DeepCopyObject().(runtimehooksv1.RequestObject)
	if !ok {
		return fail(fmt.Errorf("%T is not a hook request", req))
	}
	settings := maps.Clone(reg.Settings)
	if settings == nil && len(req.GetSettings()) > 0 {
		settings = map[string]string{}
	}
	maps.Copy(settings, req.GetSettings())
	withSettings.SetSettings(settings)

	log.V(4).Info("Calling the extension handler")
	err := c.post(ctx, reg.ClientConfig, reg.Hook, reg.HandlerName, time.Duration(reg.TimeoutSeconds)*time.Second, withSettings, resp)
	if err != nil {
		if reg.FailurePolicy == runtimev1.FailurePolicyIgnore {
			log.Error(err, "Ignoring the failed call: the handler's failurePolicy is Ignore")
			resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
			resp.SetMessage("")
			return nil
		}
		return fail(err)
	}
	if resp.GetStatus() == runtimehooksv1.ResponseStatusFailure {
		// A failure the handler reports is never ignored.
		return fail(fmt.Errorf("the handler answered with a failure: %s", messageOrNone(resp.GetMessage())))
	}
	if r, ok := resp.(runtimehooksv1.RetryResponseObject); ok && r.GetRetryAfterSeconds() != 0 {
		log.Info("The extension handler asks to be called again later", "retryAfterSeconds", r.GetRetryAfterSeconds())
	}
	return nil
}

// selects reports whether selector selects the namespace.
func (c *Client) selects(ctx context.Context, selector labels.Selector, namespace string) (bool, error) {
	if selector == nil || selector.Empty() {
		return true, nil
	}
	ns := &corev1.Namespace{}
	if err := c.Namespaces.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("reading Namespace %s to match the namespaceSelectors of ExtensionConfigs: %w", namespace, err)
	}
	return selector.Matches(labels.Set(ns.Labels)), nil
}

func lowestNonZero(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

func messageOrNone(m string) string {
	if m == "" {
		return "(no message)"
	}
	return m
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

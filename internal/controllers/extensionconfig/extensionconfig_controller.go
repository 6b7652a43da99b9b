package extensionconfig

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/reconciler"
	runtimeclient "github.com/capstan-dev/capstan/internal/runtime/client"
	"github.com/capstan-dev/capstan/internal/runtime/registry"
	"github.com/capstan-dev/capstan/internal/runtime/registry/follow"
)

// caKey is the key of the Secret named by the inject-ca-from-secret annotation that holds the CA.
const caKey = "ca.crt"

// Event reasons.
const (
	discoveredEvent      = "Discovered"
	discoveryFailedEvent = "DiscoveryFailed"
)

// Reconciler reconciles ExtensionConfigs.
type Reconciler struct {
	// Client is the manager's (cached) client.
	Client client.Client
	// APIReader reads the Secrets of the inject-ca-from-secret annotation, which the manager does not
	// cache, and lists the ExtensionConfigs at start.
	APIReader client.Reader
	// Runtime discovers the Extension servers.
	Runtime *runtimeclient.Client
	// Registry receives the discovered handlers.
	Registry *registry.Registry
	// Recorder records the events of discovery; the manager's when nil.
	Recorder record.EventRecorder
	// WatchFilter is the value of --watch-filter; "" means every ExtensionConfig.
	WatchFilter string
}

// SetupWithManager adds the controller, and the warm-up of the registry, to mgr.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil || r.Runtime == nil || r.Registry == nil {
		return errors.New("the ExtensionConfig controller needs a Client, an APIReader, a Runtime SDK client and a registry")
	}
	if r.Recorder == nil {
		r.Recorder = reconciler.EventRecorder(mgr, "extensionconfig-controller")
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := ctrl.NewControllerManagedBy(mgr).
		For(&runtimev1.ExtensionConfig{}).
		Watches(secret, handler.EnqueueRequestsFromMapFunc(r.extensionConfigsOfSecret)).
		WithOptions(options).
		WithEventFilter(reconciler.HasWatchLabel(r.WatchFilter)).
		Named("extensionconfig").
		Complete(reconciler.RequeueOnConflict(r))
	if err != nil {
		return fmt.Errorf("building the ExtensionConfig controller: %w", err)
	}
	return mgr.Add(manager.RunnableFunc(r.warmUp))
}

// warmUp fills the registry from the handlers the ExtensionConfigs' status lists (follow.WarmUp).
func (r *Reconciler) warmUp(ctx context.Context) error {
	return follow.WarmUp(ctx, r.APIReader, r.Registry)
}

// extensionConfigsOfSecret maps a Secret to the ExtensionConfigs whose inject-ca-from-secret annotation
// names it.
func (r *Reconciler) extensionConfigsOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	list := &runtimev1.ExtensionConfigList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ExtensionConfigs for a Secret event")
		return nil
	}
	key := secret.GetNamespace() + "/" + secret.GetName()
	var out []reconcile.Request
	for _, ec := range list.Items {
		if ec.Annotations[runtimev1.InjectCAFromSecretAnnotation] == key {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ec.Name}})
		}
	}
	return out
}

// scope is what one reconcile learns: the facts status is computed from.
type scope struct {
	ec *runtimev1.ExtensionConfig
	// handlers are the discovered handlers, nil when discovery did not succeed.
	handlers []runtimev1.ExtensionHandler
	// failure says what failed: reading the CA or discovery.
	failure error
}

// Reconcile discovers an ExtensionConfig's handlers and registers them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	ec := &runtimev1.ExtensionConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, ec); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Unregistering the handlers of a deleted ExtensionConfig")
			r.Registry.Remove(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting ExtensionConfig %s: %w", req.Name, err)
	}
	if !ec.DeletionTimestamp.IsZero() {
		log.Info("Unregistering the handlers of a deleted ExtensionConfig")
		r.Registry.Remove(ec.Name)
		return ctrl.Result{}, nil
	}

	helper := patch.NewHelper(ec, r.Client)
	_, paused := ec.Annotations[clusterv1.PausedAnnotation]
	conditions.SetV1Beta2(ec, reconciler.PausedCondition(nil, ec, "ExtensionConfig", paused))
	if paused {
		return ctrl.Result{}, helper.Patch(ctx, ec)
	}

	s := &scope{ec: ec}
	defer func() {
		before := slices.Clone(ec.Status.Handlers)
		updateStatus(s)
		r.recordEvents(s, before)
		if err := helper.Patch(ctx, ec); err != nil {
			reterr = errors.Join(reterr, err)
			return
		}
		if s.failure == nil {
			if err := r.Registry.Add(ec); err != nil {
				reterr = errors.Join(reterr, err)
			}
		}
	}()

	if err := r.injectCA(ctx, ec); err != nil {
		s.failure = err
		return ctrl.Result{}, err
	}
	handlers, err := r.Runtime.Discover(ctx, ec)
	if err != nil {
		s.failure = err
		return ctrl.Result{}, fmt.Errorf("discovering ExtensionConfig %s: %w", ec.Name, err)
	}
	s.handlers = handlers
	return ctrl.Result{}, nil
}

// injectCA copies the CA of the Secret the inject-ca-from-secret annotation names into
// spec.clientConfig.caBundle.
func (r *Reconciler) injectCA(ctx context.Context, ec *runtimev1.ExtensionConfig) error {
	value, ok := ec.Annotations[runtimev1.InjectCAFromSecretAnnotation]
	if !ok {
		return nil
	}
	namespace, name, found := strings.Cut(value, "/")
	if !found || namespace == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("annotation %s is %q: it must name a Secret as <namespace>/<name>", runtimev1.InjectCAFromSecretAnnotation, value)
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("secret %s of annotation %s does not exist", value, runtimev1.InjectCAFromSecretAnnotation)
		}
		return fmt.Errorf("reading Secret %s of annotation %s: %w", value, runtimev1.InjectCAFromSecretAnnotation, err)
	}
	ca := secret.Data[caKey]
	if len(ca) == 0 {
		return fmt.Errorf("secret %s of annotation %s has no %q entry", value, runtimev1.InjectCAFromSecretAnnotation, caKey)
	}
	ec.Spec.ClientConfig.CABundle = ca
	return nil
}

// updateStatus computes status.handlers and the Discovered conditions from what the reconcile found.
func updateStatus(s *scope) {
	ec := s.ec
	if s.failure != nil {
		// The handlers discovered before stay, and stay registered: a server that is briefly unreachable
		// does not make its hooks disappear.
		msg := conditions.Capitalise(s.failure.Error())
		conditions.MarkFalse(ec, runtimev1.RuntimeExtensionDiscoveredCondition, runtimev1.DiscoveryFailedReason, clusterv1.ConditionSeverityError, "Error in discovery: %s", s.failure.Error())
		conditions.SetV1Beta2(ec, metav1.Condition{
			Type: runtimev1.ExtensionConfigDiscoveredV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: runtimev1.ExtensionConfigNotDiscoveredV1Beta2Reason, Message: msg,
		})
		return
	}
	ec.Status.Handlers = s.handlers
	conditions.MarkTrue(ec, runtimev1.RuntimeExtensionDiscoveredCondition)
	conditions.SetV1Beta2(ec, metav1.Condition{
		Type: runtimev1.ExtensionConfigDiscoveredV1Beta2Condition, Status: metav1.ConditionTrue,
		Reason: runtimev1.ExtensionConfigDiscoveredV1Beta2Reason, Message: notCalledMessage(s.handlers),
	})
}

// notCalledMessage names the handlers of hooks capstan knows but does not call yet (registry.Called):
// discovered and registered, they would otherwise look as if they took part in the Clusters' life.
func notCalledMessage(handlers []runtimev1.ExtensionHandler) string {
	var names []string
	for _, h := range handlers {
		if !registry.Called(runtimehooksv1.Hook(h.RequestHook.Hook)) {
			names = append(names, h.Name+" ("+h.RequestHook.Hook+")")
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return "Handlers of hooks capstan does not call yet: " + strings.Join(names, ", ")
}

// recordEvents records a failed discovery, and a successful one that changed the handlers.
func (r *Reconciler) recordEvents(s *scope, before []runtimev1.ExtensionHandler) {
	if s.failure != nil {
		r.Recorder.Eventf(s.ec, corev1.EventTypeWarning, discoveryFailedEvent, "Discovery failed: %s", s.failure.Error())
		return
	}
	if equality.Semantic.DeepEqual(before, s.ec.Status.Handlers) {
		return
	}
	names := make([]string, 0, len(s.ec.Status.Handlers))
	for _, h := range s.ec.Status.Handlers {
		names = append(names, h.Name+" ("+h.RequestHook.Hook+")")
	}
	r.Recorder.Eventf(s.ec, corev1.EventTypeNormal, discoveredEvent, "Discovered %d handlers: %s", len(names), strings.Join(names, ", "))
}

package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Hook is an admission webhook entry the manager serves, which the API server must be able to call before
// the manager is ready.
type Hook struct {
	// Mutating says whether the entry is in a MutatingWebhookConfiguration (or a Validating one).
	Mutating bool
	// Path is the path of the entry's Service reference.
	Path string
}

// Rotator keeps a manager's webhook certificates: a CA and a serving certificate for the webhook
// Service's DNS names, in a Secret of the manager's namespace that every replica shares. It creates the
// Secret, reuses a valid one (across restarts and replicas), recreates it with the same certificates when
// it is deleted, renews the serving certificate and the CA before they expire, writes the CA bundle into
// every webhook entry and CRD conversion webhook that points at the Service, and serves the certificate
// to the webhook server. It runs on every replica, without leader election: its writes are idempotent and
// guarded by resource versions.
type Rotator struct {
	// Client reads and writes the Secret (uncached reads), webhook configurations and CRDs.
	Client client.Client
	// Namespace, SecretName and ServiceName identify the Secret and the webhook Service.
	Namespace, SecretName, ServiceName string
	// Hooks are the admission webhook entries that must carry the CA bundle before the manager is ready.
	Hooks []Hook
	// CRDs are the CRDs whose conversion webhook the manager serves: each that points at the Service must
	// carry the CA bundle before the manager is ready (one installed without the conversion webhook is
	// not waited for).
	CRDs []string
	// Host and Port are where the webhook server listens; the readiness check connects there (to
	// 127.0.0.1 when Host is empty or an unspecified address).
	Host string
	Port int
	// Policy sets validity and renewal; DefaultPolicy when zero.
	Policy Policy
	// Now returns the current time; time.Now when nil.
	Now func() time.Time

	mu      sync.RWMutex
	current *material
	serving *material
	cache   cache.Cache
}

// DNSNames returns the names of the webhook Service that the serving certificate is valid for.
func (r *Rotator) DNSNames() []string {
	svc := r.ServiceName + "." + r.Namespace + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

func (r *Rotator) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Rotator) policy() Policy {
	if r.Policy == (Policy{}) {
		return DefaultPolicy()
	}
	return r.Policy
}

// SetupWithManager adds the rotator's controller to mgr: it watches the Secret (through a cache of its
// own, as the manager does not cache Secrets), the webhook configurations and the CRDs.
func (r *Rotator) SetupWithManager(mgr ctrl.Manager) error {
	secretCache, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{r.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", r.SecretName),
		}},
	})
	if err != nil {
		return fmt.Errorf("creating the cache of the webhook certificate Secret: %w", err)
	}
	if err := mgr.Add(secretCache); err != nil {
		return err
	}
	r.cache = mgr.GetCache()
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.SecretName}}
	toKey := func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{key} }
	crdToKey := func(_ context.Context, o client.Object) []reconcile.Request {
		if crd, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok && r.conversionPointsHere(crd) {
			return []reconcile.Request{key}
		}
		return nil
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhook-certificates").
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 1,
			// Every replica serves webhooks, so every replica keeps the certificates.
			NeedLeaderElection: ptr.To(false),
			SkipNameValidation: ptr.To(true),
		}).
		WatchesRawSource(source.Kind(secretCache, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(
			func(context.Context, *corev1.Secret) []reconcile.Request { return []reconcile.Request{key} }))).
		// The Secret may not exist yet: start with one reconcile anyway.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(key)
			return nil
		})).
		Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(toKey)).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(toKey)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(crdToKey)).
		Complete(r)
}

// Reconcile makes the Secret hold valid certificates, writes the CA bundle where the API server reads it,
// then serves the Secret's certificate.
func (r *Rotator) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	now := r.now()
	m, err := r.ensureSecret(ctx, now)
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			// Another replica wrote the Secret in between: look again.
			return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return reconcile.Result{}, err
	}
	r.mu.Lock()
	if r.serving == nil {
		// Nothing is served yet: serve at once, the API server cannot call without the bundle anyway.
		r.serving = m
	}
	r.mu.Unlock()
	if err := r.inject(ctx, m.bundlePEM()); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return reconcile.Result{}, err
	}
	// Serve the new certificate only once the API server trusts its CA.
	r.mu.Lock()
	r.serving = m
	r.mu.Unlock()

	p := r.policy()
	next := min(m.cert.NotAfter.Add(-p.CertRenewBefore).Sub(now), m.cas[0].NotAfter.Add(-p.CARenewBefore).Sub(now))
	return reconcile.Result{RequeueAfter: max(min(next, time.Hour), time.Second)}, nil
}

// ensureSecret returns the certificates of the Secret, after creating, repairing or renewing it.
func (r *Rotator) ensureSecret(ctx context.Context, now time.Time) (*material, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("Secret", klogKey(r.Namespace, r.SecretName))
	key := client.ObjectKey{Namespace: r.Namespace, Name: r.SecretName}
	names, p := r.DNSNames(), r.policy()
	r.mu.RLock()
	inMemory := r.current
	r.mu.RUnlock()

	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		m := inMemory
		if m == nil || m.check(now, names, p).needed() {
			log.Info("Creating the webhook certificate Secret with a new CA")
			if m, err = renew(nil, renewal{ca: true, cert: true}, now, r.ServiceName, names, p); err != nil {
				return nil, err
			}
		} else {
			log.Info("Recreating the deleted webhook certificate Secret with the certificates in use")
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.SecretName},
			Type: corev1.SecretTypeTLS, Data: m.data()}
		if err := r.Client.Create(ctx, secret); err != nil {
			return nil, fmt.Errorf("creating the webhook certificate Secret %s: %w", key, err)
		}
		r.remember(m)
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the webhook certificate Secret %s: %w", key, err)
	}

	m, parseErr := fromSecret(secret)
	var need renewal
	switch {
	case parseErr != nil && inMemory != nil && !inMemory.check(now, names, p).needed():
		log.Info("The webhook certificate Secret does not hold usable certificates: writing back the ones in use", "problem", parseErr.Error())
		m, need = inMemory, renewal{reason: "repair"}
	case parseErr != nil:
		log.Info("The webhook certificate Secret does not hold usable certificates: creating a new CA", "problem", parseErr.Error())
		m, need = nil, renewal{ca: true, cert: true}
	default:
		need = m.check(now, names, p)
	}
	if need.needed() {
		if need.reason != "" && m != nil {
			log.Info("Renewing webhook certificates", "reason", need.reason, "newCA", need.ca)
		}
		if m, err = renew(m, need, now, r.ServiceName, names, p); err != nil {
			return nil, err
		}
	}
	if need.needed() || need.reason == "repair" {
		secret.Data = m.data()
		if err := r.Client.Update(ctx, secret); err != nil {
			return nil, fmt.Errorf("updating the webhook certificate Secret %s: %w", key, err)
		}
	}
	r.remember(m)
	return m, nil
}

func (r *Rotator) remember(m *material) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current = m
}

func klogKey(namespace, name string) string { return namespace + "/" + name }

// pointsHere reports whether a webhook's Service reference is the manager's webhook Service.
func (r *Rotator) pointsHere(svc *admissionregistrationv1.ServiceReference) bool {
	return svc != nil && svc.Namespace == r.Namespace && svc.Name == r.ServiceName
}

func (r *Rotator) conversionPointsHere(crd *apiextensionsv1.CustomResourceDefinition) bool {
	c := crd.Spec.Conversion
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
		return false
	}
	svc := c.Webhook.ClientConfig.Service
	return svc != nil && svc.Namespace == r.Namespace && svc.Name == r.ServiceName
}

// inject writes the CA bundle into every webhook entry and CRD conversion webhook that points at the
// Service, where it is not there yet.
func (r *Rotator) inject(ctx context.Context, bundle []byte) error {
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := r.Client.List(ctx, validating); err != nil {
		return fmt.Errorf("listing ValidatingWebhookConfigurations: %w", err)
	}
	for i := range validating.Items {
		c := &validating.Items[i]
		configs := make([]*admissionregistrationv1.WebhookClientConfig, len(c.Webhooks))
		for j := range c.Webhooks {
			configs[j] = &c.Webhooks[j].ClientConfig
		}
		if err := r.injectWebhooks(ctx, "ValidatingWebhookConfiguration", c, configs, bundle); err != nil {
			errs = append(errs, err)
		}
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := r.Client.List(ctx, mutating); err != nil {
		return fmt.Errorf("listing MutatingWebhookConfigurations: %w", err)
	}
	for i := range mutating.Items {
		c := &mutating.Items[i]
		configs := make([]*admissionregistrationv1.WebhookClientConfig, len(c.Webhooks))
		for j := range c.Webhooks {
			configs[j] = &c.Webhooks[j].ClientConfig
		}
		if err := r.injectWebhooks(ctx, "MutatingWebhookConfiguration", c, configs, bundle); err != nil {
			errs = append(errs, err)
		}
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.Client.List(ctx, crds); err != nil {
		return fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if !r.conversionPointsHere(crd) || bytes.Equal(crd.Spec.Conversion.Webhook.ClientConfig.CABundle, bundle) {
			continue
		}
		log.Info("Writing the conversion webhook CA bundle", "CustomResourceDefinition", crd.Name)
		crd.Spec.Conversion.Webhook.ClientConfig.CABundle = bundle
		if err := r.Client.Update(ctx, crd); err != nil {
			errs = append(errs, fmt.Errorf("writing the CA bundle into CustomResourceDefinition %s: %w", crd.Name, err))
		}
	}
	return errors.Join(errs...)
}

// injectWebhooks writes bundle into the client configs of a webhook configuration (c, of kind) that point
// at the Service, and updates c when one changed.
func (r *Rotator) injectWebhooks(ctx context.Context, kind string, c client.Object, configs []*admissionregistrationv1.WebhookClientConfig, bundle []byte) error {
	changed := false
	for _, cc := range configs {
		if r.pointsHere(cc.Service) && !bytes.Equal(cc.CABundle, bundle) {
			cc.CABundle, changed = bundle, true
		}
	}
	if !changed {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Writing the webhook CA bundle", kind, c.GetName())
	if err := r.Client.Update(ctx, c); err != nil {
		return fmt.Errorf("writing the CA bundle into %s %s: %w", kind, c.GetName(), err)
	}
	return nil
}

// GetCertificate serves the current certificate; it is the webhook server's tls.Config.GetCertificate.
func (r *Rotator) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.serving == nil {
		return nil, errors.New("the webhook certificates are not ready yet")
	}
	return &r.serving.tls, nil
}

// Ready is a readiness check: it passes once the API server can call the manager's webhooks, that is
// when every hook has its entry in a webhook configuration, with a CA bundle that verifies the
// certificate the server presents on the port for the Service's name.
func (r *Rotator) Ready(req *http.Request) error {
	r.mu.RLock()
	serving := r.serving
	r.mu.RUnlock()
	if serving == nil {
		return fmt.Errorf("no webhook certificate yet: see the log of the webhook-certificates controller (Secret %s)", klogKey(r.Namespace, r.SecretName))
	}
	var bundle []byte
	for _, h := range r.Hooks {
		b, err := r.configuredBundle(req.Context(), h)
		if err != nil {
			return err
		}
		bundle = b
	}
	for _, name := range r.CRDs {
		if err := r.conversionReady(req.Context(), name); err != nil {
			return err
		}
	}
	if bundle == nil {
		bundle = serving.bundlePEM()
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		return errors.New("the CA bundle of the webhook configuration holds no certificate")
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second},
		Config: &tls.Config{RootCAs: pool, ServerName: r.DNSNames()[0], MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(req.Context(), "tcp", net.JoinHostPort(DialHost(r.Host), strconv.Itoa(r.Port)))
	if err != nil {
		return fmt.Errorf("the webhook server on port %d does not present a certificate the API server trusts: %w", r.Port, err)
	}
	return conn.Close()
}

// conversionReady reports why the API server cannot call the conversion webhook of CRD name yet: its
// conversion points at the Service and has no CA bundle.
func (r *Rotator) conversionReady(ctx context.Context, name string) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := r.cache.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return client.IgnoreNotFound(err)
	}
	if r.conversionPointsHere(crd) && len(crd.Spec.Conversion.Webhook.ClientConfig.CABundle) == 0 {
		return fmt.Errorf("the conversion webhook of CustomResourceDefinition %s has no CA bundle yet", name)
	}
	return nil
}

// configuredBundle returns the CA bundle of the configuration entry of a hook, or why the API server
// cannot call it.
func (r *Rotator) configuredBundle(ctx context.Context, h Hook) ([]byte, error) {
	kind := "ValidatingWebhookConfiguration"
	var entries []admissionregistrationv1.WebhookClientConfig
	if h.Mutating {
		kind = "MutatingWebhookConfiguration"
		list := &admissionregistrationv1.MutatingWebhookConfigurationList{}
		if err := r.cache.List(ctx, list); err != nil {
			return nil, err
		}
		for _, c := range list.Items {
			for _, w := range c.Webhooks {
				entries = append(entries, w.ClientConfig)
			}
		}
	} else {
		list := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
		if err := r.cache.List(ctx, list); err != nil {
			return nil, err
		}
		for _, c := range list.Items {
			for _, w := range c.Webhooks {
				entries = append(entries, w.ClientConfig)
			}
		}
	}
	for _, cc := range entries {
		if !r.pointsHere(cc.Service) || ptr.Deref(cc.Service.Path, "") != h.Path {
			continue
		}
		if len(cc.CABundle) == 0 {
			return nil, fmt.Errorf("the %s entry for %s has no CA bundle yet", kind, h.Path)
		}
		return cc.CABundle, nil
	}
	return nil, fmt.Errorf("no %s has an entry for Service %s path %s: apply the provider's components, which hold it",
		kind, klogKey(r.Namespace, r.ServiceName), h.Path)
}

// DialHost returns the address to connect to a server listening on host: host itself, or 127.0.0.1 when
// host is empty or an unspecified address (0.0.0.0, ::), which listen on every interface.
func DialHost(host string) string {
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "127.0.0.1"
	}
	return host
}

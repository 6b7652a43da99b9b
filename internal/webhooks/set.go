package webhooks

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/internal/conversion"
	"github.com/capstan-dev/capstan/internal/localnet"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/webhooks/certs"
)

// TimeoutSeconds is how long the API server waits for a webhook before failing the request.
const TimeoutSeconds = 10

// PortName is the name of the webhook container port, which the Service targets.
const PortName = "webhook-server"

// Set is the webhooks of one manager.
type Set struct {
	// Prefix names the manager's webhook objects as upstream does: <prefix>-webhook-service,
	// <prefix>-webhook-service-cert (the certificate Secret), <prefix>-validating-webhook-configuration and
	// <prefix>-mutating-webhook-configuration. The core's is "capi".
	Prefix string
	// Selector selects the manager's Pods, for the webhook Service.
	Selector map[string]string
	// Hooks are the manager's admission webhooks.
	Hooks []Hook
	// Conversions are the kinds whose CRDs call the manager's conversion webhook (crd.ConversionPath) to
	// convert between the versions they serve (crd.WithConversionWebhook).
	Conversions conversion.Kinds
}

// CRDName returns the name of the CRD of a kind: <plural>.<group>.
func CRDName(gk schema.GroupKind) string { return resource(gk.WithVersion("")) + "." + gk.Group }

// ServiceName is the name of the webhook Service.
func (s Set) ServiceName() string { return s.Prefix + "-webhook-service" }

// SecretName is the name of the certificate Secret.
func (s Set) SecretName() string { return s.Prefix + "-webhook-service-cert" }

// ValidatingConfigurationName is the name of the ValidatingWebhookConfiguration.
func (s Set) ValidatingConfigurationName() string {
	return s.Prefix + "-validating-webhook-configuration"
}

// MutatingConfigurationName is the name of the MutatingWebhookConfiguration.
func (s Set) MutatingConfigurationName() string { return s.Prefix + "-mutating-webhook-configuration" }

// Options are the webhook flags of a manager, with upstream Cluster API's names.
type Options struct {
	// Host is the address the webhook server listens on: every address when empty, as upstream's, so that
	// the API server reaches the Pod; 127.0.0.1 in the embedded management cluster.
	Host string
	// Port is where the webhook server listens; a negative port disables it (and the webhooks).
	Port int
	// CertDir, when set, holds certificates that someone else manages (cert-manager, for example); when
	// empty the manager manages its own (package certs).
	CertDir, CertName, KeyName string
	// TLSOpts are applied to the server's TLS configuration after the TLS 1.2 minimum: the manager's
	// --tls-min-version and --tls-cipher-suites (controllermanager.Options.TLSOptions).
	TLSOpts []func(*tls.Config)
}

// DefaultOptions returns upstream's defaults, except that certificates are self-managed and that, in the
// embedded management cluster, the server listens on 127.0.0.1 only (localnet.ListenHost).
func DefaultOptions() Options {
	return Options{Host: localnet.ListenHost(), Port: 9443, CertName: "tls.crt", KeyName: "tls.key"}
}

// AddFlags registers the webhook flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Host, "webhook-host", o.Host, "Address the webhook server listens on; every address when empty (what a Pod needs: the API server calls it at the Pod's IP). "+
		"127.0.0.1, whatever the flag says, in the embedded management cluster (capstan up).")
	fs.IntVar(&o.Port, "webhook-port", o.Port, "Port of the webhook server; a negative port disables the webhooks.")
	fs.StringVar(&o.CertDir, "webhook-cert-dir", o.CertDir, "Directory of the webhook server's certificate, when it is managed by something else (cert-manager); "+
		"when empty the manager creates and rotates its own, in the Secret <prefix>-webhook-service-cert of its namespace.")
	fs.StringVar(&o.CertName, "webhook-cert-name", o.CertName, "Name of the webhook server's certificate file in --webhook-cert-dir.")
	fs.StringVar(&o.KeyName, "webhook-key-name", o.KeyName, "Name of the webhook server's key file in --webhook-cert-dir.")
}

// serviceAccountNamespaceFile is where a Pod finds its namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Namespace returns the namespace the manager runs in: $POD_NAMESPACE (the downward API, and the
// embedded cluster's local runtime, set it), else the namespace of the Pod's service account.
func Namespace() (string, error) {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data)), nil
	}
	return "", errors.New("cannot tell which namespace the manager runs in, which holds its webhook Service and certificates: " +
		"set POD_NAMESPACE (the provider's manifests set it from metadata.namespace), or disable the webhooks with --webhook-port=-1")
}

// Setup adds the webhook server to mgr with every hook of the Set, the certificate rotator (unless
// o.CertDir is set), and a readiness check that passes once the API server can call the webhooks.
// namespace is the manager's namespace (see Namespace).
func (s Set) Setup(mgr ctrl.Manager, o Options, namespace string) error {
	if o.Port < 0 || len(s.Hooks) == 0 && len(s.Conversions) == 0 {
		return nil
	}
	scheme := mgr.GetScheme()
	wo := webhook.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir, CertName: o.CertName, KeyName: o.KeyName,
		TLSOpts: append([]func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}, o.TLSOpts...)}
	var rotator *certs.Rotator
	if o.CertDir == "" {
		rotator = &certs.Rotator{Client: mgr.GetClient(), Namespace: namespace, SecretName: s.SecretName(),
			ServiceName: s.ServiceName(), Host: o.Host, Port: o.Port}
		for _, h := range s.Hooks {
			gvk, err := h.gvk(scheme)
			if err != nil {
				return err
			}
			rotator.Hooks = append(rotator.Hooks, certs.Hook{Mutating: h.Mutating, Path: h.path(gvk)})
		}
		for _, gk := range s.Conversions.GroupKinds() {
			rotator.CRDs = append(rotator.CRDs, CRDName(gk))
		}
		wo.TLSOpts = append(wo.TLSOpts, func(c *tls.Config) { c.GetCertificate = rotator.GetCertificate })
	}
	server := webhook.NewServer(wo)
	registered := map[string]bool{}
	for _, h := range s.Hooks {
		gvk, err := h.gvk(scheme)
		if err != nil {
			return err
		}
		// Entries of one kind for different operations share the handler.
		if path := h.path(gvk); !registered[path] {
			registered[path] = true
			server.Register(path, h.handler(scheme))
		}
	}
	if len(s.Conversions) > 0 {
		registry, err := s.Conversions.Registry(scheme)
		if err != nil {
			return err
		}
		server.Register(crd.ConversionPath, crconversion.NewWebhookHandler(scheme, registry))
	}
	if err := mgr.Add(server); err != nil {
		return err
	}
	if rotator == nil {
		if err := mgr.AddHealthzCheck("webhook-server", server.StartedChecker()); err != nil {
			return err
		}
		return mgr.AddReadyzCheck("webhook-server", server.StartedChecker())
	}
	// The server has no certificate to present until the rotator's first pass: it is alive as soon as
	// it accepts connections.
	if err := mgr.AddHealthzCheck("webhook-server", listening(o.Host, o.Port)); err != nil {
		return err
	}
	if err := rotator.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the webhook certificates: %w", err)
	}
	return mgr.AddReadyzCheck("webhooks", healthz.Checker(rotator.Ready))
}

// listening is a health check that passes when something accepts TCP connections on host:port.
func listening(host string, port int) healthz.Checker {
	return func(req *http.Request) error {
		d := &net.Dialer{Timeout: 2 * time.Second}
		conn, err := d.DialContext(req.Context(), "tcp", net.JoinHostPort(certs.DialHost(host), strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("the webhook server does not accept connections: %w", err)
		}
		return conn.Close()
	}
}

// Manifests returns the objects that register the Set's webhooks in namespace: the webhook Service and
// the webhook configurations (without CA bundle: the manager writes it). Every entry fails closed
// (failurePolicy Fail) after TimeoutSeconds, but those of hooks made with FailOpen.
func (s Set) Manifests(scheme *runtime.Scheme, namespace string) ([]client.Object, error) {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: s.ServiceName(), Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Ports:    []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromString(PortName)}},
			Selector: s.Selector,
		},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: s.ValidatingConfigurationName()},
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: s.MutatingConfigurationName()},
	}
	for _, h := range s.Hooks {
		gvk, err := h.gvk(scheme)
		if err != nil {
			return nil, err
		}
		cc := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: namespace, Name: s.ServiceName(), Path: ptr.To(h.path(gvk))}}
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: h.operations(),
			Rule: admissionregistrationv1.Rule{APIGroups: []string{gvk.Group}, APIVersions: []string{gvk.Version},
				Resources: []string{resource(gvk)}},
		}}
		if h.Mutating {
			mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: h.name(gvk), ClientConfig: cc, Rules: rules, MatchConditions: h.MatchConditions,
				FailurePolicy: ptr.To(h.failurePolicy()), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](TimeoutSeconds),
				AdmissionReviewVersions: []string{"v1"},
			})
			continue
		}
		validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: h.name(gvk), ClientConfig: cc, Rules: rules, MatchConditions: h.MatchConditions,
			FailurePolicy: ptr.To(h.failurePolicy()), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	out := []client.Object{svc}
	if len(validating.Webhooks) > 0 {
		out = append(out, validating)
	}
	if len(mutating.Webhooks) > 0 {
		out = append(out, mutating)
	}
	return out, nil
}

// ManifestsYAML returns Manifests as a YAML stream, for a provider's config directory.
func (s Set) ManifestsYAML(scheme *runtime.Scheme, namespace string) ([]byte, error) {
	objs, err := s.Manifests(scheme, namespace)
	if err != nil {
		return nil, err
	}
	docs := make([]unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		docs = append(docs, unstructured.Unstructured{Object: u})
	}
	data, err := manifest.Marshal(docs)
	if err != nil {
		return nil, err
	}
	header := "# The webhooks of the manager and their Service; generated from internal/webhooks by `make generate`, do not edit.\n" +
		"# The manager writes the CA bundle of its self-managed certificates into the configurations (see docs/webhooks.md).\n"
	return append(append([]byte(header), data...), '\n'), nil
}

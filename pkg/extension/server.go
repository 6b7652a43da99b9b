// Package extension is the SDK for Runtime Extension authors: a Server that serves the Discovery hook and
// the handlers registered with AddHandler over HTTPS, decoding requests into the typed requests of
// github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1 and encoding the typed responses. It works
// with capstan and with upstream Cluster API alike: the paths, requests and responses are upstream's.
//
//	srv := extension.NewServer(extension.Options{CertDir: "/tmp/k8s-webhook-server/serving-certs"})
//	err := extension.AddHandler(srv, extension.Handler[*hooksv1.BeforeClusterCreateRequest, *hooksv1.BeforeClusterCreateResponse]{
//		Hook: hooksv1.BeforeClusterCreate, Name: "before-cluster-create",
//		Func: func(ctx context.Context, req *hooksv1.BeforeClusterCreateRequest, resp *hooksv1.BeforeClusterCreateResponse) {
//			resp.RetryAfterSeconds = 5 // hold the creation of the Cluster's topology
//		},
//	})
//	err = srv.Start(ctx)
//
// A handler's response starts as status Success; it sets status Failure and a message to fail the call.
// A handler that panics answers Failure, and the server goes on. MergePatch computes the patches that the
// in-place update hooks (CanUpdateMachine, CanUpdateMachineSet) answer.
package extension

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"

	hooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
)

// Options configure a Server.
type Options struct {
	// Host is the address to listen on; all addresses when empty.
	Host string
	// Port is the port to listen on; 9443 when zero.
	Port int
	// CertDir holds the serving certificate and key, tls.crt and tls.key (a Secret of type kubernetes.io/tls
	// mounted as a volume). They are read again when they change, so a rotated certificate is served
	// without a restart.
	CertDir string
	// CertName and KeyName are the file names in CertDir; tls.crt and tls.key when empty.
	CertName, KeyName string
	// Logger logs the calls; discarded when zero.
	Logger logr.Logger
}

// Handler is a function that serves one hook, with the name the core calls it by and, optionally, the
// timeout and failure policy the core should apply to its calls (discovery tells the core).
type Handler[Req hooksv1.RequestObject, Resp hooksv1.ResponseObject] struct {
	Hook hooksv1.Hook
	// Name is the handler's name: a DNS label, unique in the server. The core calls the handler as
	// <Name>.<ExtensionConfig name>.
	Name string
	Func func(ctx context.Context, req Req, resp Resp)
	// TimeoutSeconds is how long the core waits for an answer (at most 30); 10 when nil.
	TimeoutSeconds *int32
	// FailurePolicy says what the core does when it cannot call the handler: Fail (the default) retries
	// the operation, Ignore goes on without the handler.
	FailurePolicy *hooksv1.FailurePolicy
}

// Server serves Runtime Extension handlers.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.RWMutex
	handlers []hooksv1.ExtensionHandler
}

// NewServer returns a Server with no handler; Discovery is always served.
func NewServer(o Options) *Server {
	if o.Port == 0 {
		o.Port = 9443
	}
	if o.CertName == "" {
		o.CertName = "tls.crt"
	}
	if o.KeyName == "" {
		o.KeyName = "tls.key"
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	s := &Server{opts: o, mux: http.NewServeMux()}
	s.mux.HandleFunc(hooksv1.Discovery.Path(""), s.serveDiscovery)
	return s
}

// AddHandler registers a handler with s. The request and response types must be those of h.Hook.
func AddHandler[Req hooksv1.RequestObject, Resp hooksv1.ResponseObject](s *Server, h Handler[Req, Resp]) error {
	if h.Hook == hooksv1.Discovery || !h.Hook.Known() {
		return fmt.Errorf("handler %q: %q is not a hook a handler can serve", h.Name, h.Hook)
	}
	if msgs := validation.IsDNS1123Label(h.Name); len(msgs) > 0 {
		return fmt.Errorf("handler name %q is not a DNS label: %s", h.Name, strings.Join(msgs, ", "))
	}
	if h.Func == nil {
		return fmt.Errorf("handler %q has no Func", h.Name)
	}
	if h.TimeoutSeconds != nil && (*h.TimeoutSeconds < 0 || *h.TimeoutSeconds > hooksv1.MaxHandlersTimeoutSeconds) {
		return fmt.Errorf("handler %q: timeoutSeconds must be between 0 and %d", h.Name, hooksv1.MaxHandlersTimeoutSeconds)
	}
	if p := h.FailurePolicy; p != nil && *p != hooksv1.FailurePolicyFail && *p != hooksv1.FailurePolicyIgnore {
		return fmt.Errorf("handler %q: failurePolicy must be %s or %s", h.Name, hooksv1.FailurePolicyFail, hooksv1.FailurePolicyIgnore)
	}
	req, resp, err := h.Hook.New()
	if err != nil {
		return err
	}
	if _, ok := req.(Req); !ok {
		return fmt.Errorf("handler %q: %s takes a %T, not a %s", h.Name, h.Hook, req, reflect.TypeFor[Req]())
	}
	if _, ok := resp.(Resp); !ok {
		return fmt.Errorf("handler %q: %s answers a %T, not a %s", h.Name, h.Hook, resp, reflect.TypeFor[Resp]())
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.handlers, func(e hooksv1.ExtensionHandler) bool { return e.Name == h.Name }) {
		return fmt.Errorf("a handler named %q is already registered", h.Name)
	}
	s.handlers = append(s.handlers, hooksv1.ExtensionHandler{
		Name:           h.Name,
		RequestHook:    hooksv1.GroupVersionHook{APIVersion: hooksv1.GroupVersion.String(), Hook: string(h.Hook)},
		TimeoutSeconds: h.TimeoutSeconds,
		FailurePolicy:  h.FailurePolicy,
	})
	s.mux.HandleFunc(h.Hook.Path(h.Name), func(w http.ResponseWriter, r *http.Request) {
		s.serveHook(w, r, h.Hook, h.Name, func(ctx context.Context, req, resp any) {
			h.Func(ctx, req.(Req), resp.(Resp))
		})
	})
	return nil
}

// ServeHTTP serves the discovery and handler paths, for a caller that runs its own HTTPS server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Start serves HTTPS with the certificate of Options.CertDir until ctx is done.
func (s *Server) Start(ctx context.Context) error {
	l, err := net.Listen("tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port)))
	if err != nil {
		return fmt.Errorf("listening for the Runtime Extension server: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve serves HTTPS on l until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	certs := &certificate{
		certFile: filepath.Join(s.opts.CertDir, s.opts.CertName),
		keyFile:  filepath.Join(s.opts.CertDir, s.opts.KeyName),
	}
	if _, err := certs.get(nil); err != nil {
		_ = l.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(logWriter{s.opts.Logger}, "", 0),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get},
	}
	errs := make(chan error, 1)
	go func() { errs <- srv.ServeTLS(l, "", "") }()
	s.opts.Logger.Info("Serving Runtime Extension handlers", "address", l.Addr().String())
	select {
	case err := <-errs:
		return fmt.Errorf("serving Runtime Extension handlers: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx) //nolint:contextcheck // ctx is done: the shutdown gets its own time.
	}
}

func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	s.mu.RLock()
	resp := &hooksv1.DiscoveryResponse{Handlers: slices.Clone(s.handlers)}
	s.mu.RUnlock()
	resp.SetGroupVersionKind(hooksv1.Discovery.ResponseKind())
	resp.Status = hooksv1.ResponseStatusSuccess
	writeJSON(w, resp)
}

func (s *Server) serveHook(w http.ResponseWriter, r *http.Request, hook hooksv1.Hook, name string, call func(ctx context.Context, req, resp any)) {
	log := s.opts.Logger.WithValues("hook", hook, "handler", name)
	if r.Method != http.MethodPost {
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	req, resp, err := hook.New()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(body, req); err != nil {
		http.Error(w, fmt.Sprintf("the request is not a %s: %v", hook.RequestKind().Kind, err), http.StatusBadRequest)
		return
	}
	if gvk := req.GetObjectKind().GroupVersionKind(); gvk != hook.RequestKind() {
		http.Error(w, fmt.Sprintf("the request is a %q of %q, not a %s", gvk.Kind, gvk.GroupVersion(), hook.RequestKind().Kind), http.StatusBadRequest)
		return
	}
	ctx := logr.NewContext(r.Context(), log)
	if t, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	resp.SetStatus(hooksv1.ResponseStatusSuccess)
	func() {
		defer func() {
			if p := recover(); p != nil {
				log.Error(fmt.Errorf("%v", p), "The handler panicked")
				resp.SetStatus(hooksv1.ResponseStatusFailure)
				resp.SetMessage(fmt.Sprintf("handler %s panicked", name))
			}
		}()
		call(ctx, req, resp)
	}()
	resp.GetObjectKind().SetGroupVersionKind(hook.ResponseKind())
	log.V(4).Info("Answered", "status", resp.GetStatus())
	writeJSON(w, resp)
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// logWriter writes the HTTP server's errors (TLS handshakes that failed, mostly) to the logger.
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.V(2).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

// certificate serves the key pair of two files, read again when either changes.
type certificate struct {
	certFile, keyFile string

	mu       sync.Mutex
	modified time.Time
	cert     *tls.Certificate
}

func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var latest time.Time
	for _, f := range []string{c.certFile, c.keyFile} {
		info, err := os.Stat(f)
		if err != nil {
			if c.cert != nil {
				return c.cert, nil // being replaced: keep serving the last one
			}
			return nil, fmt.Errorf("reading the serving certificate: %w", err)
		}
		if info.ModTime().After(latest) {
			latest = info.ModTime()
		}
	}
	if c.cert != nil && !latest.After(c.modified) {
		return c.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("loading the serving certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.modified = &pair, latest
	return c.cert, nil
}

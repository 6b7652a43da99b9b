package ui

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// DefaultAddress is where the server listens unless told otherwise: a free port on loopback.
const DefaultAddress = "127.0.0.1:0"

// Options configure a Server.
type Options struct {
	// Config reaches the management cluster; the server only reads with it (get, list, watch).
	Config *rest.Config
	// Namespace restricts the view to one namespace; every namespace when empty.
	Namespace string
	// Address is the host:port to listen on; DefaultAddress when empty.
	Address string
	// Token is the access token; a random one when empty, unless NoToken.
	Token string
	// NoToken serves without a token. It is refused unless Address is a loopback address: the view is
	// then reachable only from this machine (or, in a Pod, through `kubectl port-forward`, behind the
	// Kubernetes API's authentication).
	NoToken bool
	// Log receives the server's logs.
	Log logr.Logger
	// Debounce is how long the server gathers changes before it recomputes the views they touch and
	// pushes them; 100ms when zero.
	Debounce time.Duration
	// NodesLinger is how long the workload cluster's Nodes stay watched after the last viewer of the
	// Cluster's page left; 30s when zero.
	NodesLinger time.Duration
}

// Server is the web view.
type Server struct {
	opts     Options
	hub      *hub
	listener net.Listener
	http     *http.Server
	done     chan struct{}
	err      error
}

// New checks the options and prepares a server; Start starts it.
func New(o Options) (*Server, error) {
	if o.Config == nil {
		return nil, errors.New("the web view needs the management cluster's REST configuration")
	}
	if o.Address == "" {
		o.Address = DefaultAddress
	}
	host, _, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("--address %q is not host:port (e.g. 127.0.0.1:8080): %w", o.Address, err)
	}
	if o.NoToken && !isLoopback(host) {
		return nil, fmt.Errorf("--no-token serves the view to anyone who reaches %s: it is allowed only on a loopback address (127.0.0.1, ::1, localhost); keep the token, or listen on loopback and reach it with `kubectl port-forward`", o.Address)
	}
	if o.NoToken && o.Token != "" {
		return nil, errors.New("--no-token and a token exclude each other")
	}
	if !o.NoToken && o.Token == "" {
		if o.Token, err = newToken(); err != nil {
			return nil, err
		}
	}
	if o.Debounce == 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.NodesLinger == 0 {
		o.NodesLinger = 30 * time.Second
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	h, err := newHub(o)
	if err != nil {
		return nil, err
	}
	return &Server{opts: o, hub: h, done: make(chan struct{})}, nil
}

// Start starts the watches, waits until the Clusters are read, and serves until ctx is done (see Wait).
func (s *Server) Start(ctx context.Context) error {
	if err := s.hub.start(ctx); err != nil {
		return err
	}
	l, err := net.Listen("tcp", s.opts.Address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.opts.Address, err)
	}
	s.listener = l
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		defer close(s.done)
		err := s.http.Serve(l)
		if !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.http.Shutdown(shutdown)
	}()
	s.opts.Log.Info("Serving the web view", "address", l.Addr().String())
	return nil
}

// Wait returns once the server has stopped, with the error that stopped it.
func (s *Server) Wait() error {
	<-s.done
	s.hub.wait()
	return s.err
}

// URL is the address to open in a browser, with the token when there is one.
func (s *Server) URL() string {
	u := url.URL{Scheme: "http", Host: s.listener.Addr().String(), Path: "/"}
	if s.opts.Token != "" {
		u.RawQuery = url.Values{tokenParam: {s.opts.Token}}.Encode()
	}
	return u.String()
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Handler serves the view (with the token check); it needs Start's watches.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveIndex)
	mux.HandleFunc("GET /clusters/{namespace}/{name}", s.serveIndex)
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles()))
	mux.HandleFunc("GET /api/clusters", s.serveClusters)
	mux.HandleFunc("GET /api/clusters/{namespace}/{name}", s.serveCluster)
	mux.HandleFunc("GET /api/clusters/{namespace}/{name}/object", s.serveObject)
	mux.HandleFunc("GET /api/watch/clusters", s.watchClusters)
	mux.HandleFunc("GET /api/watch/clusters/{namespace}/{name}", s.watchCluster)
	return securityHeaders(s.authenticate(mux))
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the access token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// securityHeaders keep the page from loading anything but its own files, from being framed, and the
// token from leaking in a Referer.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

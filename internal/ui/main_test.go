package ui

import (
	"context"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// startServer starts a web view of the test API server for the test, reading through cfg (env.Config
// when nil).
func startServer(t testing.TB, cfg *rest.Config, o Options) *Server {
	t.Helper()
	if cfg == nil {
		cfg = env.Config
	}
	o.Config = cfg
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Wait(); err != nil {
			t.Errorf("web view: %v", err)
		}
	})
	return s
}

// requestCounter counts the requests made through a REST configuration, watches apart.
type requestCounter struct {
	requests, watches atomic.Int64
}

func (c *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Get("watch") == "true" {
				c.watches.Add(1)
			} else {
				c.requests.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const (
	wait     = 3 * time.Minute
	interval = 200 * time.Millisecond
)

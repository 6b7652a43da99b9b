package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/capstan-dev/capstan/internal/httpclient"
)

// Retry says how failed downloads are retried: every Interval until Timeout has passed. Files that do not
// exist, rate limits and unknown hosts are not retried.
type Retry struct {
	Interval time.Duration
	Timeout  time.Duration
}

// DefaultRetry is upstream clusterctl's: every 10 seconds for a minute.
var DefaultRetry = Retry{Interval: 10 * time.Second, Timeout: time.Minute}

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// do calls fn until it succeeds, fails permanently or the retry timeout has passed.
func (r Retry) do(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	log := logr.FromContextOrDiscard(ctx)
	deadline := time.Now().Add(r.Timeout)
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		var p *permanentError
		if errors.As(err, &p) {
			return p.err
		}
		if ctx.Err() != nil || time.Now().Add(r.Interval).After(deadline) {
			return err
		}
		log.V(1).Info("Retrying", "operation", what, "attempt", attempt, "error", err.Error(), "wait", r.Interval.String())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(r.Interval):
		}
	}
}

// ErrNotFound is matched (with errors.Is) by errors about a file, release or version that does not exist.
var ErrNotFound = errors.New("not found")

// NotFoundError says that something does not exist in a repository.
type NotFoundError struct {
	// What names the missing thing, for example `file "metadata.yaml" of release v1.2.3`.
	What string
}

func (e *NotFoundError) Error() string { return e.What + " not found" }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// RateLimitError is returned when GitHub's API refuses calls because the rate limit is exhausted.
type RateLimitError struct {
	// Reset is when the limit resets; zero when unknown.
	Reset time.Time
	// Authenticated is true when the calls were made with GITHUB_TOKEN.
	Authenticated bool
}

func (e *RateLimitError) Error() string {
	when := "an hour"
	if !e.Reset.IsZero() {
		when = "until " + e.Reset.UTC().Format("15:04 MST")
	}
	if e.Authenticated {
		return fmt.Sprintf("GitHub API rate limit reached for the GITHUB_TOKEN in use: wait %s, or set GOPROXY so that versions are listed through the Go module proxy", when)
	}
	return fmt.Sprintf("GitHub API rate limit reached: set the GITHUB_TOKEN environment variable to a GitHub personal access token to raise the limit, or wait %s", when)
}

// HTTPError is an unexpected HTTP status.
type HTTPError struct {
	URL    string
	Status string
	Code   int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: the server answered %s", e.URL, e.Status)
}

// fetcher downloads URLs with retries and remembers results (and things that do not exist) for the life
// of the process, so a command never fetches the same thing twice.
type fetcher struct {
	client *http.Client
	retry  Retry

	mu    sync.Mutex
	cache map[string]*entry
}

type entry struct {
	once  sync.Once
	value any
	err   error
}

func newFetcher(client *http.Client, retry Retry) *fetcher {
	return &fetcher{client: client, retry: retry, cache: map[string]*entry{}}
}

// memo returns the remembered result for key, computing it with fn the first time. Only successes and
// not-found errors are remembered: a transient failure is tried again by the next caller.
func (f *fetcher) memo(key string, fn func() (any, error)) (any, error) {
	f.mu.Lock()
	e, ok := f.cache[key]
	if !ok {
		e = &entry{}
		f.cache[key] = e
	}
	f.mu.Unlock()
	e.once.Do(func() { e.value, e.err = fn() })
	if e.err != nil && !errors.Is(e.err, ErrNotFound) {
		f.mu.Lock()
		if f.cache[key] == e {
			delete(f.cache, key)
		}
		f.mu.Unlock()
	}
	return e.value, e.err
}

// get downloads url. header may be nil.
func (f *fetcher) get(ctx context.Context, url string, header http.Header) ([]byte, error) {
	v, err := f.memo("GET "+url, func() (any, error) {
		var data []byte
		err := f.retry.do(ctx, "GET "+url, func(ctx context.Context) error {
			var err error
			data, err = f.getOnce(ctx, url, header)
			return err
		})
		return data, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func (f *fetcher) getOnce(ctx context.Context, url string, header http.Header) ([]byte, error) {
	logr.FromContextOrDiscard(ctx).V(4).Info("Downloading", "url", url)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, permanent(fmt.Errorf("invalid URL %s: %w", url, err))
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, permanent(fmt.Errorf("cannot reach %s: unknown host %s: check the URL, your network connection and proxy settings", url, dnsErr.Name))
		}
		var connect *httpclient.ConnectTimeoutError
		var timeout interface{ Timeout() bool }
		if f.client.Timeout > 0 && ctx.Err() == nil && !errors.As(err, &connect) && errors.As(err, &timeout) && timeout.Timeout() {
			// The client's own message depends on where the time ran out ("context deadline exceeded" while
			// connecting, "Client.Timeout exceeded while awaiting headers" after): say how long it waited.
			return nil, &TimeoutError{URL: url, After: f.client.Timeout, Err: err}
		}
		return nil, fmt.Errorf("cannot reach %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusOK:
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", url, err)
		}
		return data, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, permanent(&NotFoundError{What: url})
	case isRateLimited(resp):
		return nil, permanent(&RateLimitError{Reset: rateReset(resp)})
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return nil, &HTTPError{URL: url, Status: resp.Status, Code: resp.StatusCode}
	default:
		return nil, permanent(&HTTPError{URL: url, Status: resp.Status, Code: resp.StatusCode})
	}
}

func isRateLimited(resp *http.Response) bool {
	return (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) &&
		resp.Header.Get("X-RateLimit-Remaining") == "0"
}

func rateReset(resp *http.Response) time.Time {
	if s := resp.Header.Get("X-RateLimit-Reset"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}

// TimeoutError says that a call got no complete answer within the HTTP client's total timeout.
type TimeoutError struct {
	URL   string
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("cannot reach %s: no complete answer within %s: %v", e.URL, e.After, e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout makes the error a net.Error timeout.
func (e *TimeoutError) Timeout() bool { return true }

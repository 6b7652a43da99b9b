// Package httpclient makes HTTP clients whose calls are bounded: a connect timeout (dial and TLS
// handshake), a total timeout (the whole call, redirects and reading the body included) and a limit on
// how much of a response body is read, so that a stalled or hostile server can neither hold a worker
// forever nor make the process run out of memory. It also has the flags that change the bounds, and a
// redirect policy that stays on the first host.
package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Limits bound every call of a client.
type Limits struct {
	// ConnectTimeout bounds the dial and the TLS handshake; none when zero.
	ConnectTimeout time.Duration
	// Timeout bounds the whole call, from the dial to the last byte of the body; none when zero.
	Timeout time.Duration
	// MaxResponseBytes is the most a response body may hold; a longer body fails the read with a
	// *ResponseTooLargeError. No limit when zero or negative.
	MaxResponseBytes int64
}

// AddFlags registers --<prefix>-connect-timeout, --<prefix>-timeout and --<prefix>-max-response-size,
// with the current values as defaults; what names the calls in the help ("downloads of provider
// repositories").
func (l *Limits) AddFlags(fs *pflag.FlagSet, prefix, what string) {
	fs.DurationVar(&l.ConnectTimeout, prefix+"-connect-timeout", l.ConnectTimeout,
		fmt.Sprintf("How long the connection (dial and TLS handshake) of %s may take; 0 for no limit.", what))
	fs.DurationVar(&l.Timeout, prefix+"-timeout", l.Timeout,
		fmt.Sprintf("How long each of %s may take in all, reading the response included; 0 for no limit.", what))
	SizeVar(fs, &l.MaxResponseBytes, prefix+"-max-response-size",
		fmt.Sprintf("The largest response body of %s that is read, in bytes or with a suffix (Ki, Mi, Gi, k, M, G); 0 for no limit.", what))
}

// SizeVar registers a flag of a byte count that takes quantities (1048576, 1Mi, 64M), with *p as default.
func SizeVar(fs *pflag.FlagSet, p *int64, name, usage string) {
	fs.Var((*sizeValue)(p), name, usage)
}

// Transport returns a clone of base (http.DefaultTransport when nil) with the connect timeout applied to
// its dialer and TLS handshake, and with response bodies limited to MaxResponseBytes.
func (l Limits) Transport(base *http.Transport) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport) //nolint:forcetypeassert // the standard library's default is an *http.Transport
	}
	t := base.Clone()
	if l.ConnectTimeout > 0 {
		dial := t.DialContext
		if dial == nil {
			dial = (&net.Dialer{Timeout: l.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
		}
		t.DialContext = WithDialTimeout(dial, l.ConnectTimeout)
		t.TLSHandshakeTimeout = l.ConnectTimeout
	}
	return LimitBody(t, l.MaxResponseBytes)
}

// New returns a client with the limits l, on a clone of http.DefaultTransport (which honours the
// proxy environment variables).
func New(l Limits) *http.Client {
	return &http.Client{Transport: l.Transport(nil), Timeout: l.Timeout}
}

// Bound returns a copy of c whose calls follow l: c's timeout is replaced by l.Timeout when that is set
// and shorter (or c has none), and response bodies are limited to l.MaxResponseBytes. c's transport and
// redirect policy are kept; the connect timeout is c's transport's business. A nil c is New(l).
func Bound(c *http.Client, l Limits) *http.Client {
	if c == nil {
		return New(l)
	}
	out := *c
	if l.Timeout > 0 && (out.Timeout == 0 || l.Timeout < out.Timeout) {
		out.Timeout = l.Timeout
	}
	rt := out.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = LimitBody(rt, l.MaxResponseBytes)
	return &out
}

// WithDialTimeout returns dial bounded by timeout (none when zero or negative).
func WithDialTimeout(dial func(ctx context.Context, network, addr string) (net.Conn, error), timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if timeout <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn, err := dial(ctx, network, addr)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &ConnectTimeoutError{Addr: addr, After: timeout, Err: err}
		}
		return conn, err
	}
}

// ConnectTimeoutError says that a connection was not made within the connect timeout.
type ConnectTimeoutError struct {
	Addr  string
	After time.Duration
	Err   error
}

func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("no connection to %s within %s", e.Addr, e.After)
}

func (e *ConnectTimeoutError) Unwrap() error { return e.Err }

// Timeout makes the error a net.Error timeout.
func (e *ConnectTimeoutError) Timeout() bool { return true }

// ResponseTooLargeError says that a response body is longer than the limit.
type ResponseTooLargeError struct {
	// URL is the request's URL, without its query.
	URL   string
	Limit int64
}

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("the response of %s is larger than %s: the server sent more than expected (raise the limit with the max-response-size flag if the response is genuine)",
		e.URL, resource.NewQuantity(e.Limit, resource.BinarySI))
}

// LimitBody returns rt with every response body limited to maxBytes (rt itself when maxBytes <= 0): a
// read past the limit fails with a *ResponseTooLargeError, and a response whose Content-Length is over
// the limit fails at once.
func LimitBody(rt http.RoundTripper, maxBytes int64) http.RoundTripper {
	if maxBytes <= 0 {
		return rt
	}
	return &limitTransport{base: rt, max: maxBytes}
}

type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	u := *req.URL
	u.RawQuery, u.User = "", nil
	tooLarge := &ResponseTooLargeError{URL: u.String(), Limit: t.max}
	if resp.ContentLength > t.max {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{rc: resp.Body, remaining: t.max, err: tooLarge}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base transport.
func (t *limitTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type limitedBody struct {
	rc        io.ReadCloser
	remaining int64
	err       error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.remaining < 0 {
		return 0, b.err
	}
	// Read one byte more than allowed, to tell a body of exactly the limit from a longer one.
	if int64(len(p)) > b.remaining+1 {
		p = p[:b.remaining+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.remaining {
		n = int(b.remaining)
		b.remaining = -1
		return n, b.err
	}
	b.remaining -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// SameHostRedirects is a CheckRedirect policy that follows at most 10 redirects, all to the scheme and
// host of the first request, and refuses any other with an error naming the target.
func SameHostRedirects(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		target := *req.URL
		target.RawQuery, target.User = "", nil
		return &RedirectError{From: first.Scheme + "://" + first.Host, To: target.String()}
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// RedirectError says that a server redirected a call to another host, which the client does not follow.
type RedirectError struct{ From, To string }

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server at %s redirects to %s, another host: redirects to other hosts are not followed", e.From, e.To)
}

// sizeValue is a byte count flag that takes quantities: 1048576, 1Mi, 64M.
type sizeValue int64

func (v *sizeValue) String() string {
	return resource.NewQuantity(int64(*v), resource.BinarySI).String()
}

func (v *sizeValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a size: use a number of bytes, optionally with a suffix such as Ki, Mi, Gi", s)
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 {
		return fmt.Errorf("%q is not a size: use a whole, non-negative number of bytes", s)
	}
	*v = sizeValue(n)
	return nil
}

func (v *sizeValue) Type() string { return "size" }

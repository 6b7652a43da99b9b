package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/runtime"

	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
	"github.com/capstan-dev/capstan/internal/httpclient"
)

// DefaultLimits are the bounds of calls of a Client whose Limits are zero: 10 seconds to connect (dial
// and TLS handshake) and responses of up to 16 MiB (a hook's response is small; a server that sends more
// must not make the manager run out of memory). The total time of a call is the handler's timeoutSeconds
// (10 seconds when unset or 0, as upstream's default), DiscoveryTimeout for discovery.
var DefaultLimits = httpclient.Limits{ConnectTimeout: 10 * time.Second, MaxResponseBytes: 16 << 20}

// maxTransports bounds the HTTP clients kept, one per CA bundle: the least recently used goes (its idle
// connections closed) when an Extension server with a new bundle is called.
const maxTransports = 64

// URL returns the URL of a hook's handler (handler "" for Discovery) behind config: the Service's
// https://<name>.<namespace>.svc:<port>/<path>, or the url, followed by the hook's path.
func URL(config runtimev1.ClientConfig, hook runtimehooksv1.Hook, handler string) (*url.URL, error) {
	var u *url.URL
	switch {
	case config.Service != nil:
		svc := config.Service
		port := int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		u = &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Name+"."+svc.Namespace+".svc", strconv.Itoa(int(port)))}
		if svc.Path != nil {
			u.Path = *svc.Path
		}
	case config.URL != nil:
		parsed, err := url.Parse(*config.URL)
		if err != nil {
			return nil, fmt.Errorf("spec.clientConfig.url %q is not a URL: %w", *config.URL, err)
		}
		if parsed.Scheme != "https" {
			return nil, fmt.Errorf("spec.clientConfig.url %q must use https", *config.URL)
		}
		if parsed.User != nil || parsed.RawQuery != "" || parsed.Fragment != "" {
			return nil, fmt.Errorf("spec.clientConfig.url %q must have no user, query or fragment", *config.URL)
		}
		u = parsed
	default:
		return nil, errors.New("spec.clientConfig has neither url nor service: set one of them")
	}
	u.Path = path.Join("/", u.Path, hook.Path(handler))
	return u, nil
}

// post sends req to a hook's handler and decodes the answer into resp.
func (c *Client) post(ctx context.Context, config runtimev1.ClientConfig, hook runtimehooksv1.Hook, handler string, timeout time.Duration, req runtime.Object, resp runtime.Object) error {
	u, err := URL(config, hook, handler)
	if err != nil {
		return err
	}
	req.GetObjectKind().SetGroupVersionKind(hook.RequestKind())
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding the %s: %w", hook.RequestKind().Kind, err)
	}
	httpClient, err := c.transports.get(config.CABundle, c.Dial, c.clientCertificate, c.limits())
	if err != nil {
		return err
	}
	if timeout <= 0 {
		timeout = runtimehooksv1.DefaultHandlersTimeoutSeconds * time.Second
	}
	q := u.Query()
	q.Set("timeout", timeout.String())
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("calling %s: %w", u.Redacted(), err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpResp, err := httpClient.Do(httpReq)
	if err != nil {
		return fmt.Errorf("calling %s: %s", withoutQuery(u), describe(err, config, timeout))
	}
	defer func() { _ = httpResp.Body.Close() }()
	data, err := io.ReadAll(httpResp.Body)
	if err != nil {
		return fmt.Errorf("calling %s: reading the response: %s", withoutQuery(u), describe(err, config, timeout))
	}
	if httpResp.StatusCode != http.StatusOK {
		return fmt.Errorf("calling %s: the server answered HTTP %d: %s", withoutQuery(u), httpResp.StatusCode, excerpt(data))
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("calling %s: the response is not a %s: %w", withoutQuery(u), hook.ResponseKind().Kind, err)
	}
	if gvk := resp.GetObjectKind().GroupVersionKind(); !gvk.Empty() && gvk != hook.ResponseKind() {
		return fmt.Errorf("calling %s: the response is a %s, not a %s", withoutQuery(u), gvk.Kind, hook.ResponseKind().Kind)
	}
	return nil
}

// describe says why a call failed, in words that do not change from one attempt to the next.
func describe(err error, config runtimev1.ClientConfig, timeout time.Duration) string {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var dnsErr *net.DNSError
	var recordHeader tls.RecordHeaderError
	var redirect *httpclient.RedirectError
	var tooLarge *httpclient.ResponseTooLargeError
	var connectTimeout *httpclient.ConnectTimeoutError
	switch {
	case errors.As(err, &redirect):
		return redirect.Error()
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("the response is larger than %d bytes (--runtime-extension-max-response-size)", tooLarge.Limit)
	case errors.As(err, &connectTimeout):
		return fmt.Sprintf("no connection within %s (--runtime-extension-connect-timeout)", connectTimeout.After)
	case errors.As(err, &unknownAuthority):
		if len(config.CABundle) == 0 {
			return "the server's certificate is not signed by a CA the manager trusts: set spec.clientConfig.caBundle " +
				"or the " + runtimev1.InjectCAFromSecretAnnotation + " annotation"
		}
		return "the server's certificate is not signed by the CA of spec.clientConfig.caBundle"
	case errors.As(err, &hostname):
		return fmt.Sprintf("the server's certificate is not valid for %s", hostname.Host)
	case errors.As(err, &invalid):
		return "the server's certificate is not valid: " + invalid.Error()
	case errors.As(err, &verify):
		return "the server's certificate cannot be verified"
	case errors.As(err, &recordHeader) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "the server does not speak TLS: it must serve HTTPS"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: no Extension server listens there"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("host %s cannot be resolved", dnsErr.Name)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("no response within %s", timeout)
	case errors.Is(err, context.Canceled):
		return "the call was canceled"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return "the server closed the connection without an answer"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func withoutQuery(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	return c.String()
}

// excerpt is the start of a response body, for an error message.
func excerpt(data []byte) string {
	const n = 200
	s := string(bytes.TrimSpace(data))
	if len(s) > n {
		s = s[:n] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return strconv.Quote(s)
}

// transports keeps one HTTP client per CA bundle, so that connections are reused from call to call; at
// most maxTransports of them, the least recently used going first.
type transports struct {
	once    sync.Once
	clients *lru.Cache[[sha256.Size]byte, *http.Client]
	// mu serialises the making of clients, so that callers racing for a new bundle share one.
	mu sync.Mutex
}

// clientCertificate returns the client certificate of CertFile and KeyFile, or none.
func (c *Client) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if c.CertFile == "" && c.KeyFile == "" {
		return &tls.Certificate{}, nil
	}
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the Runtime Extension client certificate: %w", err)
	}
	return &pair, nil
}

func (t *transports) get(caBundle []byte, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	clientCert func(*tls.CertificateRequestInfo) (*tls.Certificate, error), limits httpclient.Limits) (*http.Client, error) {
	t.once.Do(func() {
		// An evicted client's idle connections are closed; calls in flight finish.
		t.clients, _ = lru.NewWithEvict(maxTransports, func(_ [sha256.Size]byte, c *http.Client) { c.CloseIdleConnections() })
	})
	key := sha256.Sum256(caBundle)
	if c, ok := t.clients.Get(key); ok {
		return c, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.clients.Get(key); ok {
		return c, nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, GetClientCertificate: clientCert}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("spec.clientConfig.caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	transport := &http.Transport{
		TLSClientConfig:     tlsConfig,
		DialContext:         httpclient.WithDialTimeout(dial, limits.ConnectTimeout),
		TLSHandshakeTimeout: limits.ConnectTimeout,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 10,
		ForceAttemptHTTP2:   true,
	}
	c := &http.Client{
		Transport: httpclient.LimitBody(transport, limits.MaxResponseBytes),
		// A redirect to another host would send the request, and the objects it holds, somewhere the
		// ExtensionConfig does not name.
		CheckRedirect: httpclient.SameHostRedirects,
	}
	t.clients.Add(key, c)
	return c, nil
}

// limits returns c.Limits with DefaultLimits for the zero fields.
func (c *Client) limits() httpclient.Limits {
	l := c.Limits
	if l.ConnectTimeout == 0 {
		l.ConnectTimeout = DefaultLimits.ConnectTimeout
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = DefaultLimits.MaxResponseBytes
	}
	return l
}

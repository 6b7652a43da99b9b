package httpclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
)

// stalledServer answers nothing until the test ends: with headers (the body never comes) or without.
func stalledServer(t *testing.T, sendHeaders bool) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sendHeaders {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestTimeoutBoundsAStalledServer(t *testing.T) {
	for _, headers := range []bool{false, true} {
		name := "no answer"
		if headers {
			name = "body never finishes"
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			srv := stalledServer(t, headers)
			c := New(Limits{ConnectTimeout: time.Second, Timeout: 500 * time.Millisecond})
			start := time.Now()
			err := func() error {
				resp, err := c.Get(srv.URL)
				if err != nil {
					return err
				}
				defer func() { _ = resp.Body.Close() }()
				_, err = io.ReadAll(resp.Body)
				return err
			}()
			g.Expect(err).To(HaveOccurred())
			g.Expect(isTimeout(err)).To(BeTrue(), "a timeout error: %v", err)
			// Generous: the call must end near its timeout, not hang until the server gives up.
			g.Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second))
		})
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func TestWithDialTimeout(t *testing.T) {
	g := NewWithT(t)
	blocking := func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	start := time.Now()
	_, err := WithDialTimeout(blocking, 200*time.Millisecond)(context.Background(), "tcp", "10.0.0.1:443")
	g.Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second))
	var cte *ConnectTimeoutError
	g.Expect(errors.As(err, &cte)).To(BeTrue())
	g.Expect(err.Error()).To(Equal("no connection to 10.0.0.1:443 within 200ms"))
	g.Expect(isTimeout(err)).To(BeTrue())
}

func TestMaxResponseBytes(t *testing.T) {
	body := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", "1000")
			_, _ = io.WriteString(w, body)
			return
		}
		// Flushed in two parts: no Content-Length, the limit is found while reading.
		_, _ = io.WriteString(w, body[:500])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, body[500:])
	}))
	t.Cleanup(srv.Close)

	tests := []struct {
		name    string
		limit   int64
		query   string
		wantErr string
	}{
		{name: "under the limit", limit: 1001},
		{name: "exactly the limit", limit: 1000},
		{name: "exactly the limit, no length", limit: 1000, query: "?chunked=1"},
		{name: "no limit", limit: 0},
		{name: "over the limit by its length", limit: 999, wantErr: "is larger than 999"},
		{name: "over the limit while reading", limit: 999, query: "?chunked=1&secret=x", wantErr: "the response of " + srv.URL + "/ is larger than 999: the server sent more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := New(Limits{MaxResponseBytes: tt.limit})
			var data []byte
			resp, err := c.Get(srv.URL + "/" + tt.query)
			if err == nil {
				defer func() { _ = resp.Body.Close() }()
				data, err = io.ReadAll(resp.Body)
			}
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(data)).To(Equal(body))
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
			var tooLarge *ResponseTooLargeError
			g.Expect(errors.As(err, &tooLarge)).To(BeTrue())
			g.Expect(tooLarge.URL).NotTo(ContainSubstring("secret"))
		})
	}
}

func TestBound(t *testing.T) {
	g := NewWithT(t)
	srv := stalledServer(t, false)
	c := Bound(&http.Client{Timeout: time.Hour}, Limits{Timeout: 300 * time.Millisecond, MaxResponseBytes: 10})
	g.Expect(c.Timeout).To(Equal(300 * time.Millisecond))
	start := time.Now()
	_, err := c.Get(srv.URL) //nolint:bodyclose // it fails
	g.Expect(err).To(HaveOccurred())
	g.Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second))
	g.Expect(Bound(&http.Client{Timeout: time.Second}, Limits{Timeout: time.Minute}).Timeout).To(Equal(time.Second))
}

func TestSameHostRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "other") }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, "/there", http.StatusTemporaryRedirect)
		case "/there":
			_, _ = io.WriteString(w, "same host")
		case "/away":
			http.Redirect(w, r, other.URL+"/x?token=secret", http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{CheckRedirect: SameHostRedirects}

	g := NewWithT(t)
	resp, err := c.Get(srv.URL + "/here")
	g.Expect(err).NotTo(HaveOccurred())
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	g.Expect(string(data)).To(Equal("same host"))

	_, err = c.Get(srv.URL + "/away") //nolint:bodyclose // it fails
	var re *RedirectError
	g.Expect(errors.As(err, &re)).To(BeTrue(), "%v", err)
	g.Expect(re.Error()).To(Equal("the server at " + srv.URL + " redirects to " + other.URL + "/x, another host: redirects to other hosts are not followed"))
}

func TestFlags(t *testing.T) {
	g := NewWithT(t)
	l := Limits{ConnectTimeout: 10 * time.Second, Timeout: time.Minute, MaxResponseBytes: 16 << 20}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l.AddFlags(fs, "http", "the downloads")
	g.Expect(fs.Lookup("http-max-response-size").DefValue).To(Equal("16Mi"))
	g.Expect(fs.Parse([]string{"--http-connect-timeout=2s", "--http-timeout=30s", "--http-max-response-size=64Ki"})).To(Succeed())
	g.Expect(l).To(Equal(Limits{ConnectTimeout: 2 * time.Second, Timeout: 30 * time.Second, MaxResponseBytes: 64 << 10}))
	g.Expect(fs.Parse([]string{"--http-max-response-size=lots"})).To(MatchError(ContainSubstring(`"lots" is not a size`)))
	g.Expect(fs.Parse([]string{"--http-max-response-size=-1"})).To(MatchError(ContainSubstring("non-negative")))
}

package netcount

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCounterCountsBothDirections(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := New()
	client := &http.Client{Transport: &http.Transport{DialContext: c.Dial}}
	before := c.Bytes()
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader(strings.Repeat("y", 50_000)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || len(got) != len(body) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(body))
	}
	b := c.Bytes().Since(before)
	// The bodies, plus the requests' and responses' headers.
	if b.Sent < 50_000 || b.Sent > 51_000 {
		t.Errorf("sent %d bytes, want the 50,000 of the body and its headers", b.Sent)
	}
	if b.Received < 100_000 || b.Received > 101_000 {
		t.Errorf("received %d bytes, want the 100,000 of the body and its headers", b.Received)
	}
}

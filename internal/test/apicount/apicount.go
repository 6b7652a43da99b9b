// Package apicount counts, in tests and benchmarks, the requests a client makes to an API server, by user
// agent, HTTP verb and resource, so that a benchmark can say which writes a controller makes and where they
// go. Install it with rest.Config.Wrap.
package apicount

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Key is what a request is counted by.
type Key struct {
	// Agent is the request's User-Agent up to the first space or slash (the client's program name).
	Agent string
	// Verb is the HTTP method: GET (gets, lists and watches), POST, PUT, PATCH, DELETE.
	Verb string
	// Action is the Kubernetes verb: get, list, watch, create, update, patch, apply (a server-side apply
	// patch), delete; with " (dry run)" after it for a dry run.
	Action string
	// Namespace is the namespace of the request's path ("" for cluster-scoped paths).
	Namespace string
	// Resource is the resource's group and plural name with the subresource, if any: "cluster.x-k8s.io/machines/status",
	// "secrets" for the core group.
	Resource string
}

// Counter counts the requests of the transports it wraps.
type Counter struct {
	mu     sync.Mutex
	counts map[Key]int
	// conflicts counts the requests answered 409 Conflict (a write with a stale resourceVersion), and the
	// JSON patches answered 422 (a failed test).
	conflicts map[Key]int
	// media counts the responses by media type (application/json, application/cbor...).
	media map[string]int
	// Bodies, when set before requests are made, receives the body of every write (for a developer to read).
	Bodies func(Key, string, []byte)
	// OnConflict, when set before requests are made, receives the path and body of every write counted
	// in conflicts (for a developer to find whose write it raced with).
	OnConflict func(Key, string, []byte)
}

// New returns an empty Counter.
func New() *Counter {
	return &Counter{counts: map[Key]int{}, conflicts: map[Key]int{}, media: map[string]int{}}
}

// Wrap is a rest.Config's WrapTransport: it counts every request of rt.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper { return c.wrap("", rt) }

// WrapAs returns a WrapTransport that counts every request as made by agent, whatever its User-Agent: for
// components that share one program name.
func (c *Counter) WrapAs(agent string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return c.wrap(agent, rt) }
}

func (c *Counter) wrap(as string, rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		k := Key{Agent: as, Verb: req.Method, Action: action(req), Namespace: namespace(req.URL.Path), Resource: resource(req.URL.Path)}
		if k.Agent == "" {
			k.Agent = agent(req.UserAgent())
		}
		var data []byte
		if (c.Bodies != nil || c.OnConflict != nil) && req.Method != http.MethodGet && req.Body != nil && req.GetBody != nil {
			if body, err := req.GetBody(); err == nil {
				data, _ = io.ReadAll(body)
				data = bytes.TrimSpace(data)
			}
		}
		if c.Bodies != nil && data != nil {
			c.Bodies(k, req.URL.Path, data)
		}
		c.mu.Lock()
		c.counts[k]++
		c.mu.Unlock()
		resp, err := rt.RoundTrip(req)
		if err == nil {
			if mt, _, perr := mime.ParseMediaType(resp.Header.Get("Content-Type")); perr == nil {
				c.mu.Lock()
				c.media[mt]++
				c.mu.Unlock()
			}
		}
		// A JSON patch whose test fails is answered 422: it lost a race as a write with a stale
		// resourceVersion does.
		if err == nil && (resp.StatusCode == http.StatusConflict ||
			resp.StatusCode == http.StatusUnprocessableEntity && req.Header.Get("Content-Type") == "application/json-patch+json") {
			c.mu.Lock()
			c.conflicts[k]++
			c.mu.Unlock()
			if c.OnConflict != nil {
				c.OnConflict(k, req.URL.Path, data)
			}
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// MediaTypes returns the responses so far by media type (the encoding the API server answered in).
func (c *Counter) MediaTypes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.media)
}

// Snapshot returns the counts so far.
func (c *Counter) Snapshot() Counts { return c.copyOf(c.counts) }

// Conflicts returns the requests so far that the API server answered 409 Conflict (each is also in
// Snapshot).
func (c *Counter) Conflicts() Counts { return c.copyOf(c.conflicts) }

func (c *Counter) copyOf(counts map[Key]int) Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(Counts(counts))
}

// Counts are requests by Key.
type Counts map[Key]int

// Since returns the requests counted in c and not in before.
func (c Counts) Since(before Counts) Counts {
	out := Counts{}
	for k, n := range c {
		if d := n - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Sum returns the number of requests whose key match says yes to.
func (c Counts) Sum(match func(Key) bool) int {
	n := 0
	for k, v := range c {
		if match(k) {
			n += v
		}
	}
	return n
}

// IsWrite says whether a verb changes objects: POST, PUT or PATCH (as the writes; DELETE apart).
func IsWrite(verb string) bool {
	return verb == http.MethodPost || verb == http.MethodPut || verb == http.MethodPatch
}

// String lists the counts, most first, one per line: "  12 PATCH cluster.x-k8s.io/machines/status (core)".
func (c Counts) String() string {
	keys := make([]Key, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j])
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%6d %-6s %s (%s)\n", c[k], k.Verb, k.Resource, k.Agent)
	}
	return b.String()
}

// InNamespace returns the counts of the requests in namespace ns.
func (c Counts) InNamespace(ns string) Counts {
	out := Counts{}
	for k, n := range c {
		if k.Namespace == ns {
			out[k] = n
		}
	}
	return out
}

// action names a request by its Kubernetes verb, and says when it is a dry run.
func action(req *http.Request) string {
	a := verb(req)
	if req.URL.Query().Get("dryRun") != "" {
		a += " (dry run)"
	}
	return a
}

func verb(req *http.Request) string {
	switch req.Method {
	case http.MethodGet:
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			return "watch"
		}
		// A named object: /api/v1/namespaces/ns/secrets/name, /apis/g/v/resource/name and their subresources.
		parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
		if len(parts) > 0 && parts[0] == "apis" {
			parts = parts[1:]
		}
		if len(parts) >= 2 {
			parts = parts[2:]
		}
		switch {
		case len(parts) == 2 && parts[0] == "namespaces":
			return "get"
		case len(parts) >= 3 && parts[0] == "namespaces":
			parts = parts[2:]
		}
		if len(parts) >= 2 {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			return "apply"
		}
		return "patch"
	default:
		return strings.ToLower(req.Method)
	}
}

func namespace(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			return parts[i+1]
		}
	}
	return ""
}

func agent(ua string) string {
	if i := strings.IndexAny(ua, " /"); i >= 0 {
		return ua[:i]
	}
	return ua
}

// resource reads the group, resource and subresource of an API path: /api/v1/namespaces/ns/secrets/name,
// /apis/group/version/namespaces/ns/resource/name/status, /apis/group/version/resource.
func resource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			parts = []string{"namespaces", parts[1]}
		} else {
			parts = parts[2:]
		}
	}
	if len(parts) == 0 {
		return path
	}
	r := parts[0]
	if len(parts) >= 3 {
		r += "/" + parts[2]
	}
	if group != "" {
		r = group + "/" + r
	}
	return r
}

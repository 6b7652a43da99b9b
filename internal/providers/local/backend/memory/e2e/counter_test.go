package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// components are the parts of the stack whose requests the benchmark counts apart: each component's
// own client, and what they share (the informers and the event recorder).
var components = []string{"core", "bootstrap", "controlplane", "local", "manager"}

// requestKey is one kind of request to the management API server: who made it, its verb (get, list,
// watch, create, update, patch, delete) and its resource (with the subresource, e.g.
// machines.cluster.x-k8s.io/status).
type requestKey struct {
	component, verb, resource string
}

// requestCounter counts the requests that go through the transports it wraps (stack.Options.Transport).
type requestCounter struct {
	mu     sync.Mutex
	counts map[requestKey]int
}

func newRequestCounter() *requestCounter { return &requestCounter{counts: map[requestKey]int{}} }

func (c *requestCounter) wrap(component string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			verb, resource := classify(req)
			c.mu.Lock()
			c.counts[requestKey{component, verb, resource}]++
			c.mu.Unlock()
			return rt.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// snapshot copies the counts so far.
func (c *requestCounter) snapshot() requestCountsByKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := requestCountsByKey{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

type requestCountsByKey map[requestKey]int

func (r requestCountsByKey) minus(o requestCountsByKey) requestCountsByKey {
	out := requestCountsByKey{}
	for k, v := range r {
		if d := v - o[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func isWrite(verb string) bool { return verb == "create" || verb == "update" || verb == "patch" }

// writes are a component's create, update and patch requests.
func (r requestCountsByKey) writes(component string) int {
	n := 0
	for k, v := range r {
		if k.component == component && isWrite(k.verb) {
			n += v
		}
	}
	return n
}

// table lists the writes (and, with all, every request) by component, verb and resource, most first,
// with each count divided by per (the Machines, or the seconds idle).
func (r requestCountsByKey) table(per float64, unit string, all bool) string {
	keys := make([]requestKey, 0, len(r))
	for k := range r {
		if all || isWrite(k.verb) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].component != keys[j].component {
			return keys[i].component < keys[j].component
		}
		if r[keys[i]] != r[keys[j]] {
			return r[keys[i]] > r[keys[j]]
		}
		return keys[i].verb+keys[i].resource < keys[j].verb+keys[j].resource
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-7s %-55s %8s %10s\n", "component", "verb", "resource", "count", unit)
	for _, k := range keys {
		fmt.Fprintf(&b, "%-13s %-7s %-55s %8d %10.2f\n", k.component, k.verb, k.resource, r[k], float64(r[k])/per)
	}
	return b.String()
}

// classify names a request to the API server by its Kubernetes verb and resource.
func classify(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return strings.ToLower(req.Method), req.URL.Path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	named := len(parts) >= 2
	if len(parts) == 0 {
		resource = "discovery"
	} else {
		resource = parts[0]
		if group != "" {
			resource += "." + group
		}
		if len(parts) >= 3 {
			resource += "/" + strings.Join(parts[2:], "/")
		}
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}

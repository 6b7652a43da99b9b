package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ownedByTheAPIServer says whether a change is the management API server's own bookkeeping, which no
// capstan manager causes: its identity Lease, renewed every 10 seconds. The workload clusters' Nodes and
// Leases are served by the memory backend, not by the management API server, so none of them is here.
func ownedByTheAPIServer(kind string, o *unstructured.Unstructured) bool {
	return kind == "leases.coordination.k8s.io" && o.GetNamespace() == metav1.NamespaceSystem &&
		strings.HasPrefix(o.GetName(), "apiserver-")
}

// changeRecorder records, while it runs, every object of the management cluster that is created,
// modified or deleted — every kind the API server lists and watches, in every namespace — with the first
// few diffs of each kind, to find what keeps idle clusters from being quiet.
type changeRecorder struct {
	mu      sync.Mutex
	changes map[string]map[watch.EventType]int // kind → event type → count
	objects map[string]map[string]int          // kind → namespace/name → changes
	ignored map[string]int                     // kind → the API server's own changes
	diffs   map[string][]string                // kind → the first diffs
	keep    int                                // how many diffs of each kind to keep
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// watchedResources are the resources the management API server lists and watches (preferred versions,
// no subresources).
func watchedResources(cfg *rest.Config) ([]schema.GroupVersionResource, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue
			}
			if gv.Group == "events.k8s.io" && r.Name == "events" {
				continue // the core API's Events again, in another shape
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}

// recordChanges starts recording the changes of every object the API server of cfg serves, keeping
// the first keep diffs of each kind; logf reports what cannot be watched. The recorder keeps the last
// version of every object (to show diffs): the benchmark runs it in a process of its own (see
// observeChanges), not with the managers it measures.
func recordChanges(cfg *rest.Config, keep int, logf func(string, ...any)) (*changeRecorder, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gvrs, err := watchedResources(cfg)
	if err != nil {
		return nil, err
	}
	// CAPSTAN_BENCH_DIFFS_KINDS (resources as "clusters.cluster.x-k8s.io", comma-separated) keeps the diffs
	// of these kinds only.
	var diffKinds []string
	if v := os.Getenv("CAPSTAN_BENCH_DIFFS_KINDS"); v != "" {
		diffKinds = strings.Split(v, ",")
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &changeRecorder{changes: map[string]map[watch.EventType]int{}, objects: map[string]map[string]int{}, ignored: map[string]int{}, diffs: map[string][]string{}, cancel: cancel, keep: keep}
	for _, gvr := range gvrs {
		list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			logf("listing %s: %v", gvr, err)
			continue
		}
		last := map[string]map[string]any{}
		for _, o := range list.Items {
			last[o.GetNamespace()+"/"+o.GetName()] = o.Object
		}
		w, err := dc.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			logf("watching %s: %v", gvr, err)
			continue
		}
		kind := gvr.GroupResource().String()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				o, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted) {
					continue
				}
				key := o.GetNamespace() + "/" + o.GetName()
				prev := last[key]
				last[key] = o.Object
				r.mu.Lock()
				if ownedByTheAPIServer(kind, o) {
					r.ignored[kind]++
					r.mu.Unlock()
					continue
				}
				if r.changes[kind] == nil {
					r.changes[kind] = map[watch.EventType]int{}
				}
				r.changes[kind][ev.Type]++
				if r.objects[kind] == nil {
					r.objects[kind] = map[string]int{}
				}
				r.objects[kind][key]++
				if len(r.diffs[kind]) < r.keep && (len(diffKinds) == 0 || slices.Contains(diffKinds, kind)) {
					d := "(new)"
					if prev != nil {
						d = cmp.Diff(strip(prev), strip(o.Object))
					}
					r.diffs[kind] = append(r.diffs[kind], fmt.Sprintf("%s %s %s %s (resourceVersion %s%s):\n%s", time.Now().Format("15:04:05.000"), ev.Type, kind, key, o.GetResourceVersion(), writers(prev, o), d))
				}
				r.mu.Unlock()
			}
		}()
	}
	return r, nil
}

// writers names the managers whose entries of managedFields are new or changed from prev to o: who
// wrote this version (with a merge patch or an update, a manager's entry changes when it writes a field).
func writers(prev map[string]any, o *unstructured.Unstructured) string {
	old := map[string]string{}
	if prev != nil {
		for _, f := range (&unstructured.Unstructured{Object: prev}).GetManagedFields() {
			old[f.Manager+"/"+f.Subresource] = fmt.Sprint(f.Time, f.FieldsV1)
		}
	}
	var by []string
	for _, f := range o.GetManagedFields() {
		if old[f.Manager+"/"+f.Subresource] != fmt.Sprint(f.Time, f.FieldsV1) {
			name := f.Manager
			if f.Subresource != "" {
				name += " (" + f.Subresource + ")"
			}
			by = append(by, name)
		}
	}
	if len(by) == 0 {
		return ""
	}
	return ", by " + strings.Join(by, ", ")
}

// strip drops what changes with every write.
func strip(o map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range o {
		out[k] = v
	}
	if md, ok := o["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for k, v := range md {
			if k != "resourceVersion" && k != "managedFields" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// reset forgets what was recorded so far (the recorder keeps the objects' last versions, for diffs).
func (r *changeRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.changes)
	clear(r.objects)
	clear(r.ignored)
	clear(r.diffs)
}

// stop ends the recording and returns how many objects were created, modified or deleted (the API
// server's own Lease aside), and a report of them by kind: counts, every object that changed, and a few
// diffs.
func (r *changeRecorder) stop() (total int, report string) {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make([]string, 0, len(r.changes))
	for k, byType := range r.changes {
		kinds = append(kinds, k)
		for _, n := range byType {
			total += n
		}
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		c := r.changes[k]
		fmt.Fprintf(&b, "%s: %d modified, %d created, %d deleted\n", k, c[watch.Modified], c[watch.Added], c[watch.Deleted])
	}
	// Every object that changed, with how many times.
	for _, k := range kinds {
		keys := make([]string, 0, len(r.objects[k]))
		for key, n := range r.objects[k] {
			keys = append(keys, fmt.Sprintf("%s×%d", key, n))
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "%s changed: %s\n", k, strings.Join(keys, " "))
	}
	for k, n := range r.ignored {
		fmt.Fprintf(&b, "(not counted: %s, %d changes of the management API server's own Lease)\n", k, n)
	}
	for _, k := range kinds {
		for _, d := range r.diffs[k] {
			b.WriteString(d)
			b.WriteString("\n")
		}
	}
	return total, b.String()
}

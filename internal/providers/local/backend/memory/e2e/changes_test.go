package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watchedKinds are the management objects of a cluster whose changes the benchmark records while idle.
var watchedKinds = []schema.GroupVersionKind{
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "ClusterList"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineList"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineSetList"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineDeploymentList"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlaneList"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigList"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalClusterList"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachineList"},
	{Group: "", Version: "v1", Kind: "SecretList"},
}

// changeRecorder records, while it runs, which objects of a namespace changed and how (the first few
// diffs of each kind), to find what keeps idle clusters from being quiet.
type changeRecorder struct {
	mu      sync.Mutex
	changes map[string]int      // kind → modifications
	diffs   map[string][]string // kind → the first diffs
	keep    int                 // how many diffs of each kind to keep
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func recordChanges(t testing.TB, cfg *rest.Config, ns string, keep int) *changeRecorder {
	c, err := client.NewWithWatch(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &changeRecorder{changes: map[string]int{}, diffs: map[string][]string{}, cancel: cancel, keep: keep}
	for _, gvk := range watchedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Logf("listing %s: %v", gvk.Kind, err)
			continue
		}
		last := map[string]map[string]any{}
		for _, o := range list.Items {
			last[o.GetName()] = o.Object
		}
		wl := &unstructured.UnstructuredList{}
		wl.SetGroupVersionKind(gvk)
		w, err := c.Watch(ctx, wl, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})
		if err != nil {
			t.Logf("watching %s: %v", gvk.Kind, err)
			continue
		}
		kind := strings.TrimSuffix(gvk.Kind, "List")
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				o, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type != watch.Modified {
					continue
				}
				prev := last[o.GetName()]
				last[o.GetName()] = o.Object
				r.mu.Lock()
				r.changes[kind]++
				if len(r.diffs[kind]) < r.keep && prev != nil {
					r.diffs[kind] = append(r.diffs[kind], fmt.Sprintf("%s %s:\n%s", kind, o.GetName(), cmp.Diff(strip(prev), strip(o.Object))))
				}
				r.mu.Unlock()
			}
		}()
	}
	return r
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

// stop ends the recording and returns a report of the modifications by kind with a few diffs.
func (r *changeRecorder) stop() (total int, report string) {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make([]string, 0, len(r.changes))
	for k, n := range r.changes {
		kinds = append(kinds, k)
		total += n
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "%s: %d modifications\n", k, r.changes[k])
	}
	for _, k := range kinds {
		for _, d := range r.diffs[k] {
			b.WriteString(d)
			b.WriteString("\n")
		}
	}
	return total, b.String()
}

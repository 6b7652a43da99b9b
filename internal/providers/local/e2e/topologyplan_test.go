package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/root"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/topologyplan"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/topology"
)

// topologyWrittenKinds are the kinds the topology controller writes for a Cluster of the local class: the
// Cluster, its InfraCluster, control plane and their templates, the MachineDeployments and MachinePools with
// their templates, bootstrap configs and InfraMachinePools, and the MachineHealthChecks.
var topologyWrittenKinds = []schema.GroupVersionKind{
	clusterv1.GroupVersion.WithKind("Cluster"),
	clusterv1.GroupVersion.WithKind("MachineDeployment"),
	clusterv1.GroupVersion.WithKind("MachineHealthCheck"),
	clusterv1.GroupVersion.WithKind("MachinePool"),
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalCluster"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachinePool"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfig"},
}

// topologyWatch watches every object of topologyWrittenKinds in a namespace and keeps what the topology
// controller wrote: the objects it created, modified and deleted, and the fields its writes changed.
//
// Which writes are the topology controller's: it writes the objects of a topology with server-side apply
// as field manager capi-topology (topology.FieldManager), and no other writer uses that manager. The API
// server sets the time of a manager's managedFields entry to now on each apply of that manager that
// changes the object, and on no other write (another writer taking a field away shrinks the entry's
// fields but keeps its time). So a version of an object is written by the topology controller when its
// capi-topology entry is new or has another time than in the previous version; every other write (a
// controller's status, the MachineDeployment controller's annotations, the InfraCluster's
// controlPlaneEndpoint, an owner reference another controller adds) is someone else's, and what it changed
// is not counted. (Two applies of one object within one second would keep the time: the second would
// go unseen. The controller applies an object once per change, after a dry-run, so it does not happen
// here.) An object created with a capi-topology entry is created by the topology controller. An object
// deleted is counted when it carried a capi-topology entry: the topology controller deletes objects it
// applied; the only other deleter of such objects is the MachineSet controller, which deletes a replaced
// MachineDeployment template with the last MachineSet that uses it — which the checked changes do not
// cause (the MachineDeployment keeps its previous MachineSet).
//
// The Cluster is the exception: the topology controller sets its references and labels with a plain
// patch, not an apply, with the same client (same field manager) as the test and the other controllers
// that run in this process. Its changes of the Cluster are those of spec.infrastructureRef,
// spec.controlPlaneRef and metadata.labels (what the plan lists for a Cluster); the rest of the Cluster is
// the test's change and the controllers' status.
type topologyWatch struct {
	mu   sync.Mutex
	last map[string]*unstructured.Unstructured // "Kind/name" → the latest version seen
	// firstCluster is the Cluster as the watch started.
	firstCluster *unstructured.Unstructured
	created      map[string]bool
	deleted      map[string]bool
	// changed: "Kind/name" → the paths (as in changePaths) that the topology controller's writes changed.
	changed map[string]map[string]bool
	// written: "Kind/name" → the object after the topology controller's last write.
	written map[string]*unstructured.Unstructured
	errs    []string
	stop    context.CancelFunc
	done    sync.WaitGroup
}

func objectKey(u *unstructured.Unstructured) string { return u.GetKind() + "/" + u.GetName() }

// capiTopologyTime is the time of the capi-topology apply entry of u's managedFields, and whether it has one.
func capiTopologyTime(u *unstructured.Unstructured) (string, bool) {
	for _, e := range u.GetManagedFields() {
		if e.Manager == topology.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			if e.Time == nil {
				return "", true
			}
			return e.Time.UTC().Format(time.RFC3339), true
		}
	}
	return "", false
}

// watchTopologyObjects lists the objects of topologyWrittenKinds in ns and watches them from the list's
// resourceVersion until the test ends or stop is called.
func watchTopologyObjects(ctx context.Context, t *testing.T, g Gomega, ns string) *topologyWatch {
	w := &topologyWatch{last: map[string]*unstructured.Unstructured{}, created: map[string]bool{}, deleted: map[string]bool{},
		changed: map[string]map[string]bool{}, written: map[string]*unstructured.Unstructured{}}
	dc, err := dynamic.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, w.stop = context.WithCancel(ctx)
	t.Cleanup(w.close)
	for _, gvk := range topologyWrittenKinds {
		mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		g.Expect(err).NotTo(HaveOccurred(), "%s", gvk)
		ri := dc.Resource(mapping.Resource).Namespace(ns)
		list, err := ri.List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred(), "%s", gvk)
		for i := range list.Items {
			u := &list.Items[i]
			u.SetGroupVersionKind(gvk)
			w.last[objectKey(u)] = u
			if gvk.Kind == "Cluster" {
				w.firstCluster = u
			}
		}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), watcherFunc(func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		}))
		g.Expect(err).NotTo(HaveOccurred(), "%s", gvk)
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			defer rw.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-rw.ResultChan():
					if !ok {
						return
					}
					w.event(gvk, ev)
				}
			}
		}()
	}
	return w
}

type watcherFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)

func (f watcherFunc) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return f(ctx, o)
}

func (w *topologyWatch) close() {
	w.stop()
	w.done.Wait()
}

func (w *topologyWatch) event(gvk schema.GroupVersionKind, ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		if ev.Type == watch.Error {
			w.errs = append(w.errs, fmt.Sprintf("watching %s: %v", gvk.Kind, ev.Object))
		}
		return
	}
	u.SetGroupVersionKind(gvk)
	k := objectKey(u)
	prev := w.last[k]
	switch ev.Type {
	case watch.Added, watch.Modified:
		w.last[k] = u
		if gvk.Kind == "Cluster" {
			return
		}
		now, isTopology := capiTopologyTime(u)
		if prev == nil {
			if isTopology {
				w.created[k] = true
				w.written[k] = u
			}
			return
		}
		if before, had := capiTopologyTime(prev); !isTopology || (had && before == now) {
			return
		}
		paths, err := changePaths(prev.Object, u.Object)
		if err != nil {
			w.errs = append(w.errs, fmt.Sprintf("comparing two versions of %s: %v", k, err))
			return
		}
		if w.changed[k] == nil {
			w.changed[k] = map[string]bool{}
		}
		for _, p := range paths {
			w.changed[k][p] = true
		}
		w.written[k] = u
	case watch.Deleted:
		delete(w.last, k)
		if _, isTopology := capiTopologyTime(u); isTopology {
			w.deleted[k] = true
		}
	}
}

// ignoredPath: what the API server maintains (resourceVersion, generation, managedFields) and status, which
// controllers write, are no change of the plan's.
func ignoredPath(p string) bool {
	return p == "status" || strings.HasPrefix(p, "status/") ||
		slices.Contains([]string{"metadata/resourceVersion", "metadata/generation", "metadata/managedFields"}, p)
}

// changePaths returns the paths of the JSON merge patch from a to b, as a plan's .jsonpatch holds it:
// "/"-separated field names down to a value that is not an object (a list is replaced whole), "/" and "~"
// in a name escaped as in a JSON pointer; ignoredPath's paths are left out.
func changePaths(a, b map[string]any) ([]string, error) {
	patch, err := mergePatch(a, b)
	if err != nil {
		return nil, err
	}
	return patchPaths(patch), nil
}

// mergePatch is the JSON merge patch from a to b, computed as the plan computes its .jsonpatch.
func mergePatch(a, b map[string]any) (map[string]any, error) {
	data, err := topologyplan.Change{Action: topologyplan.Modified, Original: &unstructured.Unstructured{Object: a}, Object: &unstructured.Unstructured{Object: b}}.MergePatch()
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(data, &out)
}

func patchPaths(patch map[string]any) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			if prefix != "" {
				p = prefix + "/" + p
			}
			if ignoredPath(p) {
				continue
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, p)
		}
	}
	walk("", patch)
	slices.Sort(out)
	return out
}

// valueAt returns the value at path (as patchPaths gives it) in obj, and whether there is one.
func valueAt(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, part := range strings.Split(path, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(part)]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// jsonValues is obj as JSON decodes it (numbers as float64), to compare with a decoded .jsonpatch.
func jsonValues(g Gomega, obj map[string]any) map[string]any {
	data, err := json.Marshal(obj)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]any{}
	g.Expect(json.Unmarshal(data, &out)).To(Succeed())
	return out
}

// result is what the topology controller did since the watch started: the "Kind/name action" rows, sorted
// as planRows, and the changed paths of each modified object.
func (w *topologyWatch) result(g Gomega) ([]string, map[string][]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	g.Expect(w.errs).To(BeEmpty())
	rows := []string{}
	paths := map[string][]string{}
	for k := range w.created {
		rows = append(rows, k+" created")
	}
	for k := range w.deleted {
		if !w.created[k] {
			rows = append(rows, k+" deleted")
		}
	}
	for k, changed := range w.changed {
		if w.created[k] || w.deleted[k] || len(changed) == 0 {
			continue
		}
		rows = append(rows, k+" modified")
		for p := range changed {
			paths[k] = append(paths[k], p)
		}
		slices.Sort(paths[k])
	}
	if w.firstCluster != nil {
		now := w.last[objectKey(w.firstCluster)]
		g.Expect(now).NotTo(BeNil(), "the Cluster")
		cp, err := mergePatch(topologyClusterFields(w.firstCluster), topologyClusterFields(now))
		g.Expect(err).NotTo(HaveOccurred())
		if p := patchPaths(cp); len(p) > 0 {
			k := objectKey(now)
			rows = append(rows, k+" modified")
			paths[k] = p
			w.written[k] = now
		}
	}
	slices.Sort(rows)
	return rows, paths
}

// topologyClusterFields is the part of a Cluster the topology controller writes (see patchCluster).
func topologyClusterFields(c *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, f := range [][]string{{"spec", "infrastructureRef"}, {"spec", "controlPlaneRef"}, {"metadata", "labels"}} {
		if v, ok, _ := unstructured.NestedFieldCopy(c.Object, f...); ok {
			_ = unstructured.SetNestedField(out, v, f...)
		}
	}
	return out
}

var planRow = regexp.MustCompile(`(?m)^\s+(\S+)\s+(\S+)\s+(\S+)\s+(created|modified|deleted)$`)

// planRows returns the "Kind/name action" rows of a plan's table, sorted.
func planRows(out string) []string {
	rows := []string{}
	for _, m := range planRow.FindAllStringSubmatch(out, -1) {
		rows = append(rows, m[2]+"/"+m[3]+" "+m[4])
	}
	slices.Sort(rows)
	return rows
}

// plannedChange is a change of a running Cluster planned with `clusterctl alpha topology plan -c` against
// the management cluster, then applied, with the watch of what the topology controller does.
type plannedChange struct {
	cluster client.ObjectKey
	out     string // the plan's output
	dir     string // its -o directory
	watch   *topologyWatch
	took    time.Duration // the plan and the watch, so far
}

// planThenChange waits until the topology controller has reconciled the Cluster's latest generation, starts
// watching the Cluster's objects, runs `clusterctl alpha topology plan -f <the Cluster with change> -c
// <cluster> -o DIR` against the management cluster, then makes the change. The caller waits for the change
// to take effect, then calls check.
func planThenChange(ctx context.Context, t *testing.T, g Gomega, clusterKey client.ObjectKey, change func(*clusterv1.Cluster)) *plannedChange {
	start := time.Now()
	c := &clusterv1.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, clusterKey, c)).To(Succeed())
		cond := conditions.GetV1Beta2(c, clusterv1.ClusterTopologyReconciledV1Beta2Condition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%+v", cond)
		g.Expect(cond.ObservedGeneration).To(Equal(c.Generation), "the topology controller has seen the Cluster's latest change")
	}, topologyWait, topologyInterval).Should(Succeed())
	p := &plannedChange{cluster: clusterKey, dir: t.TempDir(), watch: watchTopologyObjects(ctx, t, g, clusterKey.Namespace)}

	// The input: the Cluster as `kubectl get cluster -o yaml` prints it, with the change.
	changed := c.DeepCopy()
	change(changed)
	changed.SetManagedFields(nil)
	changed.Status = clusterv1.ClusterStatus{}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(changed)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
	data, err := yaml.Marshal(u.Object)
	g.Expect(err).NotTo(HaveOccurred())
	input := filepath.Join(p.dir, "cluster.yaml")
	g.Expect(os.WriteFile(input, data, 0o600)).To(Succeed())

	deps := &clusterctlcli.Deps{
		LookupEnv:         func(k string) (string, bool) { return map[string]string{"HOME": p.dir}[k], k == "HOME" },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster { return cluster.New(k) },
		Options:           clusterctlcli.GlobalOptions{Verbosity: -1},
	}
	var stdout, stderr bytes.Buffer
	code := root.Main(ctx, []string{"alpha", "topology", "plan", "-f", input, "-c", clusterKey.Name, "-o", filepath.Join(p.dir, "out"),
		"--kubeconfig", env.KubeconfigFile(t, clusterKey.Namespace)}, iostreams.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, deps)
	p.out = stdout.String()
	g.Expect(code).To(Equal(0), "clusterctl alpha topology plan\n%s%s", p.out, stderr.String())
	g.Expect(stderr.String()).To(ContainSubstring("Detected a cluster with Cluster API installed"), "the plan ran online")
	t.Logf("clusterctl alpha topology plan -c %s:\n%s", clusterKey.Name, p.out)
	p.took = time.Since(start)

	patchCluster(ctx, g, clusterKey, change)
	return p
}

// check asserts that what the topology controller did since the watch started is what the plan listed:
// the same objects created, modified and deleted; for each modified object the fields its writes changed
// are those of the plan's .jsonpatch, with the plan's values; each created object holds its file. The
// caller has waited for the change to take effect; the controller's writes are waited for a minute more.
func (p *plannedChange) check(ctx context.Context, t *testing.T, g Gomega) {
	start := time.Now()
	defer func() {
		p.watch.close()
		p.took += time.Since(start)
		t.Logf("planning the change and checking the controller's writes against the plan took %s", p.took.Round(100*time.Millisecond))
	}()
	plan := planRows(p.out)
	g.Expect(plan).NotTo(BeEmpty(), p.out)
	var got []string
	var paths map[string][]string
	g.Eventually(func(g Gomega) {
		got, paths = p.watch.result(g)
		g.Expect(got).To(Equal(plan), "what the topology controller did (seen by a watch) is what the plan listed")
	}, time.Minute, topologyInterval).Should(Succeed())
	t.Logf("the topology controller created, modified and deleted what the plan listed: %v", got)

	p.watch.mu.Lock()
	defer p.watch.mu.Unlock()
	for _, row := range plan {
		k, action, _ := strings.Cut(row, " ")
		kind, name, _ := strings.Cut(k, "/")
		base := filepath.Join(p.dir, "out", action, kind+"_"+p.cluster.Namespace+"_"+name)
		written := p.watch.written[k]
		switch action {
		case "modified":
			data, err := os.ReadFile(base + ".jsonpatch")
			g.Expect(err).NotTo(HaveOccurred())
			patch := map[string]any{}
			g.Expect(json.Unmarshal(data, &patch)).To(Succeed())
			g.Expect(paths[k]).To(Equal(patchPaths(patch)), "%s: the fields the topology controller changed are those of the plan's .jsonpatch:\n%s", k, data)
			obj := jsonValues(g, written.Object)
			for _, path := range paths[k] {
				want, _ := valueAt(patch, path)
				value, ok := valueAt(obj, path)
				if want == nil {
					g.Expect(ok).To(BeFalse(), "%s: %s is removed, as the plan's .jsonpatch says", k, path)
					continue
				}
				g.Expect(value).To(Equal(want), "%s: %s as the plan's .jsonpatch says", k, path)
			}
			t.Logf("%s: the topology controller changed %v, as the plan's .jsonpatch", k, paths[k])
		case "created":
			data, err := os.ReadFile(base + ".yaml")
			g.Expect(err).NotTo(HaveOccurred())
			objs, err := manifest.Parse(data)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objs).To(HaveLen(1))
			g.Expect(topology.Holds(written.Object["spec"], objs[0].Object["spec"], false)).To(BeTrue(),
				"%s as created holds the plan's file: %v\n%s", k, written.Object["spec"], data)
			g.Expect(topology.Holds(written.Object["metadata"], objs[0].Object["metadata"], true)).To(BeTrue(),
				"%s as created holds the plan's file: %v\n%s", k, written.Object["metadata"], data)
		}
	}
}

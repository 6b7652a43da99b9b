package envtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// recentLogs keeps the controllers' last log lines of a test binary whose logs are not shown (see
// SetupLogging), for DumpOnFailure.
var recentLogs = &logRing{size: 20000}

// logRing is an io.Writer that keeps the last size lines written to it.
type logRing struct {
	mu    sync.Mutex
	size  int
	lines []string
	next  int
}

func (r *logRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if len(r.lines) < r.size {
			r.lines = append(r.lines, line)
			continue
		}
		r.lines[r.next] = line
		r.next = (r.next + 1) % r.size
	}
	return len(p), nil
}

// matching returns the last n lines kept that contain s, oldest first.
func (r *logRing) matching(s string, n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i := range r.lines {
		if line := r.lines[(r.next+i)%len(r.lines)]; strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// DumpKinds are the kinds DumpOnFailure lists: the Cluster API objects a cluster's lifecycle goes through.
var DumpKinds = []schema.GroupVersionKind{
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "Cluster"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineDeployment"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineSet"},
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "Machine"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfig"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalCluster"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "LocalMachine"},
}

// DumpOnFailure logs, when t has failed by the time its cleanups run, the objects of DumpKinds in
// namespace ns (their metadata's deletion and finalizers, spec.version, spec.replicas and status) and the
// controllers' last log lines that name ns, so that a failure in CI says where the cluster stood. Call it
// after the cleanups that delete the test's objects are registered: cleanups run last in, first out.
func DumpOnFailure(t testing.TB, c client.Reader, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var b strings.Builder
		fmt.Fprintf(&b, "the objects of namespace %s when the test failed:\n", ns)
		for _, gvk := range DumpKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				continue // not served in this test
			}
			for _, o := range list.Items {
				b.WriteString(dumpObject(&o))
			}
		}
		if os.Getenv("CAPSTAN_TEST_LOGS") == "" {
			lines := recentLogs.matching(ns, 300)
			fmt.Fprintf(&b, "the controllers' last %d log lines that name %s:\n%s\n", len(lines), ns, strings.Join(lines, "\n"))
		}
		t.Log(b.String())
	})
}

func dumpObject(o *unstructured.Unstructured) string {
	summary := map[string]any{}
	if ts := o.GetDeletionTimestamp(); ts != nil {
		summary["deletionTimestamp"] = ts.UTC().Format(time.RFC3339)
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		summary["finalizers"] = f
	}
	for _, field := range []string{"version", "replicas"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", field); ok {
			summary["spec."+field] = v
		}
	}
	if st, ok := o.Object["status"]; ok {
		summary["status"] = st
	}
	out, err := yaml.Marshal(summary)
	if err != nil {
		out = []byte(err.Error())
	}
	return fmt.Sprintf("--- %s %s\n%s", o.GetKind(), o.GetName(), out)
}

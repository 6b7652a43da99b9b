package controllermanager_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/controllermanager"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

// TestManagerInformersStreamTheirInitialList: a manager's informers (typed and unstructured) start with a
// streaming list (a watch with sendInitialEvents=true, KEP-3157) on an API server that supports it, so the
// API server sends the objects from its watch cache one by one instead of building one list response, and
// they fall back to a list and a watch on an API server without the WatchList feature; the cache holds the
// objects either way.
func TestManagerInformersStreamTheirInitialList(t *testing.T) {
	t.Run("server with WatchList", func(t *testing.T) {
		assertInformersStart(t, env, true)
	})
	t.Run("server without WatchList", func(t *testing.T) {
		old, err := envtest.Start(envtest.Options{APIServerFlags: map[string]string{"feature-gates": "WatchList=false"}})
		if err != nil {
			t.Fatalf("starting an API server without WatchList: %v", err)
		}
		t.Cleanup(func() {
			if err := old.Stop(); err != nil {
				t.Errorf("stopping the API server: %v", err)
			}
		})
		assertInformersStart(t, old, false)
	})
}

func assertInformersStart(t *testing.T, e *envtest.Environment, streaming bool) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := e.NewNamespace(t)
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md"},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c1", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: "c1", InfrastructureRef: corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachineTemplate", Name: "t"},
		}}}}
	g.Expect(e.Client.Create(ctx, md)).To(Succeed())

	rec := &queryRecorder{}
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(rec.wrap)
	o := controllermanager.DefaultOptions("test-watchlist")
	o.HealthAddr, o.DiagnosticsAddress = "0", "0"
	mgr := run(t, o, cfg)

	typed := &clusterv1.MachineDeploymentList{}
	g.Eventually(func() ([]clusterv1.MachineDeployment, error) {
		err := mgr.GetCache().List(ctx, typed, client.InNamespace(ns))
		return typed.Items, err
	}, 60*time.Second, 200*time.Millisecond).Should(HaveLen(1), "the typed informer holds the MachineDeployment")
	u := &unstructured.UnstructuredList{}
	u.SetAPIVersion(clusterv1.GroupVersion.String())
	u.SetKind("MachineDeploymentList")
	g.Eventually(func() ([]unstructured.Unstructured, error) {
		err := mgr.GetCache().List(ctx, u, client.InNamespace(ns))
		return u.Items, err
	}, 60*time.Second, 200*time.Millisecond).Should(HaveLen(1), "the unstructured informer holds the MachineDeployment")

	lists, streams := rec.starts("/apis/cluster.x-k8s.io/v1beta1/machinedeployments")
	if streaming {
		g.Expect(streams).To(BeNumerically(">=", 2), "both informers start with a streaming list")
		g.Expect(lists).To(BeZero(), "no informer lists the MachineDeployments")
	} else {
		g.Expect(lists).To(BeNumerically(">=", 2), "both informers fall back to a list")
	}
}

// queryRecorder records the GET requests of the transports it wraps.
type queryRecorder struct {
	mu   sync.Mutex
	gets []*http.Request
}

func (r *queryRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			r.mu.Lock()
			r.gets = append(r.gets, req.Clone(req.Context()))
			r.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// starts counts the lists (GET without watch) and the streaming lists (watch with sendInitialEvents=true) of
// the path.
func (r *queryRecorder) starts(path string) (lists, streams int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.gets {
		if req.URL.Path != path {
			continue
		}
		q := req.URL.Query()
		switch {
		case q.Get("watch") != "true":
			lists++
		case q.Get("sendInitialEvents") == "true":
			streams++
		}
	}
	return lists, streams
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

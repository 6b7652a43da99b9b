package ui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
)

// benchClusters is how many Clusters BenchmarkView creates.
const benchClusters = 1000

// createBenchClusters creates n Clusters directly (no controller runs), each with a MachineDeployment,
// its MachineSet and two Machines, 20 Clusters at a time.
func createBenchClusters(b *testing.B, ns string, n int) {
	ctx := context.Background()
	g := NewWithT(b)
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for i := range work {
				createBenchCluster(ctx, g, ns, fmt.Sprintf("c%04d", i))
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	b.Logf("created %d Clusters with a MachineDeployment, a MachineSet and 2 Machines each in %s", n, time.Since(start).Round(time.Second))
}

func createBenchCluster(ctx context.Context, g Gomega, ns, name string) {
	infraRef := corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachine"}
	bootstrapRef := &corev1.ObjectReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig"}
	labels := map[string]string{clusterv1.ClusterNameLabel: name}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "bench", Version: "v1.37.1"}}}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	template := clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels},
		Spec: clusterv1.MachineSpec{ClusterName: name, Version: ptr.To("v1.37.1"), InfrastructureRef: infraRef,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: bootstrapRef}}}
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-md-0", Labels: labels},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: name, Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: labels}, Template: template}}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-md-0-x", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Name: md.Name, UID: md.UID, Controller: ptr.To(true)}}},
		Spec: clusterv1.MachineSetSpec{ClusterName: name, Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: labels}, Template: template}}
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	for j := range 2 {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", ms.Name, j), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: ms.Name, UID: ms.UID, Controller: ptr.To(true)}}},
			Spec: template.Spec}
		m.Spec.InfrastructureRef.Name = m.Name
		m.Spec.Bootstrap.ConfigRef = &corev1.ObjectReference{APIVersion: bootstrapRef.APIVersion, Kind: bootstrapRef.Kind, Name: m.Name}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	}
}

// get answers a request of the web view with its token; it fails the benchmark on any other answer
// than 200.
func get(b *testing.B, s *Server, path string) []byte {
	resp := request(context.Background(), b, s, path)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return body
}

// request sends a GET of the web view with its token.
func request(ctx context.Context, b *testing.B, s *Server, path string) *http.Response {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Addr().String()+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// viewer is an open page of the web view: its server-sent events, read as a browser reads them.
type viewer struct {
	events chan string
	cancel context.CancelFunc
}

func openViewer(b *testing.B, s *Server, path string) *viewer {
	ctx, cancel := context.WithCancel(context.Background())
	resp := request(ctx, b, s, path)
	v := &viewer{events: make(chan string, 100), cancel: cancel}
	go func() {
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case v.events <- data:
				default:
				}
			}
		}
	}()
	return v
}

// next waits for the viewer's next event that contains want.
func (v *viewer) next(b *testing.B, want string) {
	timeout := time.After(time.Minute)
	for {
		select {
		case e := <-v.events:
			if strings.Contains(e, want) {
				return
			}
		case <-timeout:
			b.Fatalf("no event with %q within a minute", want)
		}
	}
}

// BenchmarkView measures the web view with 1,000 Clusters (directly created, 5,000 objects) in the test
// API server: the list (GET /api/clusters) and a Cluster's page (GET /api/clusters/<ns>/<name>) must
// answer in under 1 s; and 10 viewers of the list and 10 of a Cluster's page, open while a
// MachineDeployment is scaled and until each has seen the change, must add no request to the API
// server: the server reads everything from its own watches.
func BenchmarkView(b *testing.B) {
	g := NewWithT(b)
	ctx := context.Background()
	ns := env.NewNamespace(b)
	createBenchClusters(b, ns, benchClusters)

	counter := &requestCounter{}
	start := time.Now()
	s := startServer(b, counter.wrap(env.Config), Options{})
	b.Logf("the web view read the management cluster in %s with %d requests and %d watches",
		time.Since(start).Round(time.Millisecond), counter.requests.Load(), counter.watches.Load())
	g.Eventually(func() int { return len(s.hub.snapshotRows()) }, time.Minute, interval).Should(Equal(benchClusters))
	<-s.hub.warmed
	b.Logf("and started the informers of the kinds the Clusters refer to after %s: %d requests and %d watches in all",
		time.Since(start).Round(time.Millisecond), counter.requests.Load(), counter.watches.Load())

	page := fmt.Sprintf("/api/clusters/%s/c0500", ns)
	b.Run("list", func(b *testing.B) {
		var slowest time.Duration
		for b.Loop() {
			t := time.Now()
			body := get(b, s, "/api/clusters")
			slowest = max(slowest, time.Since(t))
			if n := strings.Count(string(body), `"namespace":`); n != benchClusters {
				b.Fatalf("the list has %d Clusters, want %d", n, benchClusters)
			}
		}
		b.ReportMetric(float64(slowest.Milliseconds()), "slowest-ms")
		if slowest >= time.Second {
			b.Errorf("the list of %d Clusters took %s, want under 1s", benchClusters, slowest)
		}
	})
	b.Run("page", func(b *testing.B) {
		var slowest time.Duration
		for b.Loop() {
			t := time.Now()
			body := get(b, s, page)
			slowest = max(slowest, time.Since(t))
			if n := strings.Count(string(body), `"kind":"Machine"`); n == 0 {
				b.Fatalf("the page has no Machine: %s", body)
			}
		}
		b.ReportMetric(float64(slowest.Milliseconds()), "slowest-ms")
		if slowest >= time.Second {
			b.Errorf("a Cluster's page with %d Clusters took %s, want under 1s", benchClusters, slowest)
		}
	})
	b.Run("viewers", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			// The first viewer of a page starts the page's own watch (the Cluster's kubeconfig Secret).
			first := openViewer(b, s, "/api/watch"+page[len("/api"):])
			first.next(b, `"kind":"Cluster"`)
			g.Eventually(func() bool {
				s.hub.mu.Lock()
				defer s.hub.mu.Unlock()
				p := s.hub.pages[key{Namespace: ns, Name: "c0500"}]
				return p != nil && p.nodes.secretSynced()
			}, time.Minute, 10*time.Millisecond).Should(BeTrue())
			requests, watches := counter.requests.Load(), counter.watches.Load()

			var viewers []*viewer
			for range 10 {
				viewers = append(viewers, openViewer(b, s, "/api/watch/clusters"), openViewer(b, s, "/api/watch"+page[len("/api"):]))
			}
			for _, v := range viewers {
				v.next(b, `"name":"c0500"`)
			}
			replicas := int32(3 + i)
			g.Eventually(func() error {
				md := &clusterv1.MachineDeployment{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c0500-md-0"}, md); err != nil {
					return err
				}
				md.Spec.Replicas = ptr.To(replicas)
				return env.Client.Update(ctx, md)
			}, time.Minute, interval).Should(Succeed())
			for j, v := range viewers {
				if j%2 == 1 {
					v.next(b, fmt.Sprintf(`"replicas":"0/%d"`, replicas))
				}
			}
			for _, v := range append(viewers, first) {
				v.cancel()
			}
			added, addedWatches := counter.requests.Load()-requests, counter.watches.Load()-watches
			b.ReportMetric(float64(added), "requests")
			b.ReportMetric(float64(addedWatches), "watches")
			if added != 0 || addedWatches != 0 {
				b.Errorf("20 viewers added %d requests and %d watches to the API server, want none", added, addedWatches)
			}
		}
	})
}

package ui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

// chromiumPath finds Debian's chromium (CAPSTAN_CHROMIUM overrides); the test is skipped without it.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("CAPSTAN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("the browser tests need Chromium: `make test-tools` installs Debian's chromium when it can (root or passwordless sudo), " +
		"or run `apt-get install -y chromium`, or set CAPSTAN_CHROMIUM to a Chromium executable")
	return ""
}

// browser starts a headless Chromium with a fresh profile for the test; it stops with the test.
func browser(t *testing.T) context.Context {
	// The defaults are headless, --no-first-run, --disable-background-networking, --disable-sync...; the
	// network is closed, so nothing may reach out.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// screenshots keeps a screenshot of each step in $CAPSTAN_UI_SCREENSHOTS, or in a temporary directory
// of the test whose path is logged.
type screenshots struct {
	t   *testing.T
	dir string
	n   int
}

func newScreenshots(t *testing.T) *screenshots {
	dir := os.Getenv("CAPSTAN_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of each step: %s (set CAPSTAN_UI_SCREENSHOTS to keep them)", dir)
	return &screenshots{t: t, dir: dir}
}

func (s *screenshots) take(ctx context.Context, name string) {
	s.t.Helper()
	s.n++
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(s.dir, fmt.Sprintf("%02d-%s.png", s.n, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Error(err)
	}
}

// text returns the text of the first element matching a CSS selector, "" when there is none.
func text(ctx context.Context, selector string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector)))
}

func count(ctx context.Context, selector string) (int, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, selector)))
}

// click clicks the element of selector. The tree is drawn again at every change of the Cluster's objects
// (open details and their tabs are kept): a click that finds its element replaced before it lands
// ("Could not find node with given id") did not happen, and is tried again, as a user would.
func click(ctx context.Context, selector string) error {
	var err error
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(interval) {
		if err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector))); err == nil || !strings.Contains(err.Error(), "Could not find node") {
			return err
		}
	}
	return err
}

func visible(ctx context.Context, selector string) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(selector)))
}

// TestBrowser drives the web view in headless Chromium against the test API server, with the core, the
// kubeadm providers and the local provider's memory backend running: a request without the token is
// refused; the list shows the created Clusters and filters them; a Cluster's page shows its tree;
// scaling a MachineDeployment updates the page without a reload within 2 s; a Machine's conditions and
// YAML open; a ClusterClass Cluster shows its class, variables and patches and its workload Nodes.
func TestBrowser(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	page := browser(t)
	shots := newScreenshots(t)
	ns := env.NewNamespace(t)
	envtest.DumpOnFailure(t, env.Client, ns)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true,
		LocalMemory: &memory.Options{StartupDelay: 100 * time.Millisecond, StartupJitter: 200 * time.Millisecond}})

	vars := func(name, workers string) map[string]string {
		return map[string]string{"CLUSTER_NAME": name, "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
			"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": workers}
	}
	objs := stack.LocalTemplate(t, "cluster-template.yaml", vars("web", "1"))
	for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
		o.SetNamespace(ns)
		objs = append(objs, o)
	}
	objs = append(objs, stack.LocalTemplate(t, "cluster-template-topology.yaml", vars("classy", "2"))...)
	for _, o := range objs {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}

	s := startServer(t, nil, Options{})
	base := "http://" + s.Addr().String()

	t.Log("a request without the token is refused, by the server and in the browser")
	for _, path := range []string{"/", "/api/clusters", "/api/watch/clusters", "/clusters/" + ns + "/web", "/static/app.js", "/?token=wrong"} {
		resp, err := http.Get(base + path)
		g.Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "%s: %s", path, body)
		g.Expect(string(body)).NotTo(ContainSubstring(ns))
	}
	g.Expect(chromedp.Do(page, chromedp.Navigate(base+"/"))).To(Succeed())
	g.Expect(visible(page, "body")).To(Succeed())
	body, err := text(page, "body")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(body).To(ContainSubstring("401 Unauthorized"))
	shots.take(page, "no-token")

	t.Log("the list shows the created Clusters; the filter keeps the matching ones")
	g.Expect(chromedp.Do(page, chromedp.Navigate(s.URL()))).To(Succeed())
	webRow := fmt.Sprintf(`tr[data-cluster="%s/web"]`, ns)
	classyRow := fmt.Sprintf(`tr[data-cluster="%s/classy"]`, ns)
	g.Expect(visible(page, webRow)).To(Succeed())
	g.Expect(visible(page, classyRow)).To(Succeed())
	location, err := chromedp.Run(page, chromedp.Location())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(location).NotTo(ContainSubstring("token"), "the token leaves the address bar once it is in the cookie")
	g.Eventually(func(g Gomega) {
		row, err := text(page, classyRow)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(row).To(ContainSubstring("local"), "the class")
		g.Expect(row).To(ContainSubstring("v1.37.1"))
		g.Expect(row).To(ContainSubstring("True"), "Available")
		row, err = text(page, webRow)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(row).To(ContainSubstring("Provisioned"))
		g.Expect(row).To(ContainSubstring("True"), "Available")
	}, wait, interval).Should(Succeed(), "the rows follow the Clusters to Available")
	shots.take(page, "list")
	g.Expect(chromedp.Do(page, chromedp.SendKeys(chromedp.CSS("#filter"), "class:local"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(count(page, webRow)).To(Equal(0))
		g.Expect(count(page, classyRow)).To(Equal(1))
		g.Expect(text(page, "#count")).To(HavePrefix("1 of"))
	}, 10*time.Second, interval).Should(Succeed())
	shots.take(page, "list-filtered")

	t.Log("a Cluster's page shows its tree")
	g.Expect(chromedp.Do(page, chromedp.Navigate(base+"/clusters/"+ns+"/web"))).To(Succeed())
	mdRow := `#tree tr[data-kind="MachineDeployment"][data-name="web-md-0"]`
	for _, sel := range []string{`#tree tr[data-kind="Cluster"][data-name="web"]`, `#tree tr[data-kind="LocalCluster"]`,
		`#tree tr[data-kind="KubeadmControlPlane"][data-name="web-control-plane"]`, `#tree tr[data-virtual="Workers"]`, mdRow} {
		g.Expect(visible(page, sel)).To(Succeed(), sel)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(text(page, mdRow+" td.replicas")).To(Equal("1/1"))
		g.Expect(count(page, `#tree tr.node[data-kind="Machine"]`)).To(Equal(2), "a control plane Machine and a worker")
		g.Expect(text(page, `#tree tr[data-kind="Cluster"] td.status`)).To(Equal("Available: True"))
		g.Expect(count(page, `#node-list tr[data-node]`)).To(Equal(2), "the workload cluster's Nodes")
	}, wait, interval).Should(Succeed())
	shots.take(page, "tree")

	t.Log("scaling the MachineDeployment updates the page without a reload within 2 s")
	loadID, err := chromedp.Run(page, chromedp.Evaluate[string](`window.capstanLoadID`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		md := &clusterv1.MachineDeployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-md-0"}, md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](2)
		return env.Client.Update(ctx, md)
	}, time.Minute, interval).Should(Succeed())
	scaled := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(text(page, mdRow+" td.replicas")).To(HaveSuffix("/2"))
	}, 2*time.Second, 20*time.Millisecond).Should(Succeed(), "the MachineDeployment's row shows 2 desired replicas")
	t.Logf("the page showed the new replicas %s after the update", time.Since(scaled).Round(time.Millisecond))
	after, err := chromedp.Run(page, chromedp.Evaluate[string](`window.capstanLoadID`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(loadID), "the page was not reloaded")
	g.Eventually(func(g Gomega) {
		g.Expect(text(page, mdRow+" td.replicas")).To(Equal("2/2"))
		g.Expect(count(page, `#upgrade [data-group="MachineDeployment/web-md-0"] tbody tr`)).To(Equal(2))
	}, wait, interval).Should(Succeed(), "the new Machine follows")
	shots.take(page, "scaled")

	t.Log("a Machine's conditions and YAML open")
	cpMachine := `#tree tr.node[data-kind="Machine"][data-group="false"]`
	attr, err := chromedp.Run(page, chromedp.AttributeValue(chromedp.CSS(cpMachine), "data-name"))
	g.Expect(err).NotTo(HaveOccurred())
	machineName := attr.Value
	g.Expect(click(page, cpMachine)).To(Succeed())
	details := fmt.Sprintf(`.details[data-kind="Machine"][data-name=%q]`, machineName)
	g.Expect(visible(page, details+` table.conditions tr[data-condition="Ready"]`)).To(Succeed())
	g.Expect(text(page, details+` table.conditions tr[data-condition="Ready"]`)).To(ContainSubstring("True"))
	g.Expect(visible(page, details+` table.conditions tr[data-condition="NodeHealthy"]`)).To(Succeed())
	shots.take(page, "machine-conditions")
	g.Expect(click(page, details+` button[data-tab="events"]`)).To(Succeed())
	g.Expect(visible(page, details+` table.events, `+details+` p`)).To(Succeed())
	g.Expect(click(page, details+` button[data-tab="yaml"]`)).To(Succeed())
	g.Expect(visible(page, details+` pre.yaml`)).To(Succeed())
	yaml, err := text(page, details+` pre.yaml`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml).To(ContainSubstring("kind: Machine"))
	g.Expect(yaml).To(ContainSubstring("name: " + machineName))
	g.Expect(yaml).NotTo(ContainSubstring("managedFields"))
	shots.take(page, "machine-yaml")

	t.Log("a Cluster of a ClusterClass shows the class, its variables and patches, and its versions")
	g.Expect(chromedp.Do(page, chromedp.Navigate(base+"/clusters/"+ns+"/classy"))).To(Succeed())
	g.Expect(visible(page, `#variables tr[data-variable="podSecurityStandard"]`)).To(Succeed())
	g.Expect(visible(page, `#patches tr[data-patch]`)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(text(page, `#topology`)).To(ContainSubstring("TopologyReconciled"))
		g.Expect(text(page, `#upgrade`)).To(ContainSubstring("3 of 3 Machines at v1.37.1"))
		g.Expect(count(page, `#node-list tr[data-node]`)).To(Equal(3))
	}, wait, interval).Should(Succeed())
	patches, err := text(page, "#patches")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Contains(patches, "yes")).To(BeTrue(), "a patch applies: %s", patches)
	shots.take(page, "clusterclass")
}

// Package e2e runs the main job end to end with the real binaries: `capstan up`, `clusterctl init
// --infrastructure local` (no cert-manager, webhooks answering), a workload cluster from `clusterctl
// generate cluster`, a MachineDeployment refused by the core's webhook, then a SIGKILL of `capstan up` and
// a restart, and `capstan down`.
package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/core"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// build compiles capstan and clusterctl into a temporary directory.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func build(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/capstan-dev/capstan/cmd/capstan", "github.com/capstan-dev/capstan/cmd/clusterctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	return dir
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// managerPids returns the pids of the `capstan manager` processes below the capstan up of state.
func managerPids(state embedded.State) []int {
	pid, err := state.RunningPid()
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs.Descendants(pid) {
		if strings.Contains(procs.Cmdline(p), "capstan manager ") {
			out = append(out, p)
		}
	}
	return out
}

func TestMainJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs capstan up, clusterctl and a workload cluster")
	}
	g := NewWithT(t)
	ctx := context.Background()
	bin := build(t)
	capstan, clusterctl := filepath.Join(bin, "capstan"), filepath.Join(bin, "clusterctl")
	state := embedded.State{Dir: filepath.Join(t.TempDir(), "state")}
	up := []string{"up", "--name", "e2e", "--state-dir", state.Dir, "--detach", "--etcd-unsafe-no-fsync", "--ui"}
	down := []string{"down", "--name", "e2e", "--state-dir", state.Dir}

	run(t, capstan, up...)
	t.Cleanup(func() { _ = exec.Command(capstan, down...).Run() })

	// clusterctl init, offline, from the local repository capstan up wrote.
	config := state.ClusterctlConfig()
	t.Setenv("KUBECONFIG", state.Kubeconfig())
	start := time.Now()
	run(t, clusterctl, "init", "--config", config, "--infrastructure", "local", "--wait-providers")
	t.Logf("clusterctl init --infrastructure local --wait-providers took %s", time.Since(start).Round(100*time.Millisecond))
	c := newClient(t, state)
	expectNoCertManager(t, c)

	// The workload cluster "demo" with two workers.
	yaml := run(t, clusterctl, "generate", "cluster", "demo", "--config", config, "--infrastructure", "local",
		"--kubernetes-version", "v1.37.1", "--worker-machine-count", "2")
	objs, err := manifest.Parse([]byte(yaml))
	g.Expect(err).NotTo(HaveOccurred())
	// --wait-providers returned once the webhooks answer: the MachineDeployments are admitted at once.
	for i := range objs {
		g.Expect(c.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}

	waitProvisioned(t, c, state)
	expectWebView(t, state)
	expectLoopbackOnly(t, state)
	uids := snapshot(t, c)
	expectSelectorMismatchRefused(t, state)
	caBefore := webhookCA(t, c)

	// Scaling the core provider's Deployment to 0 stops its process; back to 1 starts one.
	g.Expect(managerPids(state)).To(HaveLen(1))
	old := managerPids(state)[0]
	scale(t, c, 0)
	g.Eventually(func() []int { return managerPids(state) }, 30*time.Second, 200*time.Millisecond).Should(BeEmpty())
	// An exiting process loses its command line before it is gone.
	g.Eventually(func() bool { return procs.Alive(old) }, 10*time.Second, 100*time.Millisecond).Should(BeFalse())
	scale(t, c, 1)
	g.Eventually(func() []int { return managerPids(state) }, 30*time.Second, 200*time.Millisecond).Should(HaveLen(1))

	// SIGKILL capstan up: none of its processes outlives it.
	pid, err := state.RunningPid()
	g.Expect(err).NotTo(HaveOccurred())
	children := procs.Descendants(pid)
	g.Expect(len(children)).To(BeNumerically(">=", 7), "etcd, kube-apiserver, kube-controller-manager, two providers and a workload etcd and kube-apiserver")
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(func() []int {
		var left []int
		for _, p := range append(children, pid) {
			if procs.Alive(p) {
				left = append(left, p)
			}
		}
		return left
	}, 30*time.Second, 200*time.Millisecond).Should(BeEmpty())

	// Started again, every object is there (same UIDs), the providers run and the workload cluster answers.
	run(t, capstan, up...)
	c = newClient(t, state)
	g.Expect(snapshot(t, c)).To(Equal(uids))
	waitProvisioned(t, c, state)
	g.Expect(webhookCA(t, c)).To(Equal(caBefore), "the restarted manager reuses its webhook certificates")
	expectSelectorMismatchRefused(t, state)

	// capstan down leaves no process behind.
	pid, err = state.RunningPid()
	g.Expect(err).NotTo(HaveOccurred())
	children = append(procs.Descendants(pid), pid)
	run(t, capstan, down...)
	for _, p := range children {
		g.Expect(procs.Alive(p)).To(BeFalse(), "process %d (%s) outlived capstan down", p, procs.Cmdline(p))
	}
	_, err = state.RunningPid()
	g.Expect(err).To(MatchError(embedded.ErrNotRunning))
}

// expectWebView checks the web view of `capstan up --ui`: the URL it keeps in the state directory (the
// one `make run` prints) lists demo; the same request without the token is refused.
func expectWebView(t *testing.T, state embedded.State) {
	t.Helper()
	g := NewWithT(t)
	data, err := os.ReadFile(filepath.Join(state.Dir, "ui-url"))
	g.Expect(err).NotTo(HaveOccurred(), "capstan up --ui keeps its URL in ui-url")
	u, err := url.Parse(strings.TrimSpace(string(data)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.Hostname()).To(Equal("127.0.0.1"), "the web view listens on loopback")
	token := u.Query().Get("token")
	g.Expect(token).NotTo(BeEmpty())
	get := func(withToken bool) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+u.Host+"/api/clusters", nil)
		g.Expect(err).NotTo(HaveOccurred())
		if withToken {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, _ := get(false)
	g.Expect(code).To(Equal(http.StatusUnauthorized))
	g.Eventually(func(g Gomega) {
		code, body := get(true)
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring(`"name":"demo"`))
		g.Expect(body).To(ContainSubstring(`"available":"True"`))
	}, time.Minute, time.Second).Should(Succeed())
}

// expectLoopbackOnly lists the TCP sockets that capstan up and every process below it listen on (etcd,
// kube-apiserver, the providers with their webhook, health and diagnostics servers, the workload
// cluster's etcd, kube-apiserver, load balancer and simulated kubelets) and finds none on an address other
// than loopback.
func expectLoopbackOnly(t *testing.T, state embedded.State) {
	t.Helper()
	g := NewWithT(t)
	pid, err := state.RunningPid()
	g.Expect(err).NotTo(HaveOccurred())
	listeners, err := procs.Listeners(append(procs.Descendants(pid), pid))
	g.Expect(err).NotTo(HaveOccurred())
	var open []string
	programs := map[string]bool{}
	for _, l := range listeners {
		programs[filepath.Base(strings.Fields(l.Cmdline + " ?")[0])] = true
		if !l.Addr.IP.IsLoopback() {
			open = append(open, l.String())
		}
	}
	g.Expect(open).To(BeEmpty(), "listening on an address other than loopback")
	// The check saw the servers it is about: the management and workload etcd and kube-apiservers, and
	// capstan's processes (the providers, their webhooks, the load balancer and kubelets).
	g.Expect(programs).To(HaveKey("etcd"))
	g.Expect(programs).To(HaveKey("kube-apiserver"))
	g.Expect(programs).To(HaveKey("capstan"))
	t.Logf("%d listening sockets, all on loopback", len(listeners))
}

func newClient(t *testing.T, state embedded.State) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := core.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitProvisioned waits until the demo Cluster is Provisioned and Available (as `make run` does), its
// three Machines (the KubeadmControlPlane's Machine and two workers) are Running and its workload API
// server lists three Ready Nodes.
func waitProvisioned(t *testing.T, c client.Client, state embedded.State) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		cluster := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "demo"}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		available := meta.FindStatusCondition(cluster.GetV1Beta2Conditions(), clusterv1.ClusterAvailableV1Beta2Condition)
		g.Expect(available).NotTo(BeNil())
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "Available: %s", available.Message)
		machines := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, machines, client.MatchingLabels{clusterv1.ClusterNameLabel: "demo"})).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(3))
		for _, m := range machines.Items {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
		}

		secret := &corev1.Secret{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "demo-kubeconfig"}, secret)).To(Succeed())
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
		g.Expect(err).NotTo(HaveOccurred())
		cfg.Timeout = 5 * time.Second
		wc, err := client.New(cfg, client.Options{})
		g.Expect(err).NotTo(HaveOccurred())
		nodes := &corev1.NodeList{}
		g.Expect(wc.List(ctx, nodes)).To(Succeed())
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		g.Expect(ready).To(Equal(3))
	}, 3*time.Minute, time.Second).Should(Succeed())
	t.Logf("%s: demo is provisioned with 3 Ready nodes", state.Dir)
}

// snapshot returns the UIDs of the Cluster API and provider objects of the demo cluster.
func snapshot(t *testing.T, c client.Client) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, kind := range []string{"Cluster", "MachineDeployment", "MachineSet", "Machine"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(clusterv1.GroupVersion.String())
		list.SetKind(kind + "List")
		if err := c.List(context.Background(), list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			out[kind+"/"+item.GetName()] = item.GetUID()
		}
	}
	for _, kind := range []string{"LocalCluster", "LocalMachine"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1alpha1")
		list.SetKind(kind + "List")
		if err := c.List(context.Background(), list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			out[kind+"/"+item.GetName()] = item.GetUID()
		}
	}
	return out
}

func scale(t *testing.T, c client.Client, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: "capi-system", Name: "capi-controller-manager"}
	if err := c.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	before := d.DeepCopy()
	d.Spec.Replicas = ptr.To(replicas)
	if err := c.Patch(context.Background(), d, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// expectNoCertManager checks that nothing of cert-manager was installed.
func expectNoCertManager(t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{}
	g.Expect(apierrors.IsNotFound(c.Get(context.Background(), types.NamespacedName{Name: "cert-manager"}, ns))).To(BeTrue(),
		"clusterctl init installs no cert-manager for capstan's providers")
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	g.Expect(c.List(context.Background(), crds)).To(Succeed())
	for _, crd := range crds.Items {
		g.Expect(crd.Spec.Group).NotTo(Equal("cert-manager.io"))
	}
}

// expectSelectorMismatchRefused applies, with kubectl, a MachineDeployment whose selector does not match
// its template's labels: the core's webhook refuses it, naming both.
func expectSelectorMismatchRefused(t *testing.T, state embedded.State) {
	t.Helper()
	g := NewWithT(t)
	kubectl, err := binaries.Find("kubectl", "")
	g.Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(kubectl, "--kubeconfig", state.Kubeconfig(), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(`apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: mismatch, namespace: default}
spec:
  clusterName: demo
  selector: {matchLabels: {pool: a}}
  template:
    metadata: {labels: {pool: b}}
    spec:
      clusterName: demo
      bootstrap: {dataSecretName: none}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: LocalMachineTemplate, name: demo-md-0}
`)
	out, err := cmd.CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "kubectl apply must fail: %s", out)
	// kubectl prints the webhook's Invalid status: the advice is the webhook's own.
	g.Expect(string(out)).To(And(
		ContainSubstring(`The MachineDeployment "mismatch" is invalid: spec.template.metadata.labels`),
		ContainSubstring("add the labels the selector requires to spec.template.metadata.labels, or change spec.selector"),
		ContainSubstring(`must match spec.selector "cluster.x-k8s.io/cluster-name=demo,pool=a"`)))
}

// webhookCA returns the CA bundle of the core's webhook certificate Secret.
func webhookCA(t *testing.T, c client.Client) []byte {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "capi-system", Name: "capi-webhook-service-cert"}, secret); err != nil {
		t.Fatal(err)
	}
	return secret.Data["ca.crt"]
}

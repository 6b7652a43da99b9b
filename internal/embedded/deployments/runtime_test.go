package deployments

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/internal/loopback"
	"github.com/capstan-dev/capstan/internal/supervisor"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

// The test binary doubles as the capstan binary the runtime runs: in RUNTIME_TEST_MODE it records its
// arguments and identity, and serves /readyz on --health-addr.
func TestMain(m *testing.M) {
	if os.Getenv("RUNTIME_TEST_MODE") == "manager" {
		fakeManager()
		return
	}
	// The API server calls webhooks through the EndpointSlices of their Service, as in the embedded cluster.
	os.Exit(envtest.Run(m, envtest.Options{PodNetwork: true},
		func(e *envtest.Environment) { env = e }))
}

type report struct {
	Args      []string `json:"args"`
	Namespace string   `json:"namespace"`
	Greeting  string   `json:"greeting"`
	User      string   `json:"user"`
	// TokenUser is who the projected service account token authenticates as; ScratchWritable says
	// whether the emptyDir volume could be written.
	TokenUser       string `json:"tokenUser,omitempty"`
	ScratchWritable bool   `json:"scratchWritable,omitempty"`
}

func fakeManager() {
	rep := report{Args: os.Args[1:], Namespace: os.Getenv("POD_NAMESPACE"), Greeting: os.Getenv("GREETING")}
	if cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG")); err == nil {
		if cs, err := kubernetes.NewForConfig(cfg); err == nil {
			if r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err == nil {
				rep.User = r.Status.UserInfo.Username
			} else {
				rep.User = "error: " + err.Error()
			}
		}
	}
	flags := map[string]string{}
	for _, a := range os.Args[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
		}
	}
	if f := flags["--token-file"]; f != "" {
		rep.TokenUser = tokenUser(f)
	}
	if dir := flags["--scratch-dir"]; dir != "" {
		rep.ScratchWritable = os.WriteFile(filepath.Join(dir, "scratch"), []byte("x"), 0o600) == nil
	}
	data, _ := json.Marshal(rep)
	_ = os.WriteFile(filepath.Join(os.Getenv("RUNTIME_TEST_DIR"), fmt.Sprintf("%d.json", os.Getpid())), data, 0o644)
	if port := flags["--webhook-port"]; port != "" {
		go serveWebhook(port, flags["--cert-dir"], flags["--motto-file"], flags["--secret-motto-file"])
	}
	if addr := flags["--health-addr"]; addr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		_ = http.ListenAndServe(addr, mux)
	}
	// The child runs until the runtime stops it.
	time.Sleep(time.Hour)
}

// startRuntime runs a Runtime against the test API server and returns the directory where the fake
// manager writes its reports.
func startRuntime(t *testing.T) (string, *Runtime) {
	t.Helper()
	reports := t.TempDir()
	t.Setenv("RUNTIME_TEST_MODE", "manager")
	t.Setenv("RUNTIME_TEST_DIR", reports)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{
		Client: mgr.GetClient(), Capstan: os.Args[0], Images: []string{"ghcr.io/capstan-dev/capstan"},
		Dir: t.TempDir(), Server: env.Config.Host, CAData: env.Config.CAData, FreePort: loopback.FreePort,
		Supervisor: supervisor.Options{MinBackoff: 50 * time.Millisecond, StopTimeout: 2 * time.Second},
	}
	if err := rt.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); rt.Stop() })
	return reports, rt
}

func deployment(ns, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "manager"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capi-controller-manager"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "capi-manager",
					Containers: []corev1.Container{{
						Name: "manager", Image: image, Command: []string{"/capstan"},
						Args: []string{"manager", "--leader-elect", "--health-addr=:9440", "--metrics-bind-addr", "localhost:8080"},
						Env:  []corev1.EnvVar{{Name: "GREETING", Value: "hello"}},
					}},
				},
			},
		},
	}
}

func reportsIn(dir string) []report {
	entries, _ := os.ReadDir(dir)
	var out []report
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r report
		if json.Unmarshal(data, &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

func running(rt *Runtime, d *appsv1.Deployment) []int {
	r := rt.get(client.ObjectKeyFromObject(d))
	var pids []int
	for _, rep := range r.replicas {
		if pid := rep.proc.Pid(); pid != 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestRunsCapstanDeploymentsAsProcesses(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reports, rt := startRuntime(t)
	ns := env.NewNamespace(t)
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capi-manager"}})).To(Succeed())
	d := deployment(ns, "ghcr.io/capstan-dev/capstan:v0.1.0", 2)
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(2))
		g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(2))
		g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(2))
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	got := reportsIn(reports)
	g.Expect(got).To(HaveLen(2))
	for _, r := range got {
		g.Expect(r.Args[0]).To(Equal("manager"))
		g.Expect(r.Args).To(ContainElement("--leader-elect"))
		g.Expect(r.Args).To(ContainElement(MatchRegexp(`^--health-addr=127\.0\.0\.1:\d+$`)))
		g.Expect(r.Args).To(ContainElement(MatchRegexp(`^--metrics-bind-addr=127\.0\.0\.1:\d+$`)))
		g.Expect(r.Namespace).To(Equal(ns))
		g.Expect(r.Greeting).To(Equal("hello"))
		g.Expect(r.User).To(Equal("system:serviceaccount:"+ns+":capi-manager"), "processes act as their ServiceAccount")
	}

	// A crashed process is restarted.
	pid := running(rt, d)[0]
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(func() []int { return running(rt, d) }, 20*time.Second, 100*time.Millisecond).Should(And(HaveLen(2), Not(ContainElement(pid))))

	// Scaling to zero stops every process; scaling back starts one.
	pids := running(rt, d)
	g.Expect(env.Client.Patch(ctx, d, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`)))).To(Succeed())
	g.Eventually(func() []int { return running(rt, d) }, 20*time.Second).Should(BeEmpty())
	for _, p := range pids {
		g.Eventually(func() error { return syscall.Kill(p, 0) }, 10*time.Second).Should(HaveOccurred())
	}
	g.Expect(env.Client.Patch(ctx, d, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(1))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// A template change rolls out: the process is replaced.
	old := running(rt, d)
	g.Expect(env.Client.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"manager","env":[{"name":"GREETING","value":"bonjour"}]}]}}}}`)))).To(Succeed())
	g.Eventually(func() []int { return running(rt, d) }, 20*time.Second).Should(And(HaveLen(1), Not(ContainElement(old[0]))))
	g.Eventually(func() []string {
		var greetings []string
		for _, r := range reportsIn(reports) {
			greetings = append(greetings, r.Greeting)
		}
		return greetings
	}, 10*time.Second).Should(ContainElement("bonjour"))

	// Deleting the Deployment stops its processes.
	last := running(rt, d)
	g.Expect(env.Client.Delete(ctx, d)).To(Succeed())
	g.Eventually(func() error { return syscall.Kill(last[0], 0) }, 20*time.Second).Should(HaveOccurred())
}

func TestOtherImagesAreReportedNotRunnable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, _ = startRuntime(t)
	ns := env.NewNamespace(t)
	d := deployment(ns, "quay.io/jetstack/cert-manager-controller:v1.21.1", 1)
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		var available *appsv1.DeploymentCondition
		for i := range d.Status.Conditions {
			if d.Status.Conditions[i].Type == appsv1.DeploymentAvailable {
				available = &d.Status.Conditions[i]
			}
		}
		g.Expect(available).NotTo(BeNil())
		g.Expect(available.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(available.Reason).To(Equal(ReasonImageNotRunnable))
		g.Expect(available.Message).To(ContainSubstring("quay.io/jetstack/cert-manager-controller:v1.21.1"))
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestRewritePorts(t *testing.T) {
	g := NewWithT(t)
	n := 40000
	next := func() (int, error) { n++; return n, nil }
	args, health, ports, err := rewritePorts([]string{"manager", "--health-addr=:9440", "--metrics-bind-addr", "0", "--webhook-port=9443", "--other=1"}, next)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(args).To(Equal([]string{"manager", "--health-addr=127.0.0.1:40001", "--metrics-bind-addr=0", "--webhook-port=40002", "--other=1"}))
	g.Expect(health).To(Equal("127.0.0.1:40001"))
	g.Expect(ports).To(Equal(map[int32]int32{9440: 40001, 9443: 40002}), "container ports 9440 and 9443 are reached on the new ports")

	// An address flag is loopback whatever it says; a disabled webhook server stays disabled.
	args, _, _, err = rewritePorts([]string{"manager", "--webhook-host", "0.0.0.0", "--webhook-port=-1", "--diagnostics-address=0.0.0.0:8443"}, next)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(args).To(Equal([]string{"manager", "--webhook-host=127.0.0.1", "--webhook-port=-1", "--diagnostics-address=127.0.0.1:40003"}))
}

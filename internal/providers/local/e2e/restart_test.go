package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/cabpk"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// BinaryEnv names the environment variable holding a prebuilt capstan binary; when unset the test builds
// ./cmd/capstan.
const BinaryEnv = "CAPSTAN_BINARY"

func repositoryRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/capstan-dev/capstan\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the root of the repository")
		}
		dir = parent
	}
}

func capstanBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(BinaryEnv); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "capstan")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/capstan")
	cmd.Dir = repositoryRoot(t)
	if data, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building capstan: %v\n%s", err, data)
	}
	return out
}

// startProviderProcess runs `capstan infra-local` as its own process; it is stopped (SIGTERM) when the
// test ends if it still runs.
func startProviderProcess(t *testing.T, binary, kubeconfigPath, dataDir string) *exec.Cmd {
	t.Helper()
	apiserver, err := binaries.Find("kube-apiserver", "")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := binaries.Find("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.CreateTemp(t.TempDir(), "infra-local-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "infra-local", "--kubeconfig", kubeconfigPath, "--data-dir", dataDir,
		"--metrics-bind-addr=0", "--health-addr=0", "--webhook-port=-1", "--kube-apiserver-path", apiserver, "--etcd-path", etcd)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		if t.Failed() {
			data, _ := os.ReadFile(logFile.Name())
			t.Logf("provider log %s:\n%s", logFile.Name(), tail(string(data), 60))
		}
		_ = logFile.Close()
	})
	return cmd
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// TestProviderKilledAndRestarted kills the provider process with SIGKILL: its workload clusters' processes
// die with it; started again, it brings every workload cluster back on the same endpoint, with exactly one
// etcd and one kube-apiserver each (each cluster has one control plane machine).
func TestProviderKilledAndRestarted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	binary := capstanBinary(t)
	kubeconfigPath := env.KubeconfigFile(t, "")
	dataDir := t.TempDir()
	ns := env.NewNamespace(t)
	first := startProviderProcess(t, binary, kubeconfigPath, dataDir)

	names := []string{"a", "b"}
	clusters := map[string]*clusterv1.Cluster{}
	for _, name := range names {
		clusters[name] = createLocalCluster(t, ns, name)
	}
	endpoints := map[string]clusterv1.APIEndpoint{}
	for _, name := range names {
		lc := &infrav1.LocalCluster{}
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lc)).To(Succeed())
			g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue())
		}, 90*time.Second, 500*time.Millisecond).Should(Succeed())
		endpoints[name] = lc.Spec.ControlPlaneEndpoint
		setInfrastructureReady(g, clusters[name], lc.Spec.ControlPlaneEndpoint)
		createMachine(t, clusters[name], name+"-cp-0", "v1.37.1", true,
			cabpk.CloudConfig(cabpk.Data{Init: true, Kubeadm: cabpk.InitConfiguration(name, "v1.37.1", "", "", name+"-cp-0")}))
	}
	for _, name := range names {
		g.Eventually(func(g Gomega) {
			wc := workloadClient(g, ns, name, false, endpoints[name])
			_, err := wc.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	}
	dirOf := func(name string) string { return filepath.Join(dataDir, ns, name) }
	for _, name := range names {
		g.Expect(procs.Find("etcd", dirOf(name))).To(HaveLen(1))
		g.Expect(procs.Find("kube-apiserver", dirOf(name))).To(HaveLen(1))
	}

	t.Log("killing the provider: its children die with it")
	g.Expect(first.Process.Signal(syscall.SIGKILL)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, name := range names {
			g.Expect(procs.Find("etcd", dirOf(name))).To(BeEmpty())
			g.Expect(procs.Find("kube-apiserver", dirOf(name))).To(BeEmpty())
		}
	}, 15*time.Second, 100*time.Millisecond).Should(Succeed())

	t.Log("starting the provider again: every workload cluster is back on its endpoint")
	second := startProviderProcess(t, binary, kubeconfigPath, dataDir)
	for _, name := range names {
		g.Eventually(func(g Gomega) {
			wc := workloadClient(g, ns, name, false, endpoints[name])
			_, err := wc.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
		lc := &infrav1.LocalCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lc)).To(Succeed())
		g.Expect(lc.Spec.ControlPlaneEndpoint).To(Equal(endpoints[name]))
	}
	g.Consistently(func(g Gomega) {
		for _, name := range names {
			g.Expect(procs.Find("etcd", dirOf(name))).To(HaveLen(1), "etcd of %s", name)
			g.Expect(procs.Find("kube-apiserver", dirOf(name))).To(HaveLen(1), "kube-apiserver of %s", name)
		}
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())

	t.Log("deleting the LocalClusters stops their processes and removes their data")
	for _, name := range names {
		g.Expect(env.Client.Delete(ctx, &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	}
	for _, name := range names {
		g.Eventually(func() bool {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &infrav1.LocalCluster{})
			return apierrors.IsNotFound(err)
		}, 60*time.Second, 200*time.Millisecond).Should(BeTrue())
		g.Expect(procs.Find("etcd", dirOf(name))).To(BeEmpty())
		g.Expect(procs.Find("kube-apiserver", dirOf(name))).To(BeEmpty())
		_, err := os.Stat(dirOf(name))
		g.Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	}

	t.Log("stopping the provider gracefully")
	g.Expect(second.Process.Signal(syscall.SIGTERM)).To(Succeed())
}

package releasecheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/config"
	"github.com/capstan-dev/capstan/internal/conformance"
	"github.com/capstan-dev/capstan/internal/manifest"
	capstanrelease "github.com/capstan-dev/capstan/internal/release"
)

// binariesDir is the directory binaries built into, "" until it is called.
var binariesDir string

// binaries builds, once, the capstan executable the embedded cluster's local runtime runs and the broken
// manager; it returns their directory.
var binaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "capstan-conformance-bin-")
	if err != nil {
		return "", err
	}
	binariesDir = dir
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/capstan-dev/capstan/cmd/capstan",
		"github.com/capstan-dev/capstan/internal/conformance/releasecheck/testdata/ignorepause")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building capstan: %w\n%s", err, out)
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	stopShared()
	if sharedWorkDir != "" {
		_ = os.RemoveAll(sharedWorkDir)
	}
	if binariesDir != "" { // built by a test that ran
		_ = os.RemoveAll(binariesDir)
	}
	os.Exit(code)
}

// localProviderRepository writes the local provider's release in the layout of a clusterctl local repository.
func localProviderRepository(t *testing.T) string {
	t.Helper()
	p, err := capstanrelease.Local()
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := capstanrelease.WriteRepository(repo, capstanrelease.DefaultVersion, p); err != nil {
		t.Fatal(err)
	}
	return repo
}

// brokenImage is the image of the broken release's manager, which the shared cluster runs as ignorepause.
const brokenImage = "example.com/conformance/ignore-pause"

// sharedCluster starts, once, the embedded management cluster the tests install providers in; it stops
// when the tests end.
var (
	sharedOnce    sync.Once
	shared        *managementCluster
	sharedErr     error
	stopShared    = func() {}
	sharedWorkDir string
)

func sharedCluster(t *testing.T) *managementCluster {
	t.Helper()
	sharedOnce.Do(func() {
		bin, err := binaries()
		if err != nil {
			sharedErr = err
			return
		}
		if sharedWorkDir, err = os.MkdirTemp("", "capstan-conformance-cluster-"); err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = startCluster(context.Background(), sharedWorkDir, &Options{
			Capstan: filepath.Join(bin, "capstan"), ImageExecutables: map[string]string{brokenImage: filepath.Join(bin, "ignorepause")}, Log: logr.Discard(),
		})
		if sharedErr == nil {
			stopShared = shared.stop
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// uninstall deletes the provider of a run from the shared cluster (keeping its CRDs, which the next run's
// release brings again), as `clusterctl delete --infrastructure <name>` would.
func uninstall(t *testing.T, cl *managementCluster, name string) {
	t.Helper()
	cfg, err := config.New(nil, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	cc := clusterctlclient.New(clusterctlclient.Options{Config: cfg, Cluster: cluster.New(cluster.Kubeconfig{Path: cl.state.Kubeconfig()})})
	if err := cc.Delete(t.Context(), clusterctlclient.DeleteOptions{Providers: clusterctlclient.Providers{InfrastructureProviders: []string{name}}}); err != nil {
		t.Fatal(err)
	}
}

// run checks a release with o in the shared cluster, as `capstan conformance -v 1` does, logging what it
// prints; the provider is deleted afterwards.
func run(t *testing.T, o Options) (Result, error) {
	t.Helper()
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	o.Capstan = filepath.Join(bin, "capstan")
	o.cluster = sharedCluster(t)
	defer uninstall(t, o.cluster, "local")
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = "v1.37.1"
	}
	o.Timeout, o.Quiet, o.Log = 3*time.Minute, 3*time.Second, logr.Discard()
	o.Printf, o.Logf = t.Logf, t.Logf
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	result, err := Run(ctx, o)
	t.Logf("report:\n%s", result.Report)
	return result, err
}

// TestLocalProviderConforms checks the local provider's release, with an InfraCluster of the author's
// (--infra-cluster: the template's has no failure domains) and the InfraMachine of the cluster template: the
// report lists every rule of the kit, and every rule passes, none skipped.
func TestLocalProviderConforms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded management cluster")
	}
	g := NewWithT(t)
	infraCluster := filepath.Join(t.TempDir(), "localcluster.yaml")
	g.Expect(os.WriteFile(infraCluster, []byte(`apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: LocalCluster
metadata:
  name: any
spec:
  failureDomains:
    fd-a:
      controlPlane: true
    fd-b:
      attributes:
        rack: b
`), 0o600)).To(Succeed())
	result, err := run(t, Options{Source: localProviderRepository(t), InfraCluster: infraCluster})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.Release.Label()).To(Equal("infrastructure-local"))
	g.Expect(result.Release.Version).To(Equal(capstanrelease.DefaultVersion))
	g.Expect(result.Report.Passed()).To(BeTrue())
	var rules []string
	for _, r := range result.Report {
		rules = append(rules, r.Rule)
		// Multi tenancy included: the provider's Deployment is run with --namespace and --watch-filter.
		g.Expect(r.Status).To(Equal(conformance.Pass), r.Rule+": "+r.Message)
	}
	var want []string
	for _, r := range conformance.Rules() {
		want = append(want, r.Name)
	}
	g.Expect(rules).To(ConsistOf(want))
}

// TestBrokenReleaseFails checks a copy of the local provider's release whose Deployment names its container
// "controller" instead of "manager" and runs a manager that reconciles paused LocalClusters: both rules
// fail.
func TestBrokenReleaseFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded management cluster")
	}
	g := NewWithT(t)
	repo := localProviderRepository(t)
	comps := filepath.Join(repo, "infrastructure-local", capstanrelease.DefaultVersion, componentsFile)
	data, err := os.ReadFile(comps)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse(data)
	g.Expect(err).NotTo(HaveOccurred())
	image := brokenImage
	var broken []byte
	edited := false
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			g.Expect(containers).To(HaveLen(1))
			c := containers[0].(map[string]any)
			g.Expect(c["name"]).To(Equal("manager"))
			c["name"], c["image"] = "controller", image+":v0.0.1"
			g.Expect(unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
			edited = true
		}
		doc, err := yaml.Marshal(obj.Object)
		g.Expect(err).NotTo(HaveOccurred())
		broken = append(append(broken, "---\n"...), doc...)
	}
	g.Expect(edited).To(BeTrue())
	g.Expect(os.WriteFile(comps, broken, 0o600)).To(Succeed())

	result, err := run(t, Options{Source: repo})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.Report.Passed()).To(BeFalse())
	failed := map[string]string{}
	for _, f := range result.Report.Failed() {
		failed[f.Rule] = f.Message
	}
	g.Expect(failed).To(And(HaveKey(conformance.RuleController), HaveKey(conformance.RuleInfraClusterPausing)))
}

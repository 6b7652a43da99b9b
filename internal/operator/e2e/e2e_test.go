package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	managementv1 "github.com/capstan-dev/capstan/api/management/v1alpha1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/repository/repositorytest"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/operator/operatortest"
	"github.com/capstan-dev/capstan/internal/release"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
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

// configMap returns the air-gapped ConfigMap of a release in the embedded cluster's local repository.
func configMap(t *testing.T, state embedded.State, ns, label, componentsFile string) *corev1.ConfigMap {
	t.Helper()
	dir := filepath.Join(state.RepositoryDir(), label, release.Version())
	meta, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	comps, err := os.ReadFile(filepath.Join(dir, componentsFile))
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: release.Version(), Labels: map[string]string{"provider-components": label}},
		Data:       map[string]string{"metadata": string(meta), "components": string(comps)},
	}
}

// provider is one of the providers the test installs: its object, namespace, label, components file and
// Deployment.
type provider struct {
	obj                               operatorv1.GenericProvider
	ns, label, components, deployment string
}

// waitProvider waits until p is installed at version and, when ready, Ready: its Deployments are
// available, so the local runtime runs their processes and they answer /readyz.
func waitProvider(t *testing.T, c client.Client, p operatorv1.GenericProvider, version string, ready bool) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(p), p)).To(Succeed())
		st := p.GetProviderStatus()
		g.Expect(st.InstalledVersion).To(HaveValue(Equal(version)), "conditions: %v", st.Conditions)
		g.Expect(meta.IsStatusConditionTrue(st.Conditions, operatorv1.ProviderInstalledCondition)).To(BeTrue(), "conditions: %v", st.Conditions)
		if ready {
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, operatorv1.ReadyCondition)).To(BeTrue(), "conditions: %v", st.Conditions)
		}
	}, 4*time.Minute, time.Second).Should(Succeed(), "%s %s/%s is not installed at %s", p.GetObjectKind().GroupVersionKind().Kind, p.GetNamespace(), p.GetName(), version)
}

// update changes p's spec, retrying on conflicts.
func update(t *testing.T, c client.Client, p operatorv1.GenericProvider, change func(*operatorv1.ProviderSpec)) {
	t.Helper()
	edit(t, c, p, func() { change(p.GetProviderSpec()) })
}

// edit changes obj, retrying on conflicts.
func edit(t *testing.T, c client.Client, obj client.Object, change func()) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(context.Background(), obj)
	}, time.Minute, time.Second).Should(Succeed())
}

// condition returns p's condition of type t, read afresh.
func condition(g Gomega, c client.Client, p operatorv1.GenericProvider, t string) *metav1.Condition {
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(p), p)).To(Succeed())
	cond := meta.FindStatusCondition(p.GetProviderStatus().Conditions, t)
	g.Expect(cond).NotTo(BeNil(), "no %s condition: %v", t, p.GetProviderStatus().Conditions)
	return cond
}

// notRunnable: a Deployment the local runtime does not run, as its image is not capstan's, says so.
func notRunnable(g Gomega, d *appsv1.Deployment) {
	g.Expect(d.Status.Conditions).To(ContainElement(And(HaveField("Type", appsv1.DeploymentAvailable),
		HaveField("Status", corev1.ConditionFalse), HaveField("Reason", "ImageNotRunnableLocally"))))
}

// processArgs returns the arguments of the capstan process that the local runtime runs for the Deployment
// ns/name, found by the kubeconfig the runtime gives it; an error unless exactly one runs.
func processArgs(state embedded.State, ns, name string) ([]string, error) {
	pids := procs.FindWithEnv("capstan", "KUBECONFIG="+filepath.Join(state.RuntimeDir(), ns, name, "kubeconfig"))
	if len(pids) != 1 {
		return nil, fmt.Errorf("%d capstan processes run for Deployment %s/%s: %v", len(pids), ns, name, pids)
	}
	// The flags' values hold no spaces.
	return strings.Fields(procs.Cmdline(pids[0]))[1:], nil
}

// flag returns the value of --name=value in args.
func flag(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// runs says whether the local runtime runs d's processes as d says: every replica of its current template
// started and ready (its /readyz answers), d Available.
func runs(d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration != d.Generation || st.Replicas != want || st.ReadyReplicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want {
		return fmt.Errorf("deployment %s/%s: generation %d observed %d, replicas %d: %d running, %d ready, %d updated, %d available",
			d.Namespace, d.Name, d.Generation, st.ObservedGeneration, want, st.Replicas, st.ReadyReplicas, st.UpdatedReplicas, st.AvailableReplicas)
	}
	for _, cond := range d.Status.Conditions {
		if cond.Type == appsv1.DeploymentAvailable && cond.Status != corev1.ConditionTrue {
			return fmt.Errorf("deployment %s/%s is not Available: %s", d.Namespace, d.Name, cond.Message)
		}
	}
	return nil
}

// watchDeployment reads a Deployment every 100 ms until the returned function is called, which returns the
// number of reads and what check said of them (each problem once, in order).
func watchDeployment(c client.Client, ns, name string, check func(*appsv1.Deployment) error) func() (int, []string) {
	var (
		mu       sync.Mutex
		samples  int
		problems []string
		last     string
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			d := &appsv1.Deployment{}
			err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d)
			if err == nil {
				err = check(d)
			}
			mu.Lock()
			samples++
			if err != nil && err.Error() != last {
				problems = append(problems, time.Now().Format("15:04:05.000")+" "+err.Error())
			}
			last = ""
			if err != nil {
				last = err.Error()
			}
			mu.Unlock()
		}
	}()
	return func() (int, []string) {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return samples, problems
	}
}

// e2eOperator gates the long parts of the test.
const e2eOperator = "CAPSTAN_E2E_OPERATOR"

func TestOperatorInTheEmbeddedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs capstan up --operator and a workload cluster")
	}
	g := NewWithT(t)
	ctx := context.Background()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "github.com/capstan-dev/capstan/cmd/capstan", "github.com/capstan-dev/capstan/cmd/clusterctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	capstan, clusterctl := filepath.Join(bin, "capstan"), filepath.Join(bin, "clusterctl")
	state := embedded.State{Dir: filepath.Join(t.TempDir(), "state")}
	run(t, capstan, "up", "--name", "operator-e2e", "--state-dir", state.Dir, "--detach", "--etcd-unsafe-no-fsync", "--operator")
	t.Cleanup(func() { _ = exec.Command(capstan, "down", "--name", "operator-e2e", "--state-dir", state.Dir).Run() })

	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig())
	g.Expect(err).NotTo(HaveOccurred())
	scheme, err := operator.NewScheme()
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// Air-gapped: the releases are ConfigMaps, the providers name them with a selector.
	core := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-system", Name: "cluster-api"}}
	local := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local"}}
	// The local provider's default flavor needs the kubeadm bootstrap and control plane providers.
	bootstrap := &operatorv1.BootstrapProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-kubeadm-bootstrap-system", Name: "kubeadm"}}
	controlPlane := &operatorv1.ControlPlaneProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-kubeadm-control-plane-system", Name: "kubeadm"}}
	providers := []provider{
		{core, "capi-system", "cluster-api", "core-components.yaml", "capi-controller-manager"},
		{local, "capl-system", "infrastructure-local", "infrastructure-components.yaml", "capl-controller-manager"},
		{bootstrap, "capi-kubeadm-bootstrap-system", "bootstrap-kubeadm", "bootstrap-components.yaml", "capi-kubeadm-bootstrap-controller-manager"},
		{controlPlane, "capi-kubeadm-control-plane-system", "control-plane-kubeadm", "control-plane-components.yaml", "capi-kubeadm-control-plane-controller-manager"},
	}
	for _, p := range providers {
		g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}}))).To(Succeed())
		g.Expect(c.Create(ctx, configMap(t, state, p.ns, p.label, p.components))).To(Succeed())
		spec := p.obj.GetProviderSpec()
		spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"provider-components": p.label}}}
	}
	// The CRDs are applied by capstan up --operator; create the providers once they are served. The kubeadm
	// control plane provider is installed by clusterctl below, then taken over.
	start := time.Now()
	g.Eventually(func() error { return c.Create(ctx, core) }, time.Minute, time.Second).Should(Succeed())
	for _, obj := range []client.Object{local, bootstrap} {
		g.Expect(c.Create(ctx, obj)).To(Succeed())
	}
	for _, p := range providers[:3] {
		waitProvider(t, c, p.obj, release.Version(), true)
	}
	t.Logf("the core, local and kubeadm bootstrap providers installed from ConfigMaps and Ready in %s", time.Since(start).Round(time.Second))

	// A provider that clusterctl init installed is taken over by creating its operator object, without
	// downtime: its Deployment is not rolled out again and stays available throughout.
	t.Setenv("KUBECONFIG", state.Kubeconfig())
	config := state.ClusterctlConfig()
	start = time.Now()
	run(t, clusterctl, "init", "--config", config, "--control-plane", "kubeadm", "--wait-providers")
	cp := providers[3]
	before := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: cp.ns, Name: cp.deployment}, before)).To(Succeed())
		g.Expect(runs(before)).To(Succeed())
	}, 2*time.Minute, time.Second).Should(Succeed())
	watch := watchDeployment(c, cp.ns, cp.deployment, func(d *appsv1.Deployment) error {
		if d.UID != before.UID || d.Generation != before.Generation {
			return fmt.Errorf("rolled out again: uid %s generation %d, was %s %d", d.UID, d.Generation, before.UID, before.Generation)
		}
		return runs(d)
	})
	g.Expect(c.Create(ctx, controlPlane)).To(Succeed())
	waitProvider(t, c, controlPlane, release.Version(), true)
	g.Expect(meta.FindStatusCondition(controlPlane.Status.Conditions, operatorv1.ProviderUpgradedCondition)).To(And(
		HaveField("Reason", operatorv1.TakenOverReason),
		HaveField("Message", "Took control-plane-kubeadm "+release.Version()+" over from clusterctl's installation")))
	// Watched a while longer: a rollout the take-over caused would show now.
	g.Consistently(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: cp.ns, Name: cp.deployment}, d)).To(Succeed())
		g.Expect(d.Generation).To(Equal(before.Generation))
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	samples, outages := watch()
	g.Expect(outages).To(BeEmpty(), "the Deployment was unavailable or rolled out while it was taken over (%d samples)", samples)
	g.Expect(samples).To(BeNumerically(">", 10))
	t.Logf("the kubeadm control plane provider installed by clusterctl init and taken over in %s, %d samples of its Deployment every 100ms, all available", time.Since(start).Round(time.Second), samples)

	// A workload cluster, provisioned by the operator-installed providers.
	start = time.Now()
	yaml := run(t, clusterctl, "generate", "cluster", "demo", "--config", config, "--infrastructure", "local",
		"--kubernetes-version", "v1.37.1", "--worker-machine-count", "1")
	objs, err := manifest.Parse([]byte(yaml))
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(c.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}
	demoRuns := func(g Gomega) {
		cluster := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "demo"}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		wcfg, err := workload.FromKubeconfigSecret(ctx, c, "default", "demo")
		g.Expect(err).NotTo(HaveOccurred())
		nodes, err := workload.ReadyNodes(ctx, wcfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(workload.Names(nodes)).To(HaveLen(2), "the control plane Machine's Node and the worker's")
	}
	g.Eventually(demoRuns, 4*time.Minute, 2*time.Second).Should(Succeed())
	t.Logf("the demo cluster provisioned in %s", time.Since(start).Round(time.Second))

	// clusterctl sees the operator-installed providers through the inventory.
	describe := run(t, clusterctl, "describe", "cluster", "demo", "--config", config)
	g.Expect(describe).To(ContainSubstring("Cluster/demo"))
	plan := run(t, clusterctl, "upgrade", "plan", "--config", config)
	g.Expect(plan).To(ContainSubstring("cluster-api"))
	g.Expect(plan).To(ContainSubstring("infrastructure-local"))
	g.Expect(plan).To(ContainSubstring(release.Version()))

	// Deleting the local provider while the cluster exists is refused at admission by the operator's
	// webhook (served with its self-managed certificates through the embedded cluster's Service), naming it.
	g.Eventually(func(g Gomega) {
		err := c.Delete(ctx, local)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused as forbidden, got: %v", err)
		g.Expect(err.Error()).To(ContainSubstring("InfrastructureProvider capl-system/local cannot be deleted while Clusters use it: default/demo (LocalCluster default/demo); delete them first"))
	}, time.Minute, time.Second).Should(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(local), local)).To(Succeed())
	g.Expect(local.DeletionTimestamp).To(BeNil(), "the provider is not marked for deletion")

	// The long parts: a contract upgrade with pause, every field of spec.manager and spec.deployment, the
	// proposal's objects. Each needs the one before.
	gate := func(t *testing.T) {
		t.Helper()
		if os.Getenv(e2eOperator) == "" {
			t.Skip("the long operator checks on the embedded cluster run with " + e2eOperator + "=1 (make test-e2e-operator)")
		}
	}
	// newContract is the version of the providers on the v1beta2 contract.
	const newContract = "v0.3.0"
	deployment := func(g Gomega, p provider) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: p.ns, Name: p.deployment}, d)).To(Succeed())
		return d
	}
	if !t.Run("a contract upgrade with pause: the paused providers' processes stop, and run again unpaused", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		for _, p := range providers {
			r := operatortest.ReleaseAt(t, p.label, newContract, "v1beta2")
			g.Expect(c.Create(ctx, operatortest.ConfigMap(t, p.ns, map[string]string{"provider-components": p.label}, r, true))).To(Succeed())
		}
		update(t, c, core, func(s *operatorv1.ProviderSpec) { s.Version = newContract })
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(core), core)).To(Succeed())
			cond := meta.FindStatusCondition(core.Status.Conditions, operatorv1.ProviderUpgradedCondition)
			g.Expect(cond).NotTo(BeNil(), "conditions: %v", core.Status.Conditions)
			g.Expect(cond.Reason).To(Equal(operatorv1.WaitingForProvidersPausedReason))
			g.Expect(cond.Message).To(Equal("Waiting to upgrade from the v1beta1 to the v1beta2 contract until the providers on the v1beta1 contract are paused: " +
				"BootstrapProvider capi-kubeadm-bootstrap-system/kubeadm, ControlPlaneProvider capi-kubeadm-control-plane-system/kubeadm, InfrastructureProvider capl-system/local; set spec.paused: true on them"))
		}, 2*time.Minute, time.Second).Should(Succeed())
		g.Expect(core.Status.InstalledVersion).To(HaveValue(Equal(release.Version())))

		// Paused, a provider's Deployment is at 0 replicas: the local runtime stops its process.
		for _, p := range providers[1:] {
			update(t, c, p.obj, func(s *operatorv1.ProviderSpec) { s.Paused = true })
		}
		for _, p := range providers[1:] {
			g.Eventually(func(g Gomega) {
				d := deployment(g, p)
				g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
				g.Expect(d.Annotations).To(HaveKeyWithValue(operatorv1.OriginalReplicasAnnotation, "1"))
				g.Expect(runs(d)).To(Succeed(), "no process runs")
			}, 2*time.Minute, time.Second).Should(Succeed())
		}
		t.Logf("the three providers paused and their processes stopped in %s", time.Since(start).Round(time.Second))

		// The core changes contract; the paused providers are upgraded to releases of the new one, and stay
		// stopped until they are unpaused.
		waitProvider(t, c, core, newContract, true)
		g.Expect(core.Status.Contract).To(HaveValue(Equal("v1beta2")))
		g.Expect(runs(deployment(g, providers[0]))).To(Succeed())
		for _, p := range providers[1:] {
			update(t, c, p.obj, func(s *operatorv1.ProviderSpec) { s.Version = newContract })
		}
		for _, p := range providers[1:] {
			waitProvider(t, c, p.obj, newContract, false)
			g.Expect(p.obj.GetProviderStatus().Contract).To(HaveValue(Equal("v1beta2")))
			d := deployment(g, p)
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
			g.Expect(d.Status.Replicas).To(BeEquivalentTo(0), "a paused provider's upgrade starts no process")
		}
		t.Logf("the core on the v1beta2 contract, the paused providers upgraded, in %s", time.Since(start).Round(time.Second))

		for _, p := range providers[1:] {
			update(t, c, p.obj, func(s *operatorv1.ProviderSpec) { s.Paused = false })
		}
		for _, p := range providers[1:] {
			waitProvider(t, c, p.obj, newContract, true)
			g.Eventually(func(g Gomega) {
				d := deployment(g, p)
				g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + newContract))
				g.Expect(runs(d)).To(Succeed())
			}, 2*time.Minute, time.Second).Should(Succeed())
		}
		// The workload cluster went through it.
		g.Eventually(demoRuns, 4*time.Minute, 2*time.Second).Should(Succeed())
		t.Logf("the contract upgrade with pause done in %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	// The proposal's kubeadm control plane provider needs the e2e's one gone, so the demo cluster first; the
	// core stops watching other namespaces than its own below.
	if !t.Run("the demo cluster deleted", func(t *testing.T) {
		gate(t)
		start := time.Now()
		g := NewWithT(t)
		g.Expect(c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo"}})).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "demo"}, &clusterv1.Cluster{}))
		}, 4*time.Minute, time.Second).Should(BeTrue())
		t.Logf("the demo cluster deleted in %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	if !t.Run("changes are upgrades: the configSecret's and the additional manifests' content and fetchConfig, each reported; what is no longer rendered is deleted; a downgrade across minors is refused", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		running := func(g Gomega) {
			d := deployment(g, providers[1])
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + newContract))
			g.Expect(runs(d)).To(Succeed())
		}
		// upgraded waits until the change is applied (check) and ProviderUpgraded says it as reason and message.
		upgraded := func(reason string, message gomegatypes.GomegaMatcher, check func(g Gomega)) {
			t.Helper()
			g.Eventually(func(g Gomega) {
				check(g)
				cond := condition(g, c, local, operatorv1.ProviderUpgradedCondition)
				g.Expect(cond.Reason).To(Equal(reason), "condition: %v", cond)
				g.Expect(cond.Message).To(message)
				g.Expect(local.Status.ObservedGeneration).To(Equal(local.Generation))
			}, 2*time.Minute, time.Second).Should(Succeed())
			waitProvider(t, c, local, newContract, true)
			running(g)
		}

		// Back to the previous minor: refused, and the provider stays as it is.
		update(t, c, local, func(s *operatorv1.ProviderSpec) { s.Version = release.Version() })
		g.Eventually(func(g Gomega) {
			cond := condition(g, c, local, operatorv1.PreflightCheckCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1.UnsupportedProviderDowngradeReason))
			g.Expect(cond.Message).To(Equal("Downgrading from " + newContract + " to " + release.Version() + " is not supported: a provider goes back to an older patch release of its minor version only; set spec.version to v0.3.x or later"))
		}, 2*time.Minute, time.Second).Should(Succeed())
		g.Consistently(func(g Gomega) {
			running(g)
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(local), local)).To(Succeed())
			g.Expect(local.Status.InstalledVersion).To(HaveValue(Equal(newContract)))
		}, 5*time.Second, time.Second).Should(Succeed())
		update(t, c, local, func(s *operatorv1.ProviderSpec) { s.Version = newContract })
		g.Eventually(func(g Gomega) {
			g.Expect(condition(g, c, local, operatorv1.PreflightCheckCondition).Status).To(Equal(metav1.ConditionTrue))
		}, 2*time.Minute, time.Second).Should(Succeed())

		// Variables from a configSecret, in additional manifests.
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local-variables"}, StringData: map[string]string{"TEAM": "blue"}}
		extras := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local-extras"}, Data: map[string]string{"manifests": operatortest.AdditionalManifests("capl-system", true)}}
		g.Expect(c.Create(ctx, secret)).To(Succeed())
		g.Expect(c.Create(ctx, extras)).To(Succeed())
		update(t, c, local, func(s *operatorv1.ProviderSpec) {
			s.ConfigSecret = &operatorv1.SecretReference{Name: secret.Name}
			s.AdditionalManifestsRef = &operatorv1.ConfigmapReference{Name: extras.Name}
		})
		extra := func(g Gomega, name string) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "capl-system", Name: name}, cm)).To(Succeed())
			return cm
		}
		upgraded(operatorv1.SpecChangedReason, And(HavePrefix("Applied "+newContract+" again as an upgrade: "), ContainSubstring("the spec changed")), func(g Gomega) {
			g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "blue"))
			g.Expect(extra(g, "extra-b").Labels).To(HaveKeyWithValue(clusterv1.ProviderNameLabel, "infrastructure-local"))
		})

		// The Secret's content changes: picked up at the provider's next reconcile, as an upgrade.
		edit(t, c, secret, func() { secret.Data["TEAM"] = []byte("green") })
		operatortest.Nudge(t, c, local)
		upgraded(operatorv1.ConfigSecretChangedReason, Equal("Applied "+newContract+" again as an upgrade: the content of the configSecret capl-system/local-variables changed"), func(g Gomega) {
			g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "green"))
		})

		// The additional manifests no longer have extra-b: it is deleted.
		edit(t, c, extras, func() {
			extras.Data["manifests"] = operatortest.AdditionalManifests("capl-system", false)
		})
		operatortest.Nudge(t, c, local)
		upgraded(operatorv1.SpecChangedReason, Equal("Applied "+newContract+" again as an upgrade: the additional manifests changed; deleted what it no longer has: ConfigMap capl-system/extra-b"), func(g Gomega) {
			err := c.Get(ctx, client.ObjectKey{Namespace: "capl-system", Name: "extra-b"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the object no longer rendered is deleted, got %v", err)
		})
		g.Expect(extra(g, "extra-a").Data).To(HaveKeyWithValue("team", "green"))

		// Another fetchConfig (here, the same ConfigMaps selected another way).
		update(t, c, local, func(s *operatorv1.ProviderSpec) {
			s.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "provider-components", Operator: metav1.LabelSelectorOpIn, Values: []string{"infrastructure-local"}}}}}
		})
		upgraded(operatorv1.FetchConfigChangedReason, Equal("Applied "+newContract+" again as an upgrade: spec.fetchConfig changed"), func(Gomega) {})
		t.Logf("the downgrade refused and the changes applied as upgrades in %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	if !t.Run("each capstan provider with every field of spec.manager and spec.deployment runs", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		byLabel := map[string]provider{}
		for _, p := range providers {
			byLabel[p.label] = p
		}
		for _, cp := range operatortest.CapstanProviders {
			p := byLabel[cp.Label]
			every := operatortest.EveryField(p.ns, newContract, cp.ServiceAccount, cp.Concurrency, cp.Webhooks)
			// Debug mode is turned on alone: no other field may change with it.
			every.Manager.Debug = false
			update(t, c, p.obj, func(s *operatorv1.ProviderSpec) { s.Manager, s.Deployment = every.Manager, every.Deployment })
			update(t, c, p.obj, func(s *operatorv1.ProviderSpec) { s.Manager.Debug = true })
		}
		for _, cp := range operatortest.CapstanProviders {
			p := byLabel[cp.Label]
			g.Eventually(func(g Gomega) {
				d := deployment(g, p)
				args := d.Spec.Template.Spec.Containers[0].Args
				g.Expect(args).To(ContainElements("--max-concurrent-reconciles=4", "--leader-election-id="+p.ns+"/every-field-lease",
					"--graceful-shutdown-timeout=20s", "--v=5", "--profiler-address=localhost:6060", "--namespace="+p.ns,
					"--sync-period=420s", "--kube-api-qps=50", "--kube-api-burst=80"))
				g.Expect(args).NotTo(ContainElement("--namespace=ignored"), "the namespace key of spec.deployment.containers[].args is ignored")
				if cp.Webhooks {
					g.Expect(args).To(ContainElement("--webhook-host=127.0.0.1"))
				}
				g.Expect(runs(d)).To(Succeed())
				// The process runs with those flags: it leads through the Lease they name.
				lease := &coordinationv1.Lease{}
				g.Expect(c.Get(ctx, types.NamespacedName{Namespace: p.ns, Name: "every-field-lease"}, lease)).To(Succeed())
				g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
				g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(20)))
			}, 3*time.Minute, time.Second).Should(Succeed(), "%s", cp.Label)
			waitProvider(t, c, p.obj, newContract, true)
		}
		t.Logf("the four providers with every field run in %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	if !t.Run("debug mode: each manager runs at verbosity 5 with its profiler, and nothing else changes meanwhile; image overrides by parts; the namespace args key ignored", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		// The processes the local runtime runs: their arguments, their profiler, their logs.
		for _, p := range providers {
			g.Eventually(func(g Gomega) {
				args, err := processArgs(state, p.ns, p.deployment)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(args).To(ContainElement("--v=5"))
				// The runtime gives the profiler a free loopback port of its own (the Deployment says localhost:6060).
				profiler := flag(args, "--profiler-address")
				g.Expect(profiler).To(HavePrefix("127.0.0.1:"))
				resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + profiler + "/debug/pprof/")
				g.Expect(err).NotTo(HaveOccurred())
				_ = resp.Body.Close()
				g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "the profiler answers")
				// Client-go logs the renewals of the Lease at level 5 only.
				logs, err := filepath.Glob(filepath.Join(state.RuntimeDir(), p.ns, p.deployment, "*.log"))
				g.Expect(err).NotTo(HaveOccurred())
				var all []byte
				for _, l := range logs {
					b, err := os.ReadFile(l)
					g.Expect(err).NotTo(HaveOccurred())
					all = append(all, b...)
				}
				g.Expect(string(all)).To(ContainSubstring("Successfully renewed lease"), "the manager logs at level 5")
			}, 2*time.Minute, time.Second).Should(Succeed(), "%s", p.label)
		}

		// While debug mode is on, nothing else may change; it is turned on alone. The operator's webhook
		// refuses the changes (asked as dry runs: the webhook fails open while the operator does not answer).
		refused := func(change func(*operatorv1.ProviderSpec), message string) {
			t.Helper()
			g.Eventually(func(g Gomega) {
				p := &operatorv1.InfrastructureProvider{}
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(local), p)).To(Succeed())
				change(p.GetProviderSpec())
				err := c.Update(ctx, p, client.DryRunAll)
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring(message))
			}, time.Minute, time.Second).Should(Succeed())
		}
		refused(func(s *operatorv1.ProviderSpec) { s.Manager.Verbosity = 3 },
			"the provider is in debug mode (spec.manager.debug: true): no other field may change while it is; set spec.manager.debug to false first, alone")
		update(t, c, local, func(s *operatorv1.ProviderSpec) { s.Manager.Debug = false })
		refused(func(s *operatorv1.ProviderSpec) { s.Manager.Debug, s.Manager.Verbosity = true, 3 },
			"debug mode (spec.manager.debug: true) is turned on alone: no other field may change with it; make the other changes first, then set spec.manager.debug to true alone")
		g.Eventually(func(g Gomega) {
			args, err := processArgs(state, "capl-system", "capl-controller-manager")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(args).To(ContainElement("--v=2"), "debug mode off, the manager runs at spec.manager.verbosity again")
		}, 2*time.Minute, time.Second).Should(Succeed())
		t.Logf("debug mode checked on the four providers' processes and turned off on the local provider in %s", time.Since(start).Round(time.Second))

		// Every part of the image replaced: the local runtime runs capstan's images only, and stops the
		// process; the provider is installed, not Ready, and says why.
		update(t, c, local, func(s *operatorv1.ProviderSpec) {
			s.Deployment.Containers[0].Image = &operatorv1.ImageMeta{Repository: "registry.example/mirror", Name: "capl-manager", Tag: "v0.3.0-custom"}
		})
		g.Eventually(func(g Gomega) {
			d := deployment(g, providers[1])
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/mirror/capl-manager:v0.3.0-custom"))
			notRunnable(g, d)
			g.Expect(d.Status.Replicas).To(BeZero(), "no process runs")
			cond := condition(g, c, local, operatorv1.ReadyCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1.DeploymentUnavailableReason))
			g.Expect(cond.Message).To(Equal("Deployment capl-controller-manager is not available (ImageNotRunnableLocally: container manager uses image registry.example/mirror/capl-manager:v0.3.0-custom: " +
				"the local runtime of the embedded management cluster only runs capstan's own images (" + release.Image + "))"))
		}, 2*time.Minute, time.Second).Should(Succeed())
		_, err := processArgs(state, "capl-system", "capl-controller-manager")
		g.Expect(err).To(MatchError(ContainSubstring("0 capstan processes run")))

		// The tag alone: capstan's image, which the runtime runs (with the capstan executable of capstan
		// up, whatever the tag). The namespace key of the container's args is ignored: with no
		// spec.manager.cacheNamespace, the manager has no --namespace and watches every namespace.
		update(t, c, local, func(s *operatorv1.ProviderSpec) {
			s.Deployment.Containers[0].Image = &operatorv1.ImageMeta{Tag: "v0.3.0-custom"}
			s.Manager.CacheNamespace = ""
			s.Deployment.Containers[0].Args["--namespace"] = "capl-elsewhere"
		})
		g.Eventually(func(g Gomega) {
			d := deployment(g, providers[1])
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(release.Image + ":v0.3.0-custom"))
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement(HavePrefix("--namespace")))
			g.Expect(runs(d)).To(Succeed())
			args, err := processArgs(state, "capl-system", "capl-controller-manager")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(args).NotTo(ContainElement(HavePrefix("--namespace")))
		}, 2*time.Minute, time.Second).Should(Succeed())
		waitProvider(t, c, local, newContract, true)
		t.Logf("debug mode and the image overrides checked in %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	// GitHub, emulated on loopback; the operator's process reaches it through a proxy.
	gh := repositorytest.NewServer(t)
	proxy := newGitHubProxy(t, gh.Client().Transport)
	// operatorEnvironment are variables of the operator's environment; the components use them, unless
	// a provider's configSecret has them too.
	operatorEnvironment := map[string]string{"GCP_REGION": "us-central1", "GCP_PROJECT": "project-of-the-operator"}
	if !t.Run("the operator's process reaches the emulated GitHub through a proxy, with variables in its environment", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-operator-system", Name: "capi-operator-controller-manager"}}
		edit(t, c, op, func() {
			env := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: proxy.URL}, {Name: "SSL_CERT_FILE", Value: proxy.CAFile}}
			for _, k := range slices.Sorted(maps.Keys(operatorEnvironment)) {
				env = append(env, corev1.EnvVar{Name: k, Value: operatorEnvironment[k]})
			}
			op.Spec.Template.Spec.Containers[0].Env = append(op.Spec.Template.Spec.Containers[0].Env, env...)
		})
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(op), op)).To(Succeed())
			g.Expect(runs(op)).To(Succeed())
		}, 2*time.Minute, time.Second).Should(Succeed())
		t.Logf("the operator runs again with its new environment after %s", time.Since(start).Round(time.Second))
	}) {
		return
	}

	if !t.Run("each complete provider object of the proposal, applied server-side, installs its provider from an emulated GitHub", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		examples := operatortest.ProposalExamples(t)
		g.Expect(examples).To(HaveLen(6), "the proposal has six complete provider objects")

		operatortest.PublishProposalReleases(t, gh, "v1beta2")

		// The e2e's kubeadm control plane provider makes way for the proposal's (the deletion webhook
		// answers once the operator runs again).
		g.Eventually(func() error { return c.Delete(ctx, controlPlane) }, time.Minute, time.Second).Should(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(controlPlane), controlPlane))
		}, 2*time.Minute, time.Second).Should(BeTrue())

		// What the examples refer to: their namespaces, variables Secrets and, air-gapped, ConfigMaps.
		for ns, secret := range map[string]string{"capa-system": "aws-variables", "capi-kubeadm-control-plane-system": "capi-variables", "capz-system": "azure-variables", "capv-system": "vsphere-variables"} {
			g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
			g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secret}, StringData: map[string]string{"REGION": "region-of-" + ns}})).To(Succeed())
		}
		g.Expect(c.Create(ctx, operatortest.ConfigMap(t, "capz-system", map[string]string{"provider-components": "azure"}, operatortest.ProposalRelease(t, "azure", "v0.4.9", "capz-system", "capz", "v1beta2"), false))).To(Succeed())

		get := func(g Gomega, ns, name string) *appsv1.Deployment {
			d := &appsv1.Deployment{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
			return d
		}
		checks := []struct {
			runnable bool
			check    func(g Gomega, ns string)
		}{
			// 1. aws with controller flags: manager.metricsAddress, syncPeriod in seconds, args as numbers.
			{false, func(g Gomega, ns string) {
				d := get(g, ns, "capa-controller-manager")
				g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--metrics-bind-addr=:8181", "--sync-period=660s", "--awscluster-concurrency=12", "--awsmachine-concurrency=11"))
				notRunnable(g, d)
				cm := &corev1.ConfigMap{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
				g.Expect(cm.Data).To(HaveKeyWithValue("region", "region-of-capa-system"), "variables come from secretName")
			}},
			// 2. aws with another image: the built-in source of its name.
			{false, func(g Gomega, ns string) {
				d := get(g, ns, "capa-controller-manager")
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("gcr.io/myregistry/capa-controller:v0.6.0-foo"))
				notRunnable(g, d)
			}},
			// 3. the kubeadm control plane provider with resource limits: capstan's own, from its GitHub
			// release, run by the local runtime.
			{true, func(g Gomega, ns string) {
				d := get(g, ns, "capi-kubeadm-control-plane-controller-manager")
				ctr := d.Spec.Template.Spec.Containers[0]
				g.Expect(ctr.Resources.Limits).To(HaveKeyWithValue(corev1.ResourceMemory, resource.MustParse("30Mi")))
				g.Expect(ctr.Image).To(HaveSuffix(":v0.3.10"))
				g.Expect(runs(d)).To(Succeed())
			}},
			// 4. myazure from another repository.
			{false, func(g Gomega, ns string) {
				g.Expect(get(g, ns, "myazure-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("myazure-controller:v0.4.9"))
			}},
			// 5. vsphere by its name only.
			{false, func(g Gomega, ns string) {
				g.Expect(get(g, ns, "capv-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("vsphere-controller:v0.4.9"))
			}},
			// 6. azure, air-gapped, from the ConfigMaps its selector names.
			{false, func(g Gomega, ns string) {
				g.Expect(get(g, ns, "capz-controller-manager").Spec.Template.Spec.Containers[0].Image).To(HaveSuffix("azure-controller:v0.4.9"))
			}},
		}
		for i, example := range examples {
			kind, ns, name := example.GetKind(), example.GetNamespace(), example.GetName()
			g.Expect(c.Apply(ctx, client.ApplyConfigurationFromUnstructured(example.DeepCopy()), client.FieldOwner("kubectl"))).To(Succeed(), "example %d applied server-side as written", i+1)
			in := &unstructured.Unstructured{}
			in.SetGroupVersionKind(example.GroupVersionKind())
			g.Eventually(func(g Gomega) {
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(example), in)).To(Succeed())
				conditions, _, _ := unstructured.NestedSlice(in.Object, "status", "conditions")
				g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", managementv1.TranslatedCondition), HaveKeyWithValue("status", "True"))), "conditions: %v", conditions)
				g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", operatorv1.ProviderInstalledCondition), HaveKeyWithValue("status", "True"))), "conditions: %v", conditions)
				if checks[i].runnable {
					g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", operatorv1.ReadyCondition), HaveKeyWithValue("status", "True"))), "conditions: %v", conditions)
				}
				installed, _, _ := unstructured.NestedString(in.Object, "status", "installedVersion")
				version, _, _ := unstructured.NestedString(example.Object, "spec", "version")
				g.Expect(installed).To(Equal(version))
				checks[i].check(g, ns)
			}, 3*time.Minute, time.Second).Should(Succeed(), "example %d: %s %s/%s", i+1, kind, ns, name)
			// The next example is another provider of the same name: this one goes first.
			if i == 0 {
				g.Eventually(func() error { return c.Delete(ctx, in) }, time.Minute, time.Second).Should(Succeed())
				g.Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(in), in)) }, 2*time.Minute, time.Second).Should(BeTrue())
			}
			t.Logf("example %d (%s %s/%s) installed after %s", i+1, kind, ns, name, time.Since(start).Round(time.Second))
		}
		g.Expect(gh.Count("")).To(BeNumerically(">", 0), "the releases came from the emulated GitHub")
	}) {
		return
	}

	t.Run("a provider with no fetchConfig from its built-in source, a private GitHub repository, with the token and variables of its configSecret and of the operator's environment, the Secret winning", func(t *testing.T) {
		gate(t)
		g := NewWithT(t)
		start := time.Now()
		// clusterctl's built-in gcp provider, whose repository is private here: only the token opens it.
		const version, token = "v1.10.0", "token-of-the-gcp-repository"
		settings := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: capg-settings, namespace: capg-system}\ndata: {region: \"${GCP_REGION}\", project: \"${GCP_PROJECT}\"}"
		image := "registry.k8s.io/cluster-api-gcp/cluster-api-gcp-controller:" + version
		rel := operatortest.FakeRelease(t, "gcp", clusterctlv1.InfrastructureProviderType, version, "v1beta2", operatortest.FakeComponents("capg-system", "capg", image, settings))
		gh.AddRelease("kubernetes-sigs", "cluster-api-provider-gcp", version, rel.Files)
		gh.SetPrivate("kubernetes-sigs", "cluster-api-provider-gcp")
		gh.SetToken(token)

		g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "capg-system"}}))).To(Succeed())
		g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "capg-system", Name: "gcp-variables"},
			StringData: map[string]string{"GITHUB_TOKEN": token, "GCP_REGION": "europe-west4"}})).To(Succeed())
		gcp := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capg-system", Name: "gcp"}}
		gcp.Spec.Version = version
		gcp.Spec.ConfigSecret = &operatorv1.SecretReference{Name: "gcp-variables"}
		g.Expect(c.Create(ctx, gcp)).To(Succeed())

		waitProvider(t, c, gcp, version, false)
		cm := &corev1.ConfigMap{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "capg-system", Name: "capg-settings"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(Equal(map[string]string{"region": "europe-west4", "project": operatorEnvironment["GCP_PROJECT"]}),
			"GCP_REGION from the configSecret wins over the operator's environment; GCP_PROJECT comes from the environment")
		// Installed, but the local runtime does not run gcp's image: the provider says so.
		g.Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "capg-system", Name: "capg-controller-manager"}, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
			notRunnable(g, d)
			cond := condition(g, c, gcp, operatorv1.ReadyCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1.DeploymentUnavailableReason))
			g.Expect(cond.Message).To(HavePrefix("Deployment capg-controller-manager is not available (ImageNotRunnableLocally: "))
		}, 2*time.Minute, time.Second).Should(Succeed())
		g.Expect(gh.Count("api.github.com/repos/kubernetes-sigs/cluster-api-provider-gcp/")).To(BeNumerically(">", 0), "the release came from the emulated GitHub's API, with the token")
		t.Logf("the gcp provider installed from its private built-in repository in %s", time.Since(start).Round(time.Second))
	})
}

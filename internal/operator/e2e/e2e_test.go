package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	operatorv1 "github.com/capstan-dev/capstan/api/operator/v1alpha2"
	"github.com/capstan-dev/capstan/internal/clusterctl/manifest"
	"github.com/capstan-dev/capstan/internal/embedded"
	"github.com/capstan-dev/capstan/internal/operator"
	"github.com/capstan-dev/capstan/internal/release"
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
	type provider struct {
		obj                   operatorv1.GenericProvider
		ns, label, components string
	}
	core := &operatorv1.CoreProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-system", Name: "cluster-api"}}
	local := &operatorv1.InfrastructureProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capl-system", Name: "local"}}
	// The local provider's default flavor needs the kubeadm bootstrap and control plane providers.
	bootstrap := &operatorv1.BootstrapProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-kubeadm-bootstrap-system", Name: "kubeadm"}}
	controlPlane := &operatorv1.ControlPlaneProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-kubeadm-control-plane-system", Name: "kubeadm"}}
	providers := []provider{
		{core, "capi-system", "cluster-api", "core-components.yaml"},
		{local, "capl-system", "infrastructure-local", "infrastructure-components.yaml"},
		{bootstrap, "capi-kubeadm-bootstrap-system", "bootstrap-kubeadm", "bootstrap-components.yaml"},
		{controlPlane, "capi-kubeadm-control-plane-system", "control-plane-kubeadm", "control-plane-components.yaml"},
	}
	for _, p := range providers {
		g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}}))).To(Succeed())
		g.Expect(c.Create(ctx, configMap(t, state, p.ns, p.label, p.components))).To(Succeed())
		spec := p.obj.GetProviderSpec()
		spec.FetchConfig = &operatorv1.FetchConfiguration{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"provider-components": p.label}}}
	}
	// The CRDs are applied by capstan up --operator; create the providers once they are served.
	g.Eventually(func() error { return c.Create(ctx, core) }, time.Minute, time.Second).Should(Succeed())
	for _, obj := range []client.Object{local, bootstrap, controlPlane} {
		g.Expect(c.Create(ctx, obj)).To(Succeed())
	}
	for _, p := range providers {
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(p.obj), p.obj)).To(Succeed())
			st := p.obj.GetProviderStatus()
			g.Expect(st.InstalledVersion).To(HaveValue(Equal(release.Version())), "conditions: %v", st.Conditions)
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, operatorv1.ReadyCondition)).To(BeTrue(), "conditions: %v", st.Conditions)
		}, 3*time.Minute, time.Second).Should(Succeed(), "%s is not installed and Ready", p.label)
	}

	// A workload cluster, provisioned by the operator-installed providers.
	t.Setenv("KUBECONFIG", state.Kubeconfig())
	config := state.ClusterctlConfig()
	yaml := run(t, clusterctl, "generate", "cluster", "demo", "--config", config, "--infrastructure", "local",
		"--kubernetes-version", "v1.37.1", "--worker-machine-count", "1")
	objs, err := manifest.Parse([]byte(yaml))
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(c.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}
	g.Eventually(func(g Gomega) {
		cluster := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "demo"}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		wcfg, err := workload.FromKubeconfigSecret(ctx, c, "default", "demo")
		g.Expect(err).NotTo(HaveOccurred())
		nodes, err := workload.ReadyNodes(ctx, wcfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(workload.Names(nodes)).To(HaveLen(2), "the control plane Machine's Node and the worker's")
	}, 4*time.Minute, 2*time.Second).Should(Succeed())

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
}

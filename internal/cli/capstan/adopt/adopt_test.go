package adopt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/cli/capstan/adopt"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/providers/local/backend/memory"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

const (
	wait     = 3 * time.Minute
	interval = 250 * time.Millisecond
)

// TestAdoptRefusesWhatItCannotMove checks adopt's refusals, which change nothing. It runs first, on a
// management cluster without providers.
func TestAdoptRefusesWhatItCannotMove(t *testing.T) {
	g := NewWithT(t)
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	kc := env.KubeconfigFile(t, "")
	runAdopt := func(args ...string) clusterctltest.Result {
		t.Helper()
		args = append([]string{"--config", repo.Config, "--kubeconfig", kc}, args...)
		return clusterctltest.RunMain(t, args, clusterctltest.Options{Env: repo.Env(), Cluster: clusterctltest.ManagementCluster(kc)}, adoptMain)
	}
	res := runAdopt()
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(ContainSubstring("the management cluster has none of the providers adopt moves"))

	res = runAdopt("--core", "cluster-api:v0.2.0")
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(ContainSubstring("cluster-api is not installed in the management cluster"))

	res = runAdopt("-b", "fixture:v0.1.0")
	g.Expect(res.Code).To(Equal(1))
	g.Expect(res.Stderr).To(ContainSubstring("bootstrap-fixture is not one of the providers adopt moves"))

	list := &clusterctlv1.ProviderList{}
	g.Expect(env.Client.List(t.Context(), list)).To(Succeed())
	g.Expect(list.Items).To(BeEmpty())
}

// upstreamVersion stands for the upstream Cluster API release the management cluster is handed back to
// and taken over from.
const upstreamVersion = "v1.14.0"

// TestAdoptHandsBackAndTakesOver runs a workload cluster (one KubeadmControlPlane Machine, one worker, on
// the memory backend) with capstan's releases, hands the management cluster to a stand-in of upstream
// Cluster API v1.14.0 (its CRDs are upstream's, storing v1beta2; its Deployments, which do not run, are
// upstream's images; cert-manager serves its webhooks) and takes it over again with capstan's newest
// release: each time every object is kept and moved to the new storage version, the inventory and the
// components are the new release's. Afterwards capstan's controllers replace no Machine, and the cluster
// still scales and upgrades.
func TestAdoptHandsBackAndTakesOver(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	upstreamConfig := writeUpstreamRepository(t, repo)
	kc := env.KubeconfigFile(t, "")
	run := func(args ...string) clusterctltest.Result {
		t.Helper()
		return repo.Run(t, kc, args...)
	}
	runAdopt := func(args ...string) clusterctltest.Result {
		t.Helper()
		args = append(args, "--kubeconfig", kc, "--wait-provider-timeout", "60")
		return clusterctltest.RunMain(t, args, clusterctltest.Options{Env: repo.Env(), Cluster: clusterctltest.ManagementCluster(kc)}, adoptMain)
	}
	playTheDeploymentsAndWebhooks(t)

	res := run("init", "--core", "cluster-api:v0.1.0", "-b", "kubeadm:v0.1.0", "-c", "kubeadm:v0.1.0", "-i", "local:v0.1.0")
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	backend := memory.New(memory.Options{StartupDelay: 100 * time.Millisecond, StartupJitter: 100 * time.Millisecond})
	backendCtx, stopBackend := context.WithCancel(context.Background())
	backendDone := make(chan error, 1)
	go func() { backendDone <- backend.Start(backendCtx) }()
	t.Cleanup(func() {
		stopBackend()
		if err := <-backendDone; err != nil {
			t.Errorf("memory backend: %v", err)
		}
	})
	stopCapstan := startControllers(t, backend)

	ns := env.NewNamespace(t)
	for _, o := range stack.LocalTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "adopted", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.36.3",
		"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "1",
	}) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopted"}})
	})
	clusterKey := client.ObjectKey{Namespace: ns, Name: "adopted"}
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, clusterKey, c)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(c, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", c.Status.V1Beta2)
		g.Expect(runningMachines(g, ns)).To(HaveLen(2))
	}, wait, interval).Should(Succeed())
	machines := runningMachines(g, ns)
	objects := objectUIDs(g, ns)
	stopCapstan()

	t.Log("handing the management cluster back to upstream keeps every object, stored as v1beta2")
	res = runAdopt("--config", upstreamConfig, "--core", "cluster-api:"+upstreamVersion, "-b", "kubeadm:"+upstreamVersion, "-c", "kubeadm:"+upstreamVersion)
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	expectProviders(g, upstreamVersion)
	expectStored(g, "v1beta2")
	g.Expect(objectUIDs(g, ns)).To(Equal(objects))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "capi-system", Name: "capi-serving-cert"}, certificate())).To(Succeed())
	expectImage(g, "registry.k8s.io/cluster-api/cluster-api-controller:"+upstreamVersion)
	// clusterctl describes a cluster whose objects are stored as v1beta2.
	res = run("describe", "cluster", "adopted", "-n", ns)
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	g.Expect(res.Stdout).To(ContainSubstring("Cluster/adopted"))
	g.Expect(res.Stdout).To(ContainSubstring("KubeadmControlPlane/adopted-control-plane"))

	t.Log("taking it over with capstan's newest release keeps every object, stored as v1beta1")
	res = runAdopt("--config", repo.Config)
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	expectProviders(g, clusterctltest.ReleaseV2)
	expectStored(g, "v1beta1")
	g.Expect(objectUIDs(g, ns)).To(Equal(objects))
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: "capi-system", Name: "capi-serving-cert"}, certificate())
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "upstream's Certificate is removed with its components: %v", err)
	expectImage(g, "ghcr.io/capstan-dev/capstan:"+clusterctltest.ReleaseV2)

	t.Log("capstan's controllers replace no Machine; the cluster scales and upgrades")
	startControllers(t, backend)
	g.Consistently(func(g Gomega) {
		g.Expect(runningMachines(g, ns)).To(Equal(machines))
	}, 10*time.Second, interval).Should(Succeed())
	g.Eventually(func() error {
		md := &clusterv1.MachineDeployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "adopted-md-0"}, md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](2)
		return env.Client.Update(ctx, md)
	}, time.Minute, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(runningMachines(g, ns)).To(HaveLen(3))
	}, wait, interval).Should(Succeed())
	g.Eventually(func() error {
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "adopted-control-plane"}, kcp); err != nil {
			return err
		}
		kcp.Spec.Version = "v1.37.1"
		return env.Client.Update(ctx, kcp)
	}, time.Minute, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineControlPlaneLabel})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		g.Expect(list.Items[0].Spec.Version).To(HaveValue(Equal("v1.37.1")))
		g.Expect(list.Items[0].Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
	}, wait, interval).Should(Succeed())
}

// adoptMain runs `capstan adopt` as the capstan binary does.
func adoptMain(ctx context.Context, args []string, streams iostreams.Streams, deps *clusterctlcli.Deps) int {
	cmd := adopt.NewCommand(streams, deps)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(streams.ErrOut, "Error:", err)
		return 1
	}
	return 0
}

// playTheDeploymentsAndWebhooks plays, until the test ends, what the test API server lacks: it points the
// conversion webhooks of the CRDs clusterctl installs (a Service, capstan's or upstream's) at the
// harness's converter, then marks every Deployment available, in that order, as a provider's Deployment is
// available only once its conversion webhook answers.
func playTheDeploymentsAndWebhooks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := env.ConvertServiceWebhooks(ctx); err == nil {
				clusterctltest.MarkAvailable(ctx, env.Client)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// startControllers runs capstan's controllers (the core, kubeadm and local providers) as their Deployments
// would, and returns what stops them (also called when the test ends).
func startControllers(t *testing.T, backend *memory.Backend) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := stack.Start(ctx, env.Config, stack.Options{Local: true, Kubeadm: true, LocalBackend: backend})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := s.Wait(); err != nil {
			t.Errorf("controllers: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// runningMachines returns the names and UIDs of the namespace's Machines, each of which must be Running.
func runningMachines(g Gomega, ns string) map[string]types.UID {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]types.UID{}
	for _, m := range list.Items {
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		out[m.Name] = m.UID
	}
	return out
}

// objectUIDs returns the UIDs of the namespace's Cluster API objects, by kind and name.
func objectUIDs(g Gomega, ns string) map[string]types.UID {
	out := map[string]types.UID{}
	for _, list := range []client.ObjectList{
		&clusterv1.ClusterList{}, &clusterv1.MachineList{}, &clusterv1.MachineSetList{}, &clusterv1.MachineDeploymentList{},
		&controlplanev1.KubeadmControlPlaneList{}, &infrav1.LocalClusterList{}, &infrav1.LocalMachineList{},
	} {
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		items, err := meta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			o, err := meta.Accessor(item)
			g.Expect(err).NotTo(HaveOccurred())
			out[fmt.Sprintf("%T/%s", list, o.GetName())] = o.GetUID()
		}
	}
	return out
}

// expectProviders expects the inventory to record the core and kubeadm providers at version.
func expectProviders(g Gomega, version string) {
	list := &clusterctlv1.ProviderList{}
	g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
	got := map[string]string{}
	for _, p := range list.Items {
		got[p.ManifestLabel()] = p.Version
		g.Expect(p.Annotations).NotTo(HaveKey("clusterctl.cluster.x-k8s.io/upgrade-to"))
	}
	g.Expect(got).To(Equal(map[string]string{
		"cluster-api": version, "bootstrap-kubeadm": version, "control-plane-kubeadm": version, "infrastructure-local": clusterctltest.ReleaseV1,
	}))
}

// expectStored expects the core and kubeadm CRDs to store version, and every object to be stored in it.
func expectStored(g Gomega, version string) {
	for _, name := range []string{"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinedeployments.cluster.x-k8s.io",
		"kubeadmconfigs.bootstrap.cluster.x-k8s.io", "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd)).To(Succeed())
		i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Storage })
		g.Expect(crd.Spec.Versions[i].Name).To(Equal(version), name)
		g.Expect(crd.Status.StoredVersions).To(Equal([]string{version}), name)
	}
}

// expectImage expects the core provider's Deployment to run image.
func expectImage(g Gomega, image string) {
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "capi-system", Name: "capi-controller-manager"}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
}

func certificate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("cert-manager.io/v1")
	u.SetKind("Certificate")
	return u
}

// writeUpstreamRepository writes a repository with a stand-in of upstream Cluster API's upstreamVersion
// release of the core and kubeadm providers, built from capstan's first release as upstream's is built:
// the CRDs are upstream v1.14.0's (storing v1beta2; conversion by the provider's webhook Service, whose
// CA cert-manager injects), the Deployments run upstream's images, the webhooks' certificate is a
// cert-manager Certificate signed by an Issuer, and the metadata maps v1.14 to the v1beta2 contract. It
// returns a clusterctl configuration that names it, and capstan's repository for the local provider.
func writeUpstreamRepository(t *testing.T, repo clusterctltest.ManagementRepository) string {
	t.Helper()
	dir := t.TempDir()
	crdDir := filepath.Join("..", "..", "..", "test", "compat", "testdata", "upstream-v1.14", "crds")
	for _, p := range []struct{ label, file, namespace, image string }{
		{"cluster-api", "core-components.yaml", "capi-system", "cluster-api-controller"},
		{"bootstrap-kubeadm", "bootstrap-components.yaml", "capi-kubeadm-bootstrap-system", "kubeadm-bootstrap-controller"},
		{"control-plane-kubeadm", "control-plane-components.yaml", "capi-kubeadm-control-plane-system", "kubeadm-control-plane-controller"},
	} {
		data, err := os.ReadFile(filepath.Join(repo.Path, p.label, clusterctltest.ReleaseV1, p.file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := manifest.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		add := func(obj map[string]any) {
			out, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(out))
		}
		for _, obj := range objs {
			switch obj.GetKind() {
			case "CustomResourceDefinition":
				plural, group, _ := strings.Cut(obj.GetName(), ".")
				upstream, err := os.ReadFile(filepath.Join(crdDir, group+"_"+plural+".yaml"))
				if err != nil {
					t.Fatal(err)
				}
				crd := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(upstream, &crd.Object); err != nil {
					t.Fatal(err)
				}
				crd.SetLabels(obj.GetLabels())
				crd.SetAnnotations(map[string]string{"cert-manager.io/inject-ca-from": p.namespace + "/" + servingCert(p.label)})
				if conversion, ok, _ := unstructured.NestedMap(obj.Object, "spec", "conversion"); ok {
					_ = unstructured.SetNestedMap(crd.Object, conversion, "spec", "conversion")
				}
				add(crd.Object)
			case "Deployment":
				containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = "registry.k8s.io/cluster-api/" + p.image + ":" + upstreamVersion
				_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
				add(obj.Object)
			default:
				add(obj.Object)
			}
		}
		prefix := strings.TrimSuffix(servingCert(p.label), "serving-cert")
		add(map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
			"metadata": map[string]any{"name": prefix + "selfsigned-issuer", "namespace": p.namespace}, "spec": map[string]any{"selfSigned": map[string]any{}}})
		add(map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
			"metadata": map[string]any{"name": servingCert(p.label), "namespace": p.namespace},
			"spec": map[string]any{"secretName": prefix + "webhook-service-cert", "issuerRef": map[string]any{"kind": "Issuer", "name": prefix + "selfsigned-issuer"},
				"dnsNames": []any{prefix + "webhook-service." + p.namespace + ".svc"}}})
		release := filepath.Join(dir, p.label, upstreamVersion)
		if err := os.MkdirAll(release, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(release, p.file), []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		metadata := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 14\n  contract: v1beta2\n"
		if err := os.WriteFile(filepath.Join(release, "metadata.yaml"), []byte(metadata), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`providers:
- {name: cluster-api, type: CoreProvider, url: "%[1]s/cluster-api/latest/core-components.yaml"}
- {name: kubeadm, type: BootstrapProvider, url: "%[1]s/bootstrap-kubeadm/latest/bootstrap-components.yaml"}
- {name: kubeadm, type: ControlPlaneProvider, url: "%[1]s/control-plane-kubeadm/latest/control-plane-components.yaml"}
- {name: local, type: InfrastructureProvider, url: "%[2]s/infrastructure-local/latest/infrastructure-components.yaml"}
cert-manager:
  url: "%[2]s/cert-manager/latest/cert-manager.yaml"
  timeout: 20s
`, dir, repo.Path)
	path := filepath.Join(t.TempDir(), "upstream.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// servingCert names upstream's webhook certificate of a provider: capi-serving-cert,
// capi-kubeadm-bootstrap-serving-cert, capi-kubeadm-control-plane-serving-cert.
func servingCert(label string) string {
	switch label {
	case "bootstrap-kubeadm":
		return "capi-kubeadm-bootstrap-serving-cert"
	case "control-plane-kubeadm":
		return "capi-kubeadm-control-plane-serving-cert"
	}
	return "capi-serving-cert"
}

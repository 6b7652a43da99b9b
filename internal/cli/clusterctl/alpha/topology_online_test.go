package alpha

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	configlocal "github.com/capstan-dev/capstan/config/local"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/yamlprocessor"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/controllers/clusterclass"
	topologycontroller "github.com/capstan-dev/capstan/internal/controllers/topology"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/topology"
)

// startTopologyControllers runs the ClusterClass and topology controllers on namespace until the test ends.
func startTopologyControllers(t *testing.T, namespace string) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{UsePriorityQueue: ptr.To(true), SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := (&clusterclass.Reconciler{Client: mgr.GetClient(), Contracts: &contract.Resolver{Client: mgr.GetAPIReader()}}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		t.Fatal(err)
	}
	if err := (&topologycontroller.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("running the manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// localFile renders a file of the local provider's release with vars.
func localFile(t *testing.T, name string, vars map[string]string) []unstructured.Unstructured {
	t.Helper()
	data, err := configlocal.Files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := yamlprocessor.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	text, err := tmpl.Execute(func(v string) (string, bool) { value, ok := vars[v]; return value, ok })
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// topologyPlan runs `clusterctl alpha topology plan args...` against the management cluster of
// kubeconfig and returns its output.
func topologyPlan(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	deps := &clusterctlcli.Deps{
		LookupEnv:         func(string) (string, bool) { return "", false },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster { return cluster.New(k) },
	}
	var stdout, stderr bytes.Buffer
	cmd := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, deps, time.Now)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(append(append([]string{"topology", "plan"}, args...), "--kubeconfig", kubeconfig))
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		if !strings.Contains(stderr.String(), "Detected a cluster with Cluster API installed") {
			t.Errorf("the plan did not run online: %s", stderr.String())
		}
	}
	return stdout.String(), err
}

var planRow = regexp.MustCompile(`(?m)^\s+(\S+)\s+(\S+)\s+(\S+)\s+(created|modified|deleted)$`)

// planned returns the "Kind/name action" rows of a plan's output, sorted.
func planned(out string) []string {
	var rows []string
	for _, m := range planRow.FindAllStringSubmatch(out, -1) {
		rows = append(rows, m[2]+"/"+m[3]+" "+m[4])
	}
	sort.Strings(rows)
	return rows
}

func writeObjects(t *testing.T, dir, name string, objs ...unstructured.Unstructured) string {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// managedVersions returns the resourceVersion of each object the topology manages in ns, by "Kind/name".
func managedVersions(g Gomega, ns string) map[string]string {
	out := map[string]string{}
	for _, kind := range []string{"LocalCluster", "LocalMachineTemplate", "KubeadmControlPlane", "MachineHealthCheck", "MachineDeployment", "KubeadmConfigTemplate"} {
		list := &unstructured.UnstructuredList{}
		gv := map[string]string{"LocalCluster": "infrastructure.cluster.x-k8s.io/v1alpha1", "LocalMachineTemplate": "infrastructure.cluster.x-k8s.io/v1alpha1",
			"KubeadmControlPlane": "controlplane.cluster.x-k8s.io/v1beta1", "KubeadmConfigTemplate": "bootstrap.cluster.x-k8s.io/v1beta1"}[kind]
		if gv == "" {
			gv = clusterv1.GroupVersion.String()
		}
		list.SetAPIVersion(gv)
		list.SetKind(kind + "List")
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns), client.HasLabels{clusterv1.ClusterTopologyOwnedLabel})).To(Succeed())
		for _, item := range list.Items {
			out[kind+"/"+item.GetName()] = item.GetResourceVersion()
		}
	}
	return out
}

// TestTopologyPlanOnline runs `clusterctl alpha topology plan` against a management cluster where the
// ClusterClass and topology controllers manage a Cluster of the local provider's class: the Cluster as
// stored plans no change; the Cluster with changed variables — and nothing else in the input — plans
// exactly the objects the controller then creates and changes; a changed template of the class, alone in
// the input, finds the Cluster that uses it.
func TestTopologyPlanOnline(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	kubeconfig := env.KubeconfigFile(t, ns)
	dir := t.TempDir()
	startTopologyControllers(t, ns)

	classObjs := localFile(t, "clusterclass-local.yaml", nil)
	for i := range classObjs {
		classObjs[i].SetNamespace(ns)
		g.Expect(env.Client.Create(ctx, &classObjs[i])).To(Succeed())
	}
	clusterObjs := localFile(t, "cluster-template-topology.yaml", map[string]string{
		"CLUSTER_NAME": "cc", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1", "WORKER_MACHINE_COUNT": "1",
	})
	g.Expect(clusterObjs).To(HaveLen(1))
	generated := clusterObjs[0]
	g.Expect(env.Client.Create(ctx, generated.DeepCopy())).To(Succeed())

	t.Log("the topology controller creates the Cluster's objects; the MachineDeployment waits for the control plane")
	var before map[string]string
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cc"}, c)).To(Succeed())
		g.Expect(c.Spec.ControlPlaneRef).NotTo(BeNil(), "%+v", c.Status)
		before = managedVersions(g, ns)
		g.Expect(before).To(HaveLen(4), "LocalCluster, control plane LocalMachineTemplate, KubeadmControlPlane, its MachineHealthCheck: %v", before)
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())

	t.Log("the Cluster as clusterctl generated it (no uid, no references) plans no change: the rest is read from the cluster")
	out, err := topologyPlan(t, kubeconfig, "-f", writeObjects(t, dir, "same.yaml", generated))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(planned(out)).To(BeEmpty(), out)
	g.Expect(out).To(ContainSubstring(`No changes detected for Cluster "` + ns + `/cc".`))

	t.Log("changed variables: the plan lists exactly what the controller then creates and changes")
	changed := generated.DeepCopy()
	vars, _, _ := unstructured.NestedSlice(changed.Object, "spec", "topology", "variables")
	for _, v := range vars {
		m := v.(map[string]any)
		switch m["name"] {
		case "machineStartupDelay":
			m["value"] = "5s"
		case "podSecurityStandard":
			m["value"].(map[string]any)["enforce"] = "restricted"
		}
	}
	g.Expect(unstructured.SetNestedSlice(changed.Object, vars, "spec", "topology", "variables")).To(Succeed())
	out, err = topologyPlan(t, kubeconfig, "-f", writeObjects(t, dir, "changed.yaml", *changed), "-c", "cc", "-o", filepath.Join(dir, "out"))
	g.Expect(err).NotTo(HaveOccurred(), out)
	plan := planned(out)
	g.Expect(plan).To(HaveLen(3), out)
	g.Expect(plan[0]).To(MatchRegexp(`^KubeadmControlPlane/cc-\S+ modified$`))
	g.Expect(plan[1:]).To(ConsistOf(MatchRegexp(`^LocalMachineTemplate/cc-\S+ created$`), MatchRegexp(`^LocalMachineTemplate/cc-\S+ deleted$`)),
		"the control plane's machine template is rotated, the one it replaces deleted")
	diffs, err := filepath.Glob(filepath.Join(dir, "out", "modified", "KubeadmControlPlane_*.diff"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(diffs).To(HaveLen(1))
	for _, suffix := range []string{".original.yaml", ".modified.yaml", ".jsonpatch"} {
		g.Expect(strings.TrimSuffix(diffs[0], ".diff") + suffix).To(BeAnExistingFile())
	}
	diff, err := os.ReadFile(diffs[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(diff)).To(And(HavePrefix("--- KubeadmControlPlane_"+ns+"_cc-"), MatchRegexp(`(?m)^-\s+enforce: "baseline"$`), MatchRegexp(`(?m)^\+\s+enforce: "restricted"$`)),
		"a unified diff")
	modified, err := os.ReadFile(strings.TrimSuffix(diffs[0], ".diff") + ".modified.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(modified)).To(ContainSubstring(`enforce: "restricted"`))

	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cc"}, c)).To(Succeed())
	patch := client.MergeFrom(c.DeepCopy())
	g.Expect(runtimeSetVariables(c, vars)).To(Succeed())
	g.Expect(env.Client.Patch(ctx, c, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		after := managedVersions(g, ns)
		var got []string
		for k, rv := range after {
			old, ok := before[k]
			switch {
			case !ok:
				got = append(got, k+" created")
			case old != rv:
				got = append(got, k+" modified")
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				got = append(got, k+" deleted")
			}
		}
		sort.Strings(got)
		g.Expect(got).To(Equal(plan))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	t.Log("the controller wrote what the plan showed: a modified object as its .modified.yaml, a created one with every field of its file")
	written, err := filepath.Glob(filepath.Join(dir, "out", "*", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(HaveLen(3), "the created LocalMachineTemplate, the KubeadmControlPlane's .original.yaml and .modified.yaml")
	for _, path := range written {
		if strings.HasSuffix(path, ".original.yaml") {
			continue
		}
		data, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := manifest.Parse(data)
		g.Expect(err).NotTo(HaveOccurred())
		want := objs[0]
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(want.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&want), got)).To(Succeed(), path)
		if strings.HasSuffix(path, ".modified.yaml") {
			g.Expect(got.Object["spec"]).To(Equal(want.Object["spec"]), path)
			g.Expect(got.GetLabels()).To(Equal(want.GetLabels()), path)
			g.Expect(got.GetAnnotations()).To(Equal(want.GetAnnotations()), path)
			continue
		}
		g.Expect(topology.Holds(got.Object["spec"], want.Object["spec"], false)).To(BeTrue(), "%s: %v", path, got.Object["spec"])
		g.Expect(topology.Holds(got.Object["metadata"], want.Object["metadata"], true)).To(BeTrue(), "%s: %v", path, got.Object["metadata"])
	}

	t.Log("a changed template of the class, alone in the input, plans the Clusters that use it")
	var kcpTemplate unstructured.Unstructured
	for _, o := range classObjs {
		if o.GetKind() == "KubeadmControlPlaneTemplate" {
			kcpTemplate = *o.DeepCopy()
		}
	}
	g.Expect(unstructured.SetNestedStringSlice(kcpTemplate.Object, []string{"localhost", "127.0.0.1", "cc.example.com"},
		"spec", "template", "spec", "kubeadmConfigSpec", "clusterConfiguration", "apiServer", "certSANs")).To(Succeed())
	out, err = topologyPlan(t, kubeconfig, "-f", writeObjects(t, dir, "template.yaml", kcpTemplate))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring(" ＊ " + ns + "/cc"))
	g.Expect(planned(out)).To(ConsistOf(MatchRegexp(`^KubeadmControlPlane/cc-\S+ modified$`)), out)

	t.Log("a Cluster whose class is nowhere is an error naming it")
	orphan := generated.DeepCopy()
	orphan.SetName("orphan")
	g.Expect(unstructured.SetNestedField(orphan.Object, "nope", "spec", "topology", "class")).To(Succeed())
	_, err = topologyPlan(t, kubeconfig, "-f", writeObjects(t, dir, "orphan.yaml", *orphan))
	g.Expect(err).To(MatchError(ContainSubstring("ClusterClass " + ns + "/nope is not in the input nor in the management cluster")))
}

func runtimeSetVariables(c *clusterv1.Cluster, vars []any) error {
	data, err := yaml.Marshal(vars)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, &c.Spec.Topology.Variables)
}

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/root"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	clusterctlclient "github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
	"github.com/capstan-dev/capstan/internal/clusterctl/tree"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/golden"
	"github.com/capstan-dev/capstan/internal/test/stack"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// clusterctl runs clusterctl as the binary does, against the test API server.
func clusterctl(t *testing.T, kubeconfig string, args ...string) (string, string, int) {
	t.Helper()
	deps := &clusterctlcli.Deps{
		LookupEnv: func(string) (string, bool) { return "", false },
		ManagementCluster: func(k cluster.Kubeconfig) clusterctlclient.ManagementCluster {
			return cluster.New(k)
		},
		Options: clusterctlcli.GlobalOptions{Verbosity: -1},
	}
	var out, errOut bytes.Buffer
	code := root.Main(context.Background(), append(args, "--kubeconfig", kubeconfig), iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, deps)
	return out.String(), errOut.String(), code
}

// provisioned waits until the Cluster ns/name and its MachineDeployment have settled with replicas
// Machines that are ready, available and up to date, and returns those Machines (the workers; the
// KubeadmControlPlane's Machine is not among them).
func provisioned(t *testing.T, ns, name string, replicas int32, exclude map[string]bool) []clusterv1.Machine {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	var machines []clusterv1.Machine
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(c.Status.V1Beta2).NotTo(BeNil())
		g.Expect(c.Status.V1Beta2.Workers).NotTo(BeNil())
		w := c.Status.V1Beta2.Workers
		for _, counter := range []*int32{w.Replicas, w.AvailableReplicas, w.ReadyReplicas, w.UpToDateReplicas} {
			g.Expect(counter).To(HaveValue(Equal(replicas)))
		}
		g.Expect(conditionStatus(c.GetV1Beta2Conditions(), "WorkersAvailable")).To(Equal(metav1.ConditionTrue))
		g.Expect(conditionStatus(c.GetV1Beta2Conditions(), "Available")).To(Equal(metav1.ConditionTrue))
		cp := c.Status.V1Beta2.ControlPlane
		g.Expect(cp).NotTo(BeNil())
		for _, counter := range []*int32{cp.Replicas, cp.AvailableReplicas, cp.ReadyReplicas, cp.UpToDateReplicas} {
			g.Expect(counter).To(HaveValue(Equal(int32(1))))
		}
		all := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, all, client.InNamespace(ns))).To(Succeed())
		for _, m := range all.Items {
			g.Expect(conditionStatus(m.GetV1Beta2Conditions(), "Ready")).To(Equal(metav1.ConditionTrue), "Ready of %s", m.Name)
		}

		md := &clusterv1.MachineDeployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-md-0"}, md)).To(Succeed())
		g.Expect(conditionStatus(md.GetV1Beta2Conditions(), "Available")).To(Equal(metav1.ConditionTrue))
		g.Expect(conditionStatus(md.GetV1Beta2Conditions(), "RollingOut")).To(Equal(metav1.ConditionFalse))
		g.Expect(md.Status.V1Beta2).NotTo(BeNil())
		g.Expect(md.Status.V1Beta2.UpToDateReplicas).To(HaveValue(Equal(replicas)))
		g.Expect(md.Status.Replicas).To(Equal(replicas))

		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name + "-md-0"})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(int(replicas)))
		for _, m := range list.Items {
			g.Expect(exclude).NotTo(HaveKey(m.Name))
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
			for _, ct := range []string{"Available", "Ready", "UpToDate"} {
				g.Expect(conditionStatus(m.GetV1Beta2Conditions(), ct)).To(Equal(metav1.ConditionTrue), "%s of %s", ct, m.Name)
			}
		}
		machines = list.Items
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	return machines
}

func conditionStatus(list []metav1.Condition, t string) metav1.ConditionStatus {
	for _, c := range list {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// TestDescribeProvisionedCluster provisions a Cluster of 2 workers from the local provider's
// cluster-template.yaml and checks what clusterctl shows of it: `describe cluster` (a golden file, with
// the transition times and the random parts of names made stable), `get kubeconfig` (which reaches the
// workload cluster's 2 Nodes), and `alpha rollout restart`, after which the Machines are replaced.
func TestDescribeProvisionedCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	kubeconfig := env.KubeconfigFile(t, "")

	for _, o := range stack.LocalTemplate(t, "cluster-template.yaml", map[string]string{
		"CLUSTER_NAME": "e2e", "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1", "WORKER_MACHINE_COUNT": "2",
	}) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	machines := provisioned(t, ns, "e2e", 2, nil)

	// The tree, from the objects as the controllers left them, with stable times and names.
	objs, err := tree.Discover(ctx, env.Client, ns, "e2e", tree.DiscoverOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stableTimes(objs, t0)
	for _, opts := range []struct {
		golden string
		opts   tree.Options
	}{
		{golden: "provisioned.txt", opts: tree.Options{Grouping: true}},
		{golden: "provisioned-v1beta1.txt", opts: tree.Options{Grouping: true, V1Beta1: true}},
		{golden: "provisioned-all.txt", opts: tree.Options{ShowMachineSets: true, ShowTemplates: true, Echo: true, ShowConditions: mustFilter(t, "all")}},
	} {
		var out bytes.Buffer
		g.Expect(tree.Print(&out, tree.Build(objs, opts.opts), tree.PrintOptions{Now: t0.Add(time.Minute)})).To(Succeed())
		golden.Assert(t, opts.golden, []byte(stableNames(objs, out.String())))
	}

	// The command shows the same tree.
	stdout, stderr, code := clusterctl(t, kubeconfig, "describe", "cluster", "e2e", "-n", ns)
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stdout).To(MatchRegexp(`(?m)^Cluster/e2e +3/3 +3 +3 +3 +Available: True +Available `))
	g.Expect(stdout).To(MatchRegexp(`(?m)^├─ControlPlane - KubeadmControlPlane/e2e-control-plane +1/1 +1 +1 +1 +Available: True +Available `))
	g.Expect(stdout).To(MatchRegexp(`(?m)^    └─2 Machines\.\.\. +2 +2 +2 +Ready: True +Ready `))

	// get kubeconfig prints a kubeconfig that reaches the workload cluster.
	stdout, stderr, code = clusterctl(t, kubeconfig, "get", "kubeconfig", "e2e", "-n", ns)
	g.Expect(code).To(Equal(0), stderr)
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(stdout))
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(3), "the control plane Machine's Node and the 2 workers'")

	// rollout restart replaces the Machines.
	stdout, stderr, code = clusterctl(t, kubeconfig, "alpha", "rollout", "restart", "machinedeployment/e2e-md-0", "-n", ns)
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stdout).To(Equal("machinedeployment.cluster.x-k8s.io/e2e-md-0 restarted\n"))
	old := map[string]bool{}
	for _, m := range machines {
		old[m.Name] = true
	}
	provisioned(t, ns, "e2e", 2, old)
	stdout, _, code = clusterctl(t, kubeconfig, "describe", "cluster", "e2e", "-n", ns, "--show-machinesets")
	g.Expect(code).To(Equal(0))
	for name := range old {
		g.Expect(stdout).NotTo(ContainSubstring(name))
	}
}

// stableTimes sets the transition time of every condition to t0 and, since the order in which the
// controllers first set conditions may vary, sorts the v1beta2 conditions by type.
func stableTimes(objs *tree.Objects, t0 time.Time) {
	ts := metav1.NewTime(t0)
	setTyped := func(v1 clusterv1.Conditions, v2 []metav1.Condition) {
		for i := range v1 {
			v1[i].LastTransitionTime = ts
		}
		for i := range v2 {
			v2[i].LastTransitionTime = ts
		}
		slices.SortFunc(v2, func(a, b metav1.Condition) int { return cmp.Compare(a.Type, b.Type) })
	}
	setTyped(objs.Cluster.Status.Conditions, objs.Cluster.GetV1Beta2Conditions())
	for i := range objs.MachineDeployments {
		setTyped(objs.MachineDeployments[i].Status.Conditions, objs.MachineDeployments[i].GetV1Beta2Conditions())
	}
	for i := range objs.MachineSets {
		setTyped(objs.MachineSets[i].Status.Conditions, objs.MachineSets[i].GetV1Beta2Conditions())
	}
	for i := range objs.Machines {
		setTyped(objs.Machines[i].Status.Conditions, objs.Machines[i].GetV1Beta2Conditions())
	}
	unstructuredObjs := []*unstructured.Unstructured{objs.Infrastructure, objs.ControlPlane}
	for _, u := range objs.MachineInfrastructure {
		unstructuredObjs = append(unstructuredObjs, u)
	}
	for _, u := range objs.BootstrapConfigs {
		unstructuredObjs = append(unstructuredObjs, u)
	}
	for _, u := range unstructuredObjs {
		if u == nil {
			continue
		}
		for _, path := range [][]string{{"status", "conditions"}, {"status", "v1beta2", "conditions"}} {
			list, found, _ := unstructured.NestedSlice(u.Object, path...)
			if !found {
				continue
			}
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					m["lastTransitionTime"] = t0.Format(time.RFC3339)
				}
			}
			slices.SortFunc(list, func(a, b any) int {
				ta, _ := a.(map[string]any)["type"].(string)
				tb, _ := b.(map[string]any)["type"].(string)
				return cmp.Compare(ta, tb)
			})
			_ = unstructured.SetNestedSlice(u.Object, list, path...)
		}
	}
}

// stableNames replaces the random suffixes of the MachineSet and Machine names in out with fixed ones of
// the same length, keeping their order.
func stableNames(objs *tree.Objects, out string) string {
	var pairs []string
	sets := slices.Clone(objs.MachineSets)
	slices.SortFunc(sets, func(a, b clusterv1.MachineSet) int { return cmp.Compare(a.Name, b.Name) })
	machines := slices.Clone(objs.Machines)
	slices.SortFunc(machines, func(a, b clusterv1.Machine) int { return cmp.Compare(a.Name, b.Name) })
	// Machines first: their names start with their MachineSet's.
	workers, controlPlane := 0, 0
	for _, m := range machines {
		if _, ok := m.Labels[clusterv1.MachineDeploymentNameLabel]; ok {
			pairs = append(pairs, m.Name, fmt.Sprintf("e2e-md-0-sssss-m%04d", workers))
			workers++
			continue
		}
		pairs = append(pairs, m.Name, fmt.Sprintf("e2e-control-plane-c%04d", controlPlane))
		controlPlane++
	}
	for i, ms := range sets {
		pairs = append(pairs, ms.Name, fmt.Sprintf("e2e-md-0-s%04d", i))
	}
	return strings.NewReplacer(pairs...).Replace(out)
}

func mustFilter(t *testing.T, s string) tree.ConditionFilter {
	t.Helper()
	f, err := tree.ParseConditionFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

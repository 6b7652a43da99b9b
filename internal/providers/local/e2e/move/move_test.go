package move

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/procs"
	"github.com/capstan-dev/capstan/internal/test/stack"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

// source and target are the two management clusters.
var source, target *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	envtest.SetupLogging()
	opts := envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}
	envs, err := envtest.StartAll(opts, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Starting the test API servers: %v\n", err)
		return 1
	}
	defer envtest.StopAll(envs)
	source, target = envs[0], envs[1]
	return m.Run()
}

// object is what a move must keep of an object: its UID (which changes) and its owners, by kind and name,
// with the UIDs the ownerReferences name.
type object struct {
	uid    types.UID
	owners map[string]types.UID
}

// objectsOf returns the Cluster API objects, Secrets and ConfigMaps of a namespace, by "Kind/name".
func objectsOf(ctx context.Context, g Gomega, c client.Client, ns string) map[string]object {
	out := map[string]object{}
	for _, list := range []client.ObjectList{
		&clusterv1.ClusterList{}, &clusterv1.MachineDeploymentList{}, &clusterv1.MachineSetList{}, &clusterv1.MachineList{},
		&infrav1.LocalClusterList{}, &infrav1.LocalMachineList{}, &infrav1.LocalMachineTemplateList{},
		&corev1.SecretList{}, &corev1.ConfigMapList{},
	} {
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		items, err := meta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		kind := strings.TrimSuffix(fmt.Sprintf("%T", list)[strings.LastIndex(fmt.Sprintf("%T", list), ".")+1:], "List")
		for _, item := range items {
			o := item.(client.Object)
			owners := map[string]types.UID{}
			for _, ref := range o.GetOwnerReferences() {
				owners[ref.Kind+"/"+ref.Name] = ref.UID
			}
			out[kind+"/"+o.GetName()] = object{uid: o.GetUID(), owners: owners}
		}
	}
	return out
}

// workloadState is what a move must not change in a workload cluster: where its API server answers, and its
// Nodes (name -> UID, Ready).
type workloadState struct {
	endpoint clusterv1.APIEndpoint
	server   string
	nodes    map[string]types.UID
}

// workloadOf reads a workload cluster through the management cluster c: the LocalCluster's endpoint, and
// the Nodes its API server lists with the `<cluster>-kubeconfig` the core wrote; only Ready Nodes count.
func workloadOf(ctx context.Context, g Gomega, c client.Client, ns, name string) workloadState {
	return workloadOfLocalCluster(ctx, g, c, ns, name, name)
}

// workloadOfLocalCluster is workloadOf for a Cluster whose LocalCluster is named localCluster (a topology
// Cluster's has a generated name).
func workloadOfLocalCluster(ctx context.Context, g Gomega, c client.Client, ns, name, localCluster string) workloadState {
	lc := &infrav1.LocalCluster{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: localCluster}, lc)).To(Succeed())
	cfg, err := workload.FromKubeconfigSecret(ctx, c, ns, name)
	g.Expect(err).NotTo(HaveOccurred())
	nodes, err := workload.ReadyNodes(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	w := workloadState{endpoint: lc.Spec.ControlPlaneEndpoint, server: cfg.Host, nodes: map[string]types.UID{}}
	for _, n := range nodes {
		w.nodes[n.Name] = n.UID
	}
	return w
}

// machinesOf returns the providerID of every Machine of a namespace, by name.
func machinesOf(ctx context.Context, g Gomega, c client.Client, ns string) map[string]string {
	list := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, m := range list.Items {
		out[m.Name] = ptr.Deref(m.Spec.ProviderID, "")
	}
	return out
}

// provisioned asserts that every Cluster of the namespace is unpaused and Provisioned, its LocalCluster
// Ready, its control plane initialized, and every Machine Running with a Node.
func provisioned(ctx context.Context, g Gomega, c client.Client, ns string, clusters []string, machinesPerCluster int) {
	list := &clusterv1.ClusterList{}
	g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(len(clusters)))
	machines := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	for _, cl := range list.Items {
		// What a failure shows: the Cluster's conditions and its Machines' phases, Nodes and conditions.
		state := func() string {
			var b strings.Builder
			fmt.Fprintf(&b, "Cluster %s: phase %q, conditions %s", cl.Name, cl.Status.Phase, conditionsOf(cl.Status.Conditions))
			for _, m := range machines.Items {
				if m.Spec.ClusterName == cl.Name {
					fmt.Fprintf(&b, "\nMachine %s: phase %q, nodeRef %v, conditions %s", m.Name, m.Status.Phase, m.Status.NodeRef != nil, conditionsOf(m.Status.Conditions))
				}
			}
			return b.String()
		}
		g.Expect(cl.Spec.Paused).To(BeFalse(), cl.Name)
		g.Expect(cl.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)), state)
		g.Expect(conditions.IsTrue(&cl, clusterv1.ControlPlaneInitializedCondition)).To(BeTrue(), state)
		lc := &infrav1.LocalCluster{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cl.Name}, lc)).To(Succeed())
		g.Expect(conditions.IsTrue(lc, clusterv1.ReadyCondition)).To(BeTrue(), "LocalCluster %s: %s", cl.Name, conditionsOf(lc.Status.Conditions))
	}
	g.Expect(machines.Items).To(HaveLen(len(clusters) * machinesPerCluster))
	for _, m := range machines.Items {
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), m.Name)
		g.Expect(m.Status.NodeRef).NotTo(BeNil(), m.Name)
	}
}

// initManagementClusters runs `clusterctl init` with initArgs in the source and the target, from a
// repository of capstan's providers; it returns a clusterctl that fails the test when a command fails, and
// the kubeconfigs of the two clusters.
func initManagementClusters(t *testing.T, g Gomega, initArgs ...string) (clusterctl func(kc string, args ...string) clusterctltest.Result, sourceKC, targetKC string) {
	t.Helper()
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	sourceKC, targetKC = source.KubeconfigFile(t, ""), target.KubeconfigFile(t, "")
	clusterctl = func(kc string, args ...string) clusterctltest.Result {
		t.Helper()
		res := repo.Run(t, kc, args...)
		g.Expect(res.Code).To(Equal(0), "clusterctl %s\n%s%s", strings.Join(args, " "), res.Stdout, res.Stderr)
		return res
	}
	for _, kc := range []string{sourceKC, targetKC} {
		clusterctl(kc, append([]string{"init"}, initArgs...)...)
	}
	return clusterctl, sourceKC, targetKC
}

// conditionsOf lists conditions as "Type=Status (Reason: Message)".
func conditionsOf(cs clusterv1.Conditions) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}

// TestMoveLocalClusters is issue 7's move check with the local provider. Two management clusters on one
// machine, initialized with clusterctl, run the core controllers and each its own instance of the local
// provider, with its own data directory. Three clusters of the provider's control-plane flavor (a
// control plane Machine and two workers each; the default flavor has no control plane Machine, so Cluster
// API never calls its control plane initialized and clusterctl move refuses it), their Secrets and a
// ConfigMap labelled clusterctl.cluster.x-k8s.io/move are moved with `clusterctl move`. Every object is in
// the target with its ownerReferences rebuilt and none is left in the source; the clusters are unpaused
// and Provisioned in the target, which took the workload clusters over: same Machines and providerIDs,
// same Nodes (UIDs), same endpoints, and one etcd and one kube-apiserver each, run by the target's
// provider from its own data directory.
func TestMoveLocalClusters(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	clusterctl, sourceKC, targetKC := initManagementClusters(t, g, "-b", "-", "-c", "-", "--core", "cluster-api:v0.1.0", "-i", "local:v0.1.0")
	dataRoot := t.TempDir()
	sourceData, targetData := filepath.Join(dataRoot, "source"), filepath.Join(dataRoot, "target")
	// What the Deployments `clusterctl init` created would run, which the test API servers cannot: the core
	// controllers and an instance of the local provider each, with a data directory of its own (as in the
	// embedded management cluster, where each provider has its own HOME).
	stack.ForTest(t, source.Config, stack.Options{Local: true, LocalDataDir: sourceData})
	stack.ForTest(t, target.Config, stack.Options{Local: true, LocalDataDir: targetData})

	ns := source.NewNamespace(t)
	clusters := []string{"alpha", "bravo", "charlie"}
	const machinesPerCluster = 3
	for _, name := range clusters {
		res := clusterctl(sourceKC, "generate", "cluster", name, "--infrastructure", "local", "--flavor", "control-plane",
			"--kubernetes-version", "v1.37.1", "--control-plane-machine-count", "1", "--worker-machine-count", "2", "--target-namespace", ns)
		objs, err := manifest.Parse([]byte(res.Stdout))
		g.Expect(err).NotTo(HaveOccurred())
		for i := range objs {
			g.Expect(source.Client.Create(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "cpi-config", Labels: map[string]string{clusterctlv1.ClusterctlMoveLabel: ""},
	}}
	g.Expect(source.Client.Create(ctx, cm)).To(Succeed())

	t.Log("the clusters are provisioned in the source")
	before := map[string]workloadState{}
	g.Eventually(func(g Gomega) {
		provisioned(ctx, g, source.Client, ns, clusters, machinesPerCluster)
		for _, name := range clusters {
			w := workloadOf(ctx, g, source.Client, ns, name)
			g.Expect(w.nodes).To(HaveLen(machinesPerCluster), "Ready nodes of %s", name)
			before[name] = w
		}
	}, 3*time.Minute, time.Second).Should(Succeed())
	objects := objectsOf(ctx, g, source.Client, ns)
	for _, key := range []string{"ConfigMap/cpi-config", "Secret/alpha-bootstrap", "Secret/alpha-ca", "Secret/alpha-kubeconfig", "LocalCluster/alpha"} {
		g.Expect(objects).To(HaveKey(key))
	}
	machines := machinesOf(ctx, g, source.Client, ns)
	g.Expect(machines).To(HaveLen(len(clusters) * machinesPerCluster))
	for m, id := range machines {
		g.Expect(id).To(HavePrefix(infrav1.ProviderIDPrefix), m)
	}
	g.Expect(procs.Find("etcd", sourceData)).To(HaveLen(len(clusters)))
	g.Expect(procs.Find("kube-apiserver", sourceData)).To(HaveLen(len(clusters)))

	t.Log("clusterctl move")
	start := time.Now()
	res := clusterctltest.Run(t, []string{"move", "--kubeconfig", sourceKC, "--to-kubeconfig", targetKC, "-n", ns}, clusterctltest.Options{})
	g.Expect(res.Code).To(Equal(0), "%s%s", res.Stdout, res.Stderr)
	g.Expect(res.Stdout).NotTo(ContainSubstring("not moved"), res.Stdout)
	t.Logf("moved in %s", time.Since(start))

	t.Log("nothing is left in the source; every object is in the target, its ownerReferences on the target's UIDs")
	g.Expect(objectsOf(ctx, g, source.Client, ns)).To(BeEmpty())
	moved := objectsOf(ctx, g, target.Client, ns)
	keys := func(m map[string]object) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	g.Expect(keys(moved)).To(Equal(keys(objects)))
	for key, o := range objects {
		after := moved[key]
		g.Expect(after.uid).NotTo(Equal(o.uid), key)
		g.Expect(after.owners).To(HaveLen(len(o.owners)), "owners of %s", key)
		for owner := range o.owners {
			g.Expect(after.owners).To(HaveKeyWithValue(owner, moved[owner].uid), "the owner %s of %s", owner, key)
		}
	}

	t.Log("the target runs the clusters: unpaused, Provisioned, same Machines, same Nodes, same endpoints")
	g.Eventually(func(g Gomega) {
		provisioned(ctx, g, target.Client, ns, clusters, machinesPerCluster)
		for _, name := range clusters {
			g.Expect(workloadOf(ctx, g, target.Client, ns, name)).To(Equal(before[name]), "workload cluster %s", name)
		}
	}, 2*time.Minute, time.Second).Should(Succeed())
	t.Logf("taken over %s after the move started", time.Since(start))
	g.Consistently(func(g Gomega) {
		g.Expect(machinesOf(ctx, g, target.Client, ns)).To(Equal(machines))
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())
	for _, name := range clusters {
		dir := filepath.Join(targetData, ns, name)
		g.Expect(procs.Find("etcd", dir)).To(HaveLen(1), "etcd of %s", name)
		g.Expect(procs.Find("kube-apiserver", dir)).To(HaveLen(1), "kube-apiserver of %s", name)
		lc := &infrav1.LocalCluster{}
		g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lc)).To(Succeed())
		g.Expect(lc.Annotations).To(HaveKeyWithValue(infrav1.DataDirAnnotation, dir))
	}
	g.Expect(procs.Find("etcd", dataRoot)).To(HaveLen(len(clusters)), "no etcd left running for the source")
	g.Expect(procs.Find("kube-apiserver", dataRoot)).To(HaveLen(len(clusters)), "no kube-apiserver left running for the source")
	g.Expect(filepath.Join(sourceData, ns)).NotTo(BeADirectory(), "the data moved to the target's data directory")
}

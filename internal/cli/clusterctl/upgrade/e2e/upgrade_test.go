package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/cli/clusterctl/clusterctltest"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
	"github.com/capstan-dev/capstan/internal/test/workload"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{SchemeBuilders: []func(*runtime.Scheme) error{infrav1.AddToScheme}}, func(e *envtest.Environment) { env = e }))
}

// TestUpgradeKeepsWorkloadClustersRunning installs the first releases of the core, the local provider and
// a fixture provider with clusterctl, provisions a workload cluster, and upgrades every provider: every
// object stays (same UIDs, same providerIDs, no machine replaced), the fixture's objects are migrated to
// its new storage version, and the workload cluster keeps answering. Deleting the providers' CRDs is
// refused while the cluster exists.
func TestUpgradeKeepsWorkloadClustersRunning(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	repo := clusterctltest.NewManagementRepository(t, clusterctltest.ManagementRepositoryOptions{})
	kc := env.KubeconfigFile(t, "")
	run := func(args ...string) clusterctltest.Result {
		t.Helper()
		return repo.Run(t, kc, args...)
	}

	// Without the kubeadm bootstrap and control plane providers a first init adds (the init tests cover
	// them).
	res := run("init", "-b", "-", "-c", "-", "--core", "cluster-api:v0.1.0", "-i", "local:v0.1.0", "-i", "fixture:v0.1.0")
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	// The core and the local provider run in the test, as their Deployments would.
	stack.ForTest(t, env.Config, stack.Options{Local: true})

	ns := env.NewNamespace(t)
	// The control-plane flavor: its control plane is a MachineDeployment, no kubeadm provider is needed.
	res = run("generate", "cluster", "e2e", "--infrastructure", "local", "--flavor", "control-plane", "--kubernetes-version", "v1.37.1",
		"--controlplane-machine-count", "1", "--worker-machine-count", "2", "--target-namespace", ns)
	g.Expect(res.Code).To(Equal(0), res.Stderr)
	objs, err := manifest.Parse([]byte(res.Stdout))
	g.Expect(err).NotTo(HaveOccurred())
	objs = append(objs, mustParse(g, "apiVersion: infrastructure.fixture.capstan.dev/v1alpha1\nkind: FixtureCluster\nmetadata: {name: e2e, namespace: "+ns+"}\nspec: {size: 3}\n")...)
	for i := range objs {
		g.Expect(env.CreateServed(ctx, &objs[i])).To(Succeed(), "creating %s %s", objs[i].GetKind(), objs[i].GetName())
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		g.Expect(providerIDs(g, ns)).To(HaveLen(3))
		g.Expect(readyNodes(g, ns)).To(HaveLen(3))
		ms := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, ms, client.InNamespace(ns))).To(Succeed())
		for _, m := range ms.Items {
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "nodeRef of %s (%v)", m.Name, m.GetV1Beta2Conditions())
		}
		g.Expect(conditions.IsTrue(cluster, clusterv1.ControlPlaneInitializedCondition)).To(BeTrue(), "the control plane is initialized")
	}, 3*time.Minute, time.Second).Should(Succeed())
	before := snapshot(g, ns)
	ids := providerIDs(g, ns)

	t.Run("delete --include-crd refuses while clusters exist", func(t *testing.T) {
		g := NewWithT(t)
		res := run("delete", "--all", "--include-crd")
		g.Expect(res.Code).To(Equal(1))
		g.Expect(res.Stderr).To(HavePrefix("Error: cannot delete the CRDs of infrastructure-local, infrastructure-fixture and cluster-api: 1 LocalCluster, 3 LocalMachines, 1 LocalMachineTemplate, 1 FixtureCluster, 1 Cluster, "))
		g.Expect(res.Stderr).To(HaveSuffix(" still exist; delete the Clusters first or run without --include-crd\n"))
		g.Expect(inventory(g)).To(HaveLen(3))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "clusters.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.DeletionTimestamp).To(BeNil())
	})

	t.Run("upgrade apply keeps every object and the workload cluster running", func(t *testing.T) {
		g := NewWithT(t)
		res := run("upgrade", "apply", "--contract", "v1beta1")
		g.Expect(res.Code).To(Equal(0), res.Stderr)
		g.Expect(inventory(g)).To(ConsistOf("cluster-api v0.2.0", "infrastructure-local v0.2.0", "infrastructure-fixture v0.2.0"))

		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "fixtureclusters.infrastructure.fixture.capstan.dev"}, crd)).To(Succeed())
		g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1alpha2"}))

		// Give the controllers time to act on anything the upgrade might have disturbed.
		g.Consistently(func(g Gomega) {
			g.Expect(snapshot(g, ns)).To(Equal(before))
			g.Expect(providerIDs(g, ns)).To(Equal(ids))
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
		}, 5*time.Second, time.Second).Should(Succeed())
		g.Expect(readyNodes(g, ns)).To(HaveLen(3))
	})

	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster) }, 2*time.Minute, time.Second).ShouldNot(Succeed(), func() string {
		ms := &clusterv1.MachineList{}
		_ = env.Client.List(ctx, ms, client.InNamespace(ns))
		out := fmt.Sprintf("cluster conditions %+v\n", cluster.GetV1Beta2Conditions())
		for _, m := range ms.Items {
			out += fmt.Sprintf("machine %s finalizers %v conditions %+v\n", m.Name, m.Finalizers, m.GetV1Beta2Conditions())
		}
		return out
	})
}

func mustParse(g Gomega, yaml string) []unstructured.Unstructured {
	objs, err := manifest.Parse([]byte(yaml))
	g.Expect(err).NotTo(HaveOccurred())
	return objs
}

// snapshot returns the UID of every Cluster API object of the namespace, by kind and name.
func snapshot(g Gomega, ns string) map[string]string {
	out := map[string]string{}
	for _, list := range []client.ObjectList{
		&clusterv1.ClusterList{}, &clusterv1.MachineDeploymentList{}, &clusterv1.MachineSetList{}, &clusterv1.MachineList{},
		&infrav1.LocalClusterList{}, &infrav1.LocalMachineList{}, &infrav1.LocalMachineTemplateList{}, &corev1.SecretList{},
	} {
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		items, err := meta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			o := item.(client.Object)
			out[kindOf(list)+"/"+o.GetName()] = string(o.GetUID())
		}
	}
	return out
}

// providerIDs returns the sorted providerIDs of the namespace's Machines.
func providerIDs(g Gomega, ns string) []string {
	machines := &clusterv1.MachineList{}
	g.Expect(env.Client.List(context.Background(), machines, client.InNamespace(ns))).To(Succeed())
	var ids []string
	for _, m := range machines.Items {
		if m.Spec.ProviderID != nil && *m.Spec.ProviderID != "" {
			ids = append(ids, *m.Spec.ProviderID)
		}
	}
	sort.Strings(ids)
	return ids
}

// readyNodes returns the Ready nodes of the workload cluster "e2e", asking its kube-apiserver.
func readyNodes(g Gomega, ns string) []string {
	cfg, err := workload.FromKubeconfigSecret(context.Background(), env.Client, ns, "e2e")
	g.Expect(err).NotTo(HaveOccurred())
	nodes, err := workload.ReadyNodes(context.Background(), cfg)
	g.Expect(err).NotTo(HaveOccurred())
	return workload.Names(nodes)
}

func inventory(g Gomega) []string {
	list := &clusterctlv1.ProviderList{}
	g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name+" "+p.Version)
	}
	return out
}

// kindOf returns the kind of a list's items, from its Go type.
func kindOf(list client.ObjectList) string {
	name := fmt.Sprintf("%T", list)
	return strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "List")
}

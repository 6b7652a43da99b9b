package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/binaries"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/envtest"
	"github.com/capstan-dev/capstan/internal/test/stack"
	workloadtest "github.com/capstan-dev/capstan/internal/test/workload"
)

// TestChainedUpgradeLocal is issue 43's end-to-end check of chained upgrades (upstream v1.12) on the local
// provider: the released class `local`, given spec.kubernetesVersions v1.35.4, v1.36.3, v1.37.1, and a
// Cluster of it at v1.35.4 (one control plane Machine, one worker) moved to v1.37.1 in one change of
// spec.topology.version. The control plane goes through v1.36.3 and then v1.37.1, the workers once, straight
// to v1.37.1 (the skew policy allows three minors) and only after the control plane runs it; the Cluster's
// status shows the plan; the workload API server reports each minor on its way when bin/ has
// kube-apiserver-v1.35 and -v1.36 (make test-e2e-chained builds them; without, those Machines run the v1.37
// API server and only the Machines' versions are checked). Run with CAPSTAN_E2E_CHAINED=1 (E2E=1).
func TestChainedUpgradeLocal(t *testing.T) {
	if os.Getenv("CAPSTAN_E2E_CHAINED") == "" {
		t.Skip("the chained upgrade end-to-end check runs with CAPSTAN_E2E_CHAINED=1 (make test E2E=1, make test-e2e-chained)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stack.ForTest(t, env.Config, stack.Options{Local: true, Kubeadm: true})

	apiserver, err := binaries.Find("kube-apiserver", "")
	g.Expect(err).NotTo(HaveOccurred())
	hasMinor := func(minor string) bool {
		_, err := os.Stat(filepath.Join(filepath.Dir(apiserver), "kube-apiserver-v1."+minor))
		return err == nil
	}
	eachMinor := hasMinor("35") && hasMinor("36")
	if !eachMinor {
		t.Log("bin/kube-apiserver-v1.35 or -v1.36 is missing (make test-e2e-chained builds them): only the Machines' versions are checked")
	}

	versions := []string{"v1.35.4", "v1.36.3", "v1.37.1"}
	for _, o := range stack.LocalTemplate(t, "clusterclass-local.yaml", nil) {
		o.SetNamespace(ns)
		if o.GetKind() == "ClusterClass" {
			g.Expect(unstructured.SetNestedStringSlice(o.Object, versions, "spec", "kubernetesVersions")).To(Succeed())
		}
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	for _, o := range stack.LocalTemplate(t, "cluster-template-topology.yaml", map[string]string{
		"CLUSTER_NAME": "chain", "NAMESPACE": ns, "KUBERNETES_VERSION": versions[0], "WORKER_MACHINE_COUNT": "1",
	}) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}
	clusterKey := client.ObjectKey{Namespace: ns, Name: "chain"}
	t.Cleanup(func() {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chain"}}
		g := NewWithT(t)
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, c))).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c))
		}, topologyWait, topologyInterval).Should(BeTrue(), "the Cluster is deleted")
	})
	envtest.DumpOnFailure(t, env.Client, ns)

	t.Log("the Cluster of the class becomes Available at " + versions[0])
	cluster := &clusterv1.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, clusterKey, cluster)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
		g.Expect(topologyWorkers(ctx, g, ns, versions[0])).To(Equal(1))
	}, topologyWait, topologyInterval).Should(Succeed())
	kcpKey := client.ObjectKey{Namespace: ns, Name: cluster.Spec.ControlPlaneRef.Name}
	cfg, err := workloadtest.FromKubeconfigSecret(ctx, env.Client, ns, "chain")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 5 * time.Second
	wc := kubernetes.NewForConfigOrDie(cfg)
	if eachMinor {
		g.Expect(workloadVersion(g, wc)).To(HavePrefix("v1.35."))
	}

	// What the upgrade goes through, sampled every 250 ms: the control plane's and the workers' versions in
	// their specs, the workload API server's, and the plans in the Cluster's status.
	var (
		mu                    sync.Mutex
		cpSteps, workerSteps  []string
		apiServerSteps        []string
		cpPlans, workersPlans []string
		workersAheadOfCPSteps []string
	)
	record := func(list *[]string, v string) {
		if v != "" && (len(*list) == 0 || (*list)[len(*list)-1] != v) {
			*list = append(*list, v)
		}
	}
	// Both run the first version now (checked above); a first sample may come after the control plane's
	// first step started.
	cpSteps, workerSteps = []string{versions[0]}, []string{versions[0]}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(topologyInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			kcp := &controlplanev1.KubeadmControlPlane{}
			mds := &clusterv1.MachineDeploymentList{}
			c := &clusterv1.Cluster{}
			if env.Client.Get(ctx, kcpKey, kcp) != nil || env.Client.Get(ctx, clusterKey, c) != nil ||
				env.Client.List(ctx, mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: "chain"}) != nil {
				continue
			}
			mu.Lock()
			record(&cpSteps, kcp.Spec.Version)
			for _, md := range mds.Items {
				v := ptr.Deref(md.Spec.Template.Spec.Version, "")
				record(&workerSteps, v)
				if v != "" && kubeversionAhead(v, ptr.Deref(kcp.Status.Version, "")) {
					workersAheadOfCPSteps = append(workersAheadOfCPSteps, v)
				}
			}
			if c.Status.V1Beta2 != nil && c.Status.V1Beta2.ControlPlane != nil {
				record(&cpPlans, planString(c.Status.V1Beta2.ControlPlane.UpgradePlan))
			}
			if c.Status.V1Beta2 != nil && c.Status.V1Beta2.Workers != nil {
				record(&workersPlans, planString(c.Status.V1Beta2.Workers.UpgradePlan))
			}
			mu.Unlock()
			if v, err := wc.Discovery().ServerVersion(); err == nil {
				mu.Lock()
				record(&apiServerSteps, v.GitVersion)
				mu.Unlock()
			}
		}
	}()

	t.Log("spec.topology.version " + versions[0] + " → " + versions[2] + " in one change")
	start := time.Now()
	patchCluster(ctx, g, clusterKey, func(c *clusterv1.Cluster) { c.Spec.Topology.Version = versions[2] })
	g.Eventually(func(g Gomega) {
		kcp := &controlplanev1.KubeadmControlPlane{}
		g.Expect(env.Client.Get(ctx, kcpKey, kcp)).To(Succeed())
		g.Expect(kcp.Status.Version).To(Equal(ptr.To(versions[2])))
		g.Expect(kcp.Status.UpdatedReplicas).To(Equal(kcp.Status.Replicas))
		g.Expect(topologyWorkers(ctx, g, ns, versions[2])).To(Equal(1))
		g.Expect(env.Client.Get(ctx, clusterKey, cluster)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(), "%+v", cluster.Status.V1Beta2)
	}, topologyWait, topologyInterval).Should(Succeed())
	close(stop)
	<-sampled
	t.Logf("the chained upgrade took %s", time.Since(start).Round(time.Second))

	mu.Lock()
	defer mu.Unlock()
	t.Logf("control plane %v, workers %v, workload API server %v, plans in the status: control plane %q, workers %q",
		cpSteps, workerSteps, apiServerSteps, cpPlans, workersPlans)
	g.Expect(cpSteps).To(Equal(versions), "the control plane goes through each minor")
	g.Expect(workerSteps).To(Equal([]string{versions[0], versions[2]}), "the workers take one step")
	g.Expect(workersAheadOfCPSteps).To(BeEmpty(), "no worker version ahead of the control plane's")
	// The status shows what is left of each plan (the first may be gone before a sample sees it).
	g.Expect(cpPlans).To(ContainElement("v1.37.1"), "the Cluster's status shows the control plane's plan")
	g.Expect(cpPlans).To(HaveEach(BeElementOf("v1.36.3 v1.37.1", "v1.37.1")))
	g.Expect(workersPlans).To(ContainElement("v1.37.1"), "and the workers'")
	g.Expect(workersPlans).To(HaveEach(Equal("v1.37.1")))
	if eachMinor {
		minors := make([]string, 0, len(apiServerSteps))
		for _, v := range apiServerSteps {
			minor := v[:len("v1.3x")]
			if !slices.Contains(minors, minor) {
				minors = append(minors, minor)
			}
		}
		g.Expect(minors).To(Equal([]string{"v1.35", "v1.36", "v1.37"}), "the workload API server answered with each minor")
	}
}

// planString is an upgrade plan as one string ("" when empty).
func planString(plan []clusterv1.StatusUpgradePlanVersion) string {
	out := make([]string, 0, len(plan))
	for _, s := range plan {
		out = append(out, s.Version)
	}
	return strings.Join(out, " ")
}

// kubeversionAhead reports whether v is a newer Kubernetes version than cp ("" counts as older than any).
func kubeversionAhead(v, cp string) bool {
	a, errA := semver.ParseTolerant(v)
	b, errB := semver.ParseTolerant(cp)
	return errA == nil && errB == nil && a.GT(b)
}

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/procs"
)

// converged checks that a Cluster reached its spec: Available (and its topology reconciled), its
// KubeadmControlPlane and MachineDeployments at their replicas and version with every Machine up to date,
// running and not being deleted.
func converged(ctx context.Context, g Gomega, c client.Client, ns, name string) {
	cluster := &clusterv1.Cluster{}
	g.Expect(c.Get(ctx, key(ns, name), cluster)).To(Succeed())
	g.Expect(cluster.Status.ObservedGeneration).To(Equal(cluster.Generation), "Cluster observed its spec")
	g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterAvailableV1Beta2Condition)).To(BeTrue(), "Cluster Available: %s", v1beta2Message(cluster, clusterv1.ClusterAvailableV1Beta2Condition))
	if cluster.Spec.Topology != nil {
		g.Expect(conditions.IsV1Beta2True(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition)).To(BeTrue(),
			"TopologyReconciled: %s", v1beta2Message(cluster, clusterv1.ClusterTopologyReconciledV1Beta2Condition))
	}
	g.Expect(cluster.Spec.ControlPlaneRef).NotTo(BeNil())
	kcp := &controlplanev1.KubeadmControlPlane{}
	g.Expect(c.Get(ctx, key(ns, cluster.Spec.ControlPlaneRef.Name), kcp)).To(Succeed())
	replicas := ptr.Deref(kcp.Spec.Replicas, 1)
	g.Expect(kcp.Status.ObservedGeneration).To(Equal(kcp.Generation), "KubeadmControlPlane observed its spec")
	g.Expect(kcp.Status.Replicas).To(Equal(replicas), "control plane Machines")
	g.Expect(kcp.Status.UpdatedReplicas).To(Equal(replicas), "up-to-date control plane Machines")
	g.Expect(kcp.Status.ReadyReplicas).To(Equal(replicas), "ready control plane Machines")
	g.Expect(kcp.Status.Version).To(Equal(ptr.To(kcp.Spec.Version)))
	g.Expect(conditions.IsV1Beta2True(kcp, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition)).To(BeTrue(),
		"EtcdClusterHealthy: %s", v1beta2Message(kcp, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyV1Beta2Condition))

	mds := &clusterv1.MachineDeploymentList{}
	g.Expect(c.List(ctx, mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
	for _, md := range mds.Items {
		want := ptr.Deref(md.Spec.Replicas, 1)
		g.Expect(md.Status.ObservedGeneration).To(Equal(md.Generation), "MachineDeployment %s observed its spec", md.Name)
		g.Expect(md.Status.Replicas).To(Equal(want), "MachineDeployment %s replicas", md.Name)
		g.Expect(md.Status.UpdatedReplicas).To(Equal(want), "MachineDeployment %s up to date", md.Name)
		g.Expect(md.Status.AvailableReplicas).To(Equal(want), "MachineDeployment %s available", md.Name)
	}

	machines := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
	for _, m := range machines.Items {
		g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s is being deleted", m.Name)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		g.Expect(m.Status.NodeRef).NotTo(BeNil(), "Machine %s has a Node", m.Name)
	}
}

func v1beta2Message(o conditions.V1Beta2Getter, t string) string {
	if c := conditions.GetV1Beta2(o, t); c != nil {
		return c.Reason + ": " + c.Message
	}
	return "not set"
}

// checkNothingLeaked checks, once the clusters of namespace ns converged, that nothing is leaked,
// orphaned, paused or held by a finalizer: every Machine has its LocalMachine and KubeadmConfig and every
// one of those its Machine; every bootstrap data Secret its KubeadmConfig; no object is being deleted or
// paused; every workload cluster runs exactly one etcd and one kube-apiserver per control plane Machine,
// holds a machine directory per Machine and a Node per Machine.
func checkNothingLeaked(ctx context.Context, g Gomega, c client.Client, ns string, clusters map[string]*workloadCluster) {
	machines := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	machineUIDs := map[string]bool{}
	byCluster := map[string][]clusterv1.Machine{}
	for _, m := range machines.Items {
		machineUIDs[string(m.UID)] = true
		byCluster[m.Spec.ClusterName] = append(byCluster[m.Spec.ClusterName], m)
	}
	ownedByLiveMachine := func(o metav1.Object) bool {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "Machine" && machineUIDs[string(ref.UID)] {
				return true
			}
		}
		return false
	}

	lms := &infrav1.LocalMachineList{}
	g.Expect(c.List(ctx, lms, client.InNamespace(ns))).To(Succeed())
	g.Expect(lms.Items).To(HaveLen(len(machines.Items)), "one LocalMachine per Machine")
	for _, lm := range lms.Items {
		g.Expect(ownedByLiveMachine(&lm)).To(BeTrue(), "LocalMachine %s is orphaned", lm.Name)
	}
	cfgs := &bootstrapv1.KubeadmConfigList{}
	g.Expect(c.List(ctx, cfgs, client.InNamespace(ns))).To(Succeed())
	cfgUIDs := map[string]bool{}
	for _, cfg := range cfgs.Items {
		g.Expect(ownedByLiveMachine(&cfg)).To(BeTrue(), "KubeadmConfig %s is orphaned", cfg.Name)
		cfgUIDs[string(cfg.UID)] = true
	}
	g.Expect(cfgs.Items).To(HaveLen(len(machines.Items)), "one KubeadmConfig per Machine")
	secrets := &corev1.SecretList{}
	g.Expect(c.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	for _, s := range secrets.Items {
		if s.Type != clusterv1.ClusterSecretType {
			continue
		}
		for _, ref := range s.OwnerReferences {
			if ref.Kind == "KubeadmConfig" {
				g.Expect(cfgUIDs[string(ref.UID)]).To(BeTrue(), "bootstrap data Secret %s is orphaned", s.Name)
			}
		}
	}

	for _, kind := range []string{"Cluster", "MachineDeployment", "MachineSet", "Machine", "KubeadmControlPlane", "LocalCluster", "LocalMachine", "KubeadmConfig", "MachineHealthCheck"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvOf(kind).WithKind(kind + "List"))
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			g.Expect(o.GetDeletionTimestamp()).To(BeNil(), "%s %s is being deleted (finalizers %v)", kind, o.GetName(), o.GetFinalizers())
			g.Expect(o.GetAnnotations()).NotTo(HaveKey(clusterv1.PausedAnnotation), "%s %s is left paused", kind, o.GetName())
			if kind == "Cluster" {
				paused, _, _ := unstructured.NestedBool(o.Object, "spec", "paused")
				g.Expect(paused).To(BeFalse(), "Cluster %s is left paused", o.GetName())
			}
		}
	}

	for name, w := range clusters {
		ms := byCluster[name]
		var names, cps []string
		for _, m := range ms {
			names = append(names, m.Name)
			if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
				cps = append(cps, m.Name)
			}
		}
		checkProcesses(g, w, names, cps)
		nodes, err := w.api.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		var nodeNames []string
		for _, n := range nodes.Items {
			nodeNames = append(nodeNames, n.Name)
		}
		var want []string
		for _, m := range ms {
			if m.Status.NodeRef != nil {
				want = append(want, m.Status.NodeRef.Name)
			}
		}
		g.Expect(nodeNames).To(ConsistOf(want), "cluster %s: one Node per Machine", name)
	}
}

// checkProcesses checks a workload cluster's host processes and data: exactly one etcd and one
// kube-apiserver per control plane Machine, each in its Machine's directory, and no directory of a Machine
// that is gone.
func checkProcesses(g Gomega, w *workloadCluster, machines, controlPlanes []string) {
	for _, program := range []string{"etcd", "kube-apiserver"} {
		var dirs []string
		for _, pid := range processesBelow(w.dir(), program) {
			dirs = append(dirs, machineOf(w.dir(), pid))
		}
		g.Expect(dirs).To(ConsistOf(controlPlanes), "cluster %s: one %s per control plane Machine", w.name, program)
	}
	entries, err := os.ReadDir(filepath.Join(w.dir(), "machines"))
	if err != nil && !os.IsNotExist(err) {
		g.Expect(err).NotTo(HaveOccurred())
	}
	for _, e := range entries {
		g.Expect(machines).To(ContainElement(e.Name()), "cluster %s: the data of a Machine that is gone", w.name)
	}
}

// processesBelow returns the live processes of program (kube-apiserver-v1.36 counts as kube-apiserver)
// whose command line names a path below dir.
func processesBelow(dir, program string) []int {
	pids := procs.Find(program, dir)
	if program == "kube-apiserver" {
		pids = append(pids, procs.Find("kube-apiserver-v1.36", dir)...)
	}
	return pids
}

// machineOf returns the Machine whose directory a process's command line names.
func machineOf(dataDir string, pid int) string {
	prefix := filepath.Join(dataDir, "machines") + string(filepath.Separator)
	for _, arg := range strings.Fields(procs.Cmdline(pid)) {
		if i := strings.Index(arg, prefix); i >= 0 {
			return strings.SplitN(arg[i+len(prefix):], string(filepath.Separator), 2)[0]
		}
	}
	return fmt.Sprintf("pid %d outside the machines' directories", pid)
}

// checkClusterGone checks that a deleted Cluster left nothing: no object of its, no process, no data.
func checkClusterGone(ctx context.Context, g Gomega, c client.Client, w *workloadCluster) {
	for _, kind := range []string{"MachineDeployment", "MachineSet", "Machine", "KubeadmControlPlane", "LocalCluster", "LocalMachine", "KubeadmConfig"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvOf(kind).WithKind(kind + "List"))
		g.Expect(c.List(ctx, list, client.InNamespace(w.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: w.name})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty(), "%s of the deleted Cluster %s", kind, w.name)
	}
	secrets := &corev1.SecretList{}
	g.Expect(c.List(ctx, secrets, client.InNamespace(w.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: w.name})).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty(), "Secrets of the deleted Cluster %s", w.name)
	for _, program := range []string{"etcd", "kube-apiserver"} {
		g.Expect(processesBelow(w.dir(), program)).To(BeEmpty(), "%s of the deleted Cluster %s", program, w.name)
	}
	_, err := os.Stat(w.dir())
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the data of the deleted Cluster %s is removed", w.name)
}

// gvOf returns the API group and version of the kinds the checks list.
func gvOf(kind string) schema.GroupVersion {
	switch {
	case slices.Contains([]string{"LocalCluster", "LocalMachine"}, kind):
		return infrav1.GroupVersion
	case kind == "KubeadmConfig":
		return bootstrapv1.GroupVersion
	case kind == "KubeadmControlPlane":
		return controlplanev1.GroupVersion
	}
	return clusterv1.GroupVersion
}

// eventually polls f until it passes or within elapses, and says how long it took.
func eventually(g Gomega, within time.Duration, f func(Gomega)) time.Duration {
	start := time.Now()
	g.Eventually(f, within, time.Second).Should(Succeed())
	return time.Since(start)
}

package machine

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func TestNodeLabelSync(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, tm, node := runningMachine(t, builder.V1Beta1, ns)
	nodeLabels := func(g Gomega) map[string]string {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
		return n.Labels
	}

	m := getMachine(g, tm.machine)
	before := m.DeepCopy()
	m.Labels["node-role.kubernetes.io/worker"] = ""
	m.Labels["node.cluster.x-k8s.io/pool"] = "blue"
	m.Labels["app"] = "not-for-nodes"
	g.Expect(env.Client.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		labels := nodeLabels(g)
		g.Expect(labels).To(HaveKeyWithValue("node-role.kubernetes.io/worker", ""))
		g.Expect(labels).To(HaveKeyWithValue("node.cluster.x-k8s.io/pool", "blue"))
		g.Expect(labels).NotTo(HaveKey("app"))
	}, timeout, interval).Should(Succeed())

	// A label someone else puts on the Node is left alone.
	n := &corev1.Node{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
	labelled := n.DeepCopy()
	labelled.Labels["team"] = "storage"
	g.Expect(workload.Client.Patch(ctx, labelled, client.MergeFrom(n))).To(Succeed())

	m = getMachine(g, tm.machine)
	before = m.DeepCopy()
	delete(m.Labels, "node-role.kubernetes.io/worker")
	m.Labels["node.cluster.x-k8s.io/pool"] = "green"
	g.Expect(env.Client.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		labels := nodeLabels(g)
		g.Expect(labels).NotTo(HaveKey("node-role.kubernetes.io/worker"))
		g.Expect(labels).To(HaveKeyWithValue("node.cluster.x-k8s.io/pool", "green"))
		g.Expect(labels).To(HaveKeyWithValue("team", "storage"))
		g.Expect(labels).To(HaveKeyWithValue("set-by", "kubelet"))
	}, timeout, interval).Should(Succeed())
}

// TestNodeTaintSync: a Machine's taints reach its Node in the workload cluster (an Always one is put back
// when removed from the Node, and leaves it when it leaves the Machine).
func TestNodeTaintSync(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, tm, node := runningMachine(t, builder.V1Beta1, ns)
	nodeTaints := func(g Gomega) []corev1.Taint {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
		return n.Spec.Taints
	}
	dedicated := corev1.Taint{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	m := getMachine(g, tm.machine)
	before := m.DeepCopy()
	m.Spec.Taints = []clusterv1.MachineTaint{{Key: dedicated.Key, Value: dedicated.Value, Effect: dedicated.Effect, Propagation: clusterv1.MachineTaintPropagationAlways}}
	g.Expect(env.Client.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(nodeTaints(g)).To(ContainElement(dedicated)) }, timeout, interval).Should(Succeed())

	// Someone removes it from the Node: an Always taint is put back.
	n := &corev1.Node{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKeyFromObject(node), n)).To(Succeed())
	untainted := n.DeepCopy()
	untainted.Spec.Taints = slices.DeleteFunc(untainted.Spec.Taints, func(t corev1.Taint) bool { return t.Key == dedicated.Key })
	g.Expect(workload.Client.Update(ctx, untainted)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(nodeTaints(g)).To(ContainElement(dedicated)) }, timeout, interval).Should(Succeed())

	m = getMachine(g, tm.machine)
	before = m.DeepCopy()
	m.Spec.Taints = nil
	g.Expect(env.Client.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(nodeTaints(g)).NotTo(ContainElement(HaveField("Key", dedicated.Key))) }, timeout, interval).Should(Succeed())
}

func TestManagedLabels(t *testing.T) {
	labels := map[string]string{
		"node-role.kubernetes.io/worker":          "",
		"node-role.kubernetes.io":                 "no-slash",
		"node-restriction.kubernetes.io/zone":     "a",
		"team.node-restriction.kubernetes.io/x":   "b",
		"node.cluster.x-k8s.io/pool":              "blue",
		"sub.node.cluster.x-k8s.io/y":             "c",
		"evilnode.cluster.x-k8s.io/z":             "no",
		"cluster.x-k8s.io/cluster-name":           "prod",
		"example.com/synced":                      "yes",
		"example.com/other":                       "no",
		"kubernetes.io/hostname":                  "no",
		"node-role.kubernetes.io.evil.com/master": "no",
	}
	got := managedLabels(labels, []*regexp.Regexp{regexp.MustCompile(`^example\.com/synced$`)})
	want := map[string]string{
		"node-role.kubernetes.io/worker":        "",
		"node-restriction.kubernetes.io/zone":   "a",
		"team.node-restriction.kubernetes.io/x": "b",
		"node.cluster.x-k8s.io/pool":            "blue",
		"sub.node.cluster.x-k8s.io/y":           "c",
		"example.com/synced":                    "yes",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("managedLabels (-want +got):\n%s", diff)
	}
}

func TestDesiredNode(t *testing.T) {
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "m1",
			Labels: map[string]string{"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "blue", "app": "x"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "MachineSet", Name: "ms", Controller: ptr.To(true)},
			},
		},
		Spec: clusterv1.MachineSpec{ClusterName: "prod"},
	}
	linked := map[string]string{
		clusterv1.ClusterNameAnnotation:       "prod",
		clusterv1.ClusterNamespaceAnnotation:  "ns",
		clusterv1.MachineAnnotation:           "m1",
		clusterv1.OwnerKindAnnotation:         "MachineSet",
		clusterv1.OwnerNameAnnotation:         "ms",
		clusterv1.LabelsFromMachineAnnotation: "node-role.kubernetes.io/worker,node.cluster.x-k8s.io/pool",
		clusterv1.TaintsFromMachineAnnotation: "", // the Machine has no taints; the Node is initialized
	}
	uninitialized := corev1.Taint{Key: clusterv1.NodeUninitializedTaintKey, Effect: corev1.TaintEffectNoSchedule}
	other := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		node        corev1.Node
		wantLabels  map[string]string
		wantTaints  []corev1.Taint
		wantChanged bool
	}{
		{
			name:        "new Node",
			node:        corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{uninitialized, other}}},
			wantLabels:  map[string]string{"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "blue"},
			wantTaints:  []corev1.Taint{other},
			wantChanged: true,
		},
		{
			name: "in sync",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{
				Name: "n", Annotations: linked,
				Labels: map[string]string{"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "blue", "kubelet": "x"},
			}},
			wantLabels: map[string]string{"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "blue", "kubelet": "x"},
		},
		{
			name: "a label the Machine dropped is removed, others stay",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{
				Name: "n",
				Annotations: map[string]string{
					clusterv1.LabelsFromMachineAnnotation: "node-role.kubernetes.io/control-plane,node-role.kubernetes.io/worker",
					clusterv1.TaintsFromMachineAnnotation: "",
				},
				Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "", "kubelet": "x"},
			}},
			wantLabels:  map[string]string{"node-role.kubernetes.io/worker": "", "node.cluster.x-k8s.io/pool": "blue", "kubelet": "x"},
			wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, changed := desiredNode(&tt.node, machine, nil)
			g.Expect(changed).To(Equal(tt.wantChanged))
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(linked, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			g.Expect(got.Spec.Taints).To(Equal(tt.wantTaints))
		})
	}
}

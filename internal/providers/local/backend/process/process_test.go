package process

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDesiredNode(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now()
	cp := desiredNode(nodeSpec{Name: "cp-0", ProviderID: "local://ns/c/cp-0", KubeletVersion: "v1.37.1", ControlPlane: true, DefaultTaints: true, FailureDomain: "fd1", KubeletPort: 10250}, now)
	g.Expect(cp.Labels).To(HaveKeyWithValue("kubernetes.io/hostname", "cp-0"))
	g.Expect(cp.Labels).To(HaveKeyWithValue("node-role.kubernetes.io/control-plane", ""))
	g.Expect(cp.Labels).To(HaveKeyWithValue("topology.kubernetes.io/zone", "fd1"))
	g.Expect(cp.Spec.Taints).To(ConsistOf(corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}))
	g.Expect(cp.Spec.ProviderID).To(Equal("local://ns/c/cp-0"))
	g.Expect(cp.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
	g.Expect(cp.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}))
	g.Expect(cp.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))

	g.Expect(cp.Labels).To(HaveKeyWithValue("node.kubernetes.io/exclude-from-external-load-balancers", ""))
	g.Expect(cp.Status.DaemonEndpoints.KubeletEndpoint.Port).To(BeEquivalentTo(10250))

	noTaints := desiredNode(nodeSpec{Name: "cp-1", ControlPlane: true}, now)
	g.Expect(noTaints.Spec.Taints).To(BeEmpty(), "nodeRegistration.taints: [] leaves a control plane Node untainted")

	worker := desiredNode(nodeSpec{Name: "w-0", DefaultTaints: true, Taints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}}, now)
	g.Expect(worker.Labels).NotTo(HaveKey("node-role.kubernetes.io/control-plane"))
	g.Expect(worker.Labels).NotTo(HaveKey("topology.kubernetes.io/zone"))
	g.Expect(worker.Spec.Taints).To(ConsistOf(corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}))

	// A status differing only in heartbeat times is up to date; another kubelet version is not.
	later := desiredNodeStatus(nodeSpec{Name: "cp-0", KubeletVersion: "v1.37.1", KubeletPort: 10250}, metav1.NewTime(now.Add(time.Hour)))
	g.Expect(statusUpToDate(cp.Status, later)).To(BeTrue())
	upgraded := desiredNodeStatus(nodeSpec{Name: "cp-0", KubeletVersion: "v1.38.0", KubeletPort: 10250}, now)
	g.Expect(statusUpToDate(cp.Status, upgraded)).To(BeFalse())
	notReady := cp.Status.DeepCopy()
	notReady.Conditions[3].Status = corev1.ConditionUnknown
	g.Expect(statusUpToDate(*notReady, cp.Status)).To(BeFalse())
}

func TestState(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	st, err := readState(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st).To(Equal(state{}))
	want := state{APIServerPort: 40001, Machines: map[string]*machineState{"m1": {NodeName: "n1", ControlPlane: true, KubeletPort: 40002, EtcdJoined: true}}}
	g.Expect(writeState(dir, want)).To(Succeed())
	st, err = readState(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st).To(Equal(want))
}

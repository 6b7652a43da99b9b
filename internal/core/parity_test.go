package core_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	clusterv1beta2 "github.com/capstan-dev/capstan/api/core/v1beta2"
	configcore "github.com/capstan-dev/capstan/config/core"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/manifest"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// machineHealthCheck returns a MachineHealthCheck of a MachineDeployment's Machines that finds a Machine
// unhealthy when its Node is not Ready for 2 seconds.
func machineHealthCheck(ns, name string, md *clusterv1.MachineDeployment, maxUnhealthy *intstr.IntOrString) *clusterv1.MachineHealthCheck {
	return &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: md.Spec.ClusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: md.Name}},
			UnhealthyConditions: []clusterv1.UnhealthyCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 2 * time.Second}},
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: 2 * time.Second}},
			},
			MaxUnhealthy: maxUnhealthy,
		},
	}
}

// makeNodeNotReady sets a Node's Ready condition False in the workload cluster, as a kubelet would.
func makeNodeNotReady(ctx context.Context, g Gomega, name string) {
	setNodeReady(ctx, g, name, corev1.ConditionFalse)
}

// newClusterWithControlPlane creates a Cluster as newCluster does, plus a control plane Machine, whose
// Node makes the Cluster's control plane initialized: only then are worker Nodes health checked.
func newClusterWithControlPlane(ctx context.Context, g Gomega, ns, name string, replicas int32) (*clusterv1.Cluster, *clusterv1.MachineDeployment) {
	cluster, md := newCluster(ctx, g, ns, name, replicas)
	p := builder.V1Beta1
	infra := p.InfraMachine(ns, name+"-cp")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	bootstrap := p.BootstrapConfig(ns, name+"-cp")
	g.Expect(env.Client.Create(ctx, bootstrap)).To(Succeed())
	cp := builder.Machine(ns, name+"-cp", name, infra, bootstrap)
	cp.Labels[clusterv1.MachineControlPlaneLabel] = ""
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	return cluster, md
}

// workers returns the Machines of a MachineDeployment.
func workers(ctx context.Context, g Gomega, md *clusterv1.MachineDeployment) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(md.Namespace), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md.Name})).To(Succeed())
	return list.Items
}

func waitForRunning(ctx context.Context, g Gomega, ns, cluster string, n int) []clusterv1.Machine {
	var machines []clusterv1.Machine
	g.Eventually(func(g Gomega) {
		machines = machinesOf(ctx, g, ns, cluster)
		g.Expect(machines).To(HaveLen(n))
		g.Expect(running(machines)).To(Equal(n))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	return machines
}

// waitRemediated waits until the MachineSet deletes an unhealthy Machine.
func waitRemediated(ctx context.Context, g Gomega, victim *clusterv1.Machine) {
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(victim), m)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(m.DeletionTimestamp).NotTo(BeNil(), "the MachineSet deletes the unhealthy Machine")
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}

// TestMachineHealthCheckReplacesAnUnhealthyMachine: a MachineDeployment of 3 with a MachineHealthCheck;
// one Node goes NotReady, its Machine is marked (HealthCheckSucceeded and OwnerRemediated False), the
// MachineSet deletes it and creates a replacement, and the MachineHealthCheck counts 3 healthy again.
func TestMachineHealthCheckReplacesAnUnhealthyMachine(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, md := newClusterWithControlPlane(ctx, g, ns, "mhc", 3)
	waitForRunning(ctx, g, ns, "mhc", 4)
	machines := workers(ctx, g, md)
	mhc := machineHealthCheck(ns, "mhc", md, nil)
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.ExpectedMachines).To(Equal(int32(3)))
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(3)))
		g.Expect(mhc.Status.Targets).To(HaveLen(3))
		g.Expect(mhc.OwnerReferences).To(ContainElement(HaveField("Kind", "Cluster")), "the Cluster owns the MachineHealthCheck")
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	victim := machines[0]
	makeNodeNotReady(ctx, g, victim.Status.NodeRef.Name)

	waitRemediated(ctx, g, &victim)

	g.Eventually(func(g Gomega) {
		waitForRunning(ctx, g, ns, "mhc", 4)
		for _, m := range workers(ctx, g, md) {
			g.Expect(m.Name).NotTo(Equal(victim.Name))
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(3)))
		g.Expect(conditions.IsTrue(mhc, clusterv1.RemediationAllowedCondition)).To(BeTrue())
	}, 120*time.Second, 500*time.Millisecond).Should(Succeed())

	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	g.Expect(reasons(events, "Machine", victim.Name)).To(ContainElement("MachineMarkedUnhealthy"))
}

// TestMachineHealthCheckOfMachineConditions: a MachineHealthCheck written in v1beta2 with only
// checks.unhealthyMachineConditions (upstream v1.14's: the Machine's own conditions) is read back in v1beta1
// with them; when a Node goes NotReady its Machine's NodeHealthy condition turns False, and after the
// condition's timeout the Machine is marked unhealthy for that reason and replaced.
func TestMachineHealthCheckOfMachineConditions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, md := newClusterWithControlPlane(ctx, g, ns, "mhc-machine", 2)
	waitForRunning(ctx, g, ns, "mhc-machine", 3)
	machines := workers(ctx, g, md)
	mhc := &clusterv1beta2.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mhc-machine"},
		Spec: clusterv1beta2.MachineHealthCheckSpec{
			ClusterName: md.Spec.ClusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: md.Name}},
			Checks: clusterv1beta2.MachineHealthCheckChecks{UnhealthyMachineConditions: []clusterv1beta2.UnhealthyMachineCondition{
				{Type: clusterv1.MachineNodeHealthyV1Beta2Condition, Status: metav1.ConditionFalse, TimeoutSeconds: ptr.To[int32](2)},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())
	v1 := &clusterv1.MachineHealthCheck{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), v1)).To(Succeed())
	g.Expect(v1.Spec.UnhealthyMachineConditions).To(Equal([]clusterv1.UnhealthyMachineCondition{
		{Type: clusterv1.MachineNodeHealthyV1Beta2Condition, Status: metav1.ConditionFalse, Timeout: metav1.Duration{Duration: 2 * time.Second}}}))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(v1), v1)).To(Succeed())
		g.Expect(v1.Status.CurrentHealthy).To(Equal(int32(2)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	victim := machines[0]
	makeNodeNotReady(ctx, g, victim.Status.NodeRef.Name)
	waitRemediated(ctx, g, &victim)
	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	g.Expect(reasons(events, "Machine", victim.Name)).To(ContainElement("MachineMarkedUnhealthy"))
	g.Eventually(func(g Gomega) {
		waitForRunning(ctx, g, ns, "mhc-machine", 3)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(v1), v1)).To(Succeed())
		g.Expect(v1.Status.CurrentHealthy).To(Equal(int32(2)))
	}, 120*time.Second, 500*time.Millisecond).Should(Succeed())
}

// TestMaxUnhealthyShortCircuitsRemediation: with two of three Nodes NotReady and maxUnhealthy 40% (one of
// three), no Machine is remediated and the MachineHealthCheck says why.
func TestMaxUnhealthyShortCircuitsRemediation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	_, md := newClusterWithControlPlane(ctx, g, ns, "short", 3)
	waitForRunning(ctx, g, ns, "short", 4)
	machines := workers(ctx, g, md)
	mhc := machineHealthCheck(ns, "short", md, ptr.To(intstr.FromString("40%")))
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(3)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	makeNodeNotReady(ctx, g, machines[0].Status.NodeRef.Name)
	makeNodeNotReady(ctx, g, machines[1].Status.NodeRef.Name)

	const why = "Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 40%)"
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(1)))
		g.Expect(mhc.Status.RemediationsAllowed).To(BeZero())
		c := conditions.GetV1Beta2(mhc, clusterv1.MachineHealthCheckRemediationAllowedV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(clusterv1.MachineHealthCheckTooManyUnhealthyV1Beta2Reason))
		g.Expect(c.Message).To(Equal(why))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	// Nothing is handed over for remediation, for as long as it lasts.
	g.Consistently(func(g Gomega) {
		for _, m := range workers(ctx, g, md) {
			g.Expect(m.DeletionTimestamp).To(BeNil())
			g.Expect(conditions.Get(&m, clusterv1.MachineOwnerRemediatedCondition)).To(BeNil())
		}
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	g.Expect(reasons(events, "MachineHealthCheck", mhc.Name)).To(ContainElement("RemediationRestricted"))
}

// TestMachineHealthCheckLeavesADeletingClusterAlone: once its Cluster is being deleted, a
// MachineHealthCheck no longer checks the Cluster's Machines, which are all going away: a Node going
// NotReady then marks nothing and records nothing, and the MachineHealthCheck's status stays as it was.
// (Upstream goes on checking them, which only writes down their Nodes disappearing.)
func TestMachineHealthCheckLeavesADeletingClusterAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster, md := newClusterWithControlPlane(ctx, g, ns, "leaving", 1)
	waitForRunning(ctx, g, ns, "leaving", 2)
	worker := workers(ctx, g, md)[0]
	mhc := machineHealthCheck(ns, "leaving", md, nil)
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(1)))
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&worker), m)).To(Succeed())
		g.Expect(conditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition)).To(BeTrue())
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	// The test's finalizer keeps the worker Machine, and with it the Cluster, while the Cluster is deleted.
	const hold = "test.capstan.dev/hold"
	g.Expect(env.Client.Patch(ctx, &worker, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["`+clusterv1.MachineFinalizer+`","`+hold+`"]}}`)))).To(Succeed())
	t.Cleanup(func() {
		m := &clusterv1.Machine{}
		if env.Client.Get(ctx, client.ObjectKeyFromObject(&worker), m) == nil && controllerutil.RemoveFinalizer(m, hold) {
			_ = env.Client.Update(ctx, m)
		}
	})
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&worker), m)).To(Succeed())
		g.Expect(m.DeletionTimestamp).NotTo(BeNil())
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	makeNodeNotReady(ctx, g, worker.Status.NodeRef.Name)
	g.Consistently(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&worker), m)).To(Succeed())
		g.Expect(conditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition)).To(BeTrue(),
			"the Machine of a Cluster being deleted is not health checked")
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mhc), mhc)).To(Succeed())
		g.Expect(mhc.Status.CurrentHealthy).To(Equal(int32(1)))
	}, 6*time.Second, 500*time.Millisecond).Should(Succeed()) // 3 times the unhealthy conditions' timeout
	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	g.Expect(reasons(events, "Machine", worker.Name)).NotTo(ContainElement(BeElementOf("DetectedUnhealthy", "MachineMarkedUnhealthy")))
}

// reasons returns the reasons of the events about an object.
func reasons(events *corev1.EventList, kind, name string) []string {
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// eventsByKind returns the events of a namespace as "reason: message" by the kind of their object.
func eventsByKind(ctx context.Context, g Gomega, ns string) map[string][]string {
	events := &corev1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	byKind := map[string][]string{}
	for _, e := range events.Items {
		byKind[e.InvolvedObject.Kind] = append(byKind[e.InvolvedObject.Kind], e.Reason+": "+e.Message)
	}
	return byKind
}

// TestEventsOfScalingAMachineDeployment: scaling a MachineDeployment leaves, as with upstream, events that
// `kubectl get events` shows: the MachineDeployment scaled its MachineSet, the MachineSet created and
// deleted Machines, the Machines got their Node and the deleted one's Node was drained. As upstream, a
// Machine's phases are not events (each would be one more write per Machine).
func TestEventsOfScalingAMachineDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	// With a control plane Machine: only then are a worker's Node drained and deleted with it.
	_, md := newClusterWithControlPlane(ctx, g, ns, "events", 1)
	waitForRunning(ctx, g, ns, "events", 2)
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(md), md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](2)
		return env.Client.Update(ctx, md)
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	waitForRunning(ctx, g, ns, "events", 3)

	g.Eventually(func(g Gomega) {
		byKind := eventsByKind(ctx, g, ns)
		g.Expect(byKind["MachineDeployment"]).To(ContainElement(HavePrefix("SuccessfulCreate: Created MachineSet")))
		g.Expect(byKind["MachineDeployment"]).To(ContainElement(MatchRegexp(`^SuccessfulScale: Scaled MachineSet .*: 1 -> 2$`)))
		g.Expect(byKind["MachineSet"]).To(ContainElement(HavePrefix("SuccessfulCreate: Created machine")))
		g.Expect(byKind["Machine"]).NotTo(ContainElement(MatchRegexp(`^Running: Machine .* is Running$`)))
		g.Expect(byKind["Machine"]).To(ContainElement(HavePrefix("SuccessfulSetNodeRef: ")))
	}, 30*time.Second, 500*time.Millisecond).Should(Succeed())

	// Scaling down: the MachineSet deletes a Machine, whose Node is drained first.
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(md), md); err != nil {
			return err
		}
		md.Spec.Replicas = ptr.To[int32](1)
		return env.Client.Update(ctx, md)
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		byKind := eventsByKind(ctx, g, ns)
		g.Expect(byKind["MachineDeployment"]).To(ContainElement(MatchRegexp(`^SuccessfulScale: Scaled MachineSet .*: 2 -> 1$`)))
		g.Expect(byKind["MachineSet"]).To(ContainElement(HavePrefix("SuccessfulDelete: Deleted machine")))
		g.Expect(byKind["Machine"]).To(ContainElement(HavePrefix("SuccessfulDrainNode: success draining Machine's node")))
	}, 60*time.Second, 500*time.Millisecond).Should(Succeed())
}

// applyAdmissionPolicy creates the core's ValidatingAdmissionPolicy and its binding, and removes them when
// the test ends (or earlier, through the returned function).
// createRefusal tries to create a copy of obj and returns the API server's refusal, or "" when the copy
// got through (then deleted): the admission policy may not be in force yet, so callers try until it is.
func createRefusal(ctx context.Context, obj client.Object) func() string {
	return func() string {
		c := obj.DeepCopyObject().(client.Object)
		err := env.Client.Create(ctx, c)
		if err == nil {
			_ = env.Client.Delete(ctx, c)
			return ""
		}
		return err.Error()
	}
}

func applyAdmissionPolicy(t *testing.T) (remove func()) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	data, err := configcore.Files.ReadFile("admission.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Parse(data)
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		g.Expect(env.Client.Create(ctx, &objs[i])).To(Succeed())
	}
	removed := false
	remove = func() {
		if removed {
			return
		}
		removed = true
		for i := range objs {
			if err := env.Client.Delete(ctx, &objs[i]); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", objs[i].GetName(), err)
			}
		}
	}
	t.Cleanup(remove)
	return remove
}

// TestCrossNamespaceReferencesAreRefused: a user of namespace A cannot make the core act on namespace B's
// objects: the admission policy refuses a Machine of A that references B's InfraMachine, and, with the
// policy removed, the Machine controller refuses to use it, says so in a condition, and deleting the
// Machine leaves B's object alone.
func TestCrossNamespaceReferencesAreRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA, nsB := env.NewNamespace(t), env.NewNamespace(t)
	remove := applyAdmissionPolicy(t)

	infra := builder.V1Beta1.InfraCluster(nsA, "a")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	g.Expect(env.Client.Create(ctx, builder.Cluster(nsA, "a", infra, nil))).To(Succeed())
	theirs := builder.V1Beta1.InfraMachine(nsB, "theirs")
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())

	machine := builder.Machine(nsA, "intruder", "a", theirs, nil)
	machine.Spec.Bootstrap.DataSecretName = ptr.To("data")
	g.Eventually(createRefusal(ctx, machine), 30*time.Second, 250*time.Millisecond).Should(ContainSubstring("spec.infrastructureRef names namespace " + nsB +
		": Cluster API references must stay in the namespace of the Machine (" + nsA + ")"))
	g.Eventually(func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(machine), &clusterv1.Machine{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}, 30*time.Second).Should(Succeed(), "no Machine got through while the policy was taking effect")

	remove()
	g.Eventually(func() error { return env.Client.Create(ctx, machine.DeepCopy()) }, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), m)).To(Succeed())
		c := conditions.GetV1Beta2(m, clusterv1.MachineInfrastructureReadyV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(HavePrefix("Refusing " + theirs.GetKind() + " theirs in namespace " + nsB))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, machine.DeepCopy())).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), &clusterv1.Machine{}))
	}, 60*time.Second, 250*time.Millisecond).Should(BeTrue(), "the Machine's deletion completes")
	expectLeftAlone(ctx, g, theirs)
}

// expectLeftAlone checks that another namespace's object, which namespace A's objects referenced, is
// neither deleted nor adopted by them.
func expectLeftAlone(ctx context.Context, g Gomega, theirs *unstructured.Unstructured) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(theirs.GroupVersionKind())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed(), "namespace B's %s is left alone", theirs.GetKind())
	g.Expect(got.GetDeletionTimestamp()).To(BeNil(), "namespace B's %s is not deleted", theirs.GetKind())
	g.Expect(got.GetOwnerReferences()).To(BeEmpty(), "namespace B's %s is not adopted by namespace A's objects", theirs.GetKind())
}

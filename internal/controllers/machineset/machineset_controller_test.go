package machineset

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func TestCreatesMachinesFromTheTemplate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 2)
	ms.Spec.Replicas = nil // defaulted to 1
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(ms.Spec.Replicas).To(Equal(ptr.To[int32](1)))
		g.Expect(ms.Finalizers).To(ContainElement(clusterv1.MachineSetFinalizer))
		g.Expect(ms.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "cluster"))
		g.Expect(ms.OwnerReferences).To(ContainElement(HaveField("Kind", "Cluster")))
		g.Expect(machinesOf(g, ms)).To(HaveLen(1))
	}, timeout, interval).Should(Succeed())

	m := machinesOf(g, ms)[0]
	g.Expect(m.Name).To(HavePrefix("workers-"))
	g.Expect(m.Labels).To(Equal(map[string]string{
		"set": "workers", clusterv1.ClusterNameLabel: "cluster", clusterv1.MachineSetNameLabel: "workers",
	}))
	g.Expect(m.Annotations).To(HaveKeyWithValue("note", "hello"))
	g.Expect(m.Finalizers).To(ConsistOf(clusterv1.MachineFinalizer))
	g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.31.0")))
	g.Expect(*metav1.GetControllerOf(&m)).To(HaveField("UID", ms.UID))

	for _, ref := range []struct {
		kind, template string
		apiVersion     string
		name           string
	}{
		{builder.InfraMachineKind, f.infraTemplate.GetName(), m.Spec.InfrastructureRef.APIVersion, m.Spec.InfrastructureRef.Name},
		{builder.BootstrapConfigKind, f.bootstrapTemplate.GetName(), m.Spec.Bootstrap.ConfigRef.APIVersion, m.Spec.Bootstrap.ConfigRef.Name},
	} {
		g.Expect(ref.name).To(Equal(m.Name))
		clone := &unstructured.Unstructured{}
		clone.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.apiVersion, ref.kind))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: ref.name}, clone)).To(Succeed())
		g.Expect(clone.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, ref.template))
		g.Expect(clone.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromGroupKindAnnotation,
			schema.FromAPIVersionAndKind(ref.apiVersion, ref.kind+"Template").GroupKind().String()))
		// Created owned by their Machine (the Machine is created first), so that no ownership is written later.
		g.Expect(clone.GetOwnerReferences()).To(ConsistOf(And(HaveField("Kind", "Machine"), HaveField("UID", m.UID),
			HaveField("Controller", ptr.To(true)), HaveField("BlockOwnerDeletion", ptr.To(true)))))
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(clone), clone)).To(Succeed())
			g.Expect(clone.GetLabels()).To(HaveKeyWithValue(clusterv1.MachineSetNameLabel, "workers"))
		}, timeout, interval).Should(Succeed())
		g.Expect(clone.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "cluster"))
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(schema.FromAPIVersionAndKind(m.Spec.InfrastructureRef.APIVersion, builder.InfraMachineKind))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: m.Name}, infra)).To(Succeed())
	g.Expect(infra.GetLabels()).To(HaveKeyWithValue("from-infra-template", "yes"))
	size, _, _ := unstructured.NestedString(infra.Object, "spec", "size")
	g.Expect(size).To(Equal("small"))

	// The templates get the Cluster as owner, so that they move and go with it.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.infraTemplate), f.infraTemplate)).To(Succeed())
	g.Expect(f.infraTemplate.GetOwnerReferences()).To(ContainElement(HaveField("UID", f.cluster.UID)))

	// Scaling up to 2; the Machine controller reports the Machines Ready.
	patchMS(g, ms, func(ms *clusterv1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](2) })
	g.Eventually(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())
	for _, m := range machinesOf(g, ms) {
		markReady(g, &m)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(ms.Status.Replicas).To(BeEquivalentTo(2))
		g.Expect(ms.Status.FullyLabeledReplicas).To(BeEquivalentTo(2))
		g.Expect(ms.Status.ReadyReplicas).To(BeEquivalentTo(2))
		g.Expect(ms.Status.AvailableReplicas).To(BeEquivalentTo(2))
		g.Expect(ms.Status.V1Beta2.UpToDateReplicas).To(Equal(ptr.To[int32](2)))
		g.Expect(ms.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 2}}))
		g.Expect(ms.Status.ObservedGeneration).To(Equal(ms.Generation))
		g.Expect(ms.Status.Selector).To(Equal("cluster.x-k8s.io/cluster-name=cluster,set=workers"))
		g.Expect(conditions.IsTrue(ms, clusterv1.ReadyCondition)).To(BeTrue())
		g.Expect(conditions.IsV1Beta2True(ms, clusterv1.MachineSetMachinesReadyV1Beta2Condition)).To(BeTrue())
		g.Expect(conditions.GetV1Beta2(ms, clusterv1.MachineSetScalingUpV1Beta2Condition)).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, interval).Should(Succeed())
}

func TestScaleDownDeletesAnnotatedMachineFirst(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 3)
	ms.Spec.DeletePolicy = string(clusterv1.OldestMachineSetDeletePolicy)
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(HaveLen(3)) }, timeout, interval).Should(Succeed())
	machines := machinesOf(g, ms)
	for i := range machines {
		markReady(g, &machines[i])
	}
	victim := machines[1]
	before := victim.DeepCopy()
	victim.Annotations[clusterv1.DeleteMachineAnnotation] = "yes"
	g.Expect(env.Client.Patch(ctx, &victim, client.MergeFrom(before))).To(Succeed())

	patchMS(g, ms, func(ms *clusterv1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](2) })
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), &victim)).To(Succeed())
		g.Expect(victim.DeletionTimestamp.IsZero()).To(BeFalse())
	}, timeout, interval).Should(Succeed())
	for _, m := range machinesOf(g, ms) {
		if m.Name != victim.Name {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s should stay", m.Name)
		}
	}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		c := conditions.GetV1Beta2(ms, clusterv1.MachineSetScalingDownV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal("Scaling down from 3 to 2 replicas"))
	}, timeout, interval).Should(Succeed())

	// Once the Machine controller lets it go, the MachineSet has two Machines and does not replace it.
	removeFinalizers(g, &victim)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(ms.Status.Replicas).To(BeEquivalentTo(2))
		g.Expect(conditions.GetV1Beta2(ms, clusterv1.MachineSetScalingDownV1Beta2Condition)).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(HaveLen(2)) }, "1s", interval).Should(Succeed())
}

func TestAdoptsOrphansOfItsCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)

	infra := builder.V1Beta1.InfraMachine(f.namespace, "orphan")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	orphan := builder.Machine(f.namespace, "orphan", "cluster", infra, nil)
	orphan.Labels["set"] = "workers"
	g.Expect(env.Client.Create(ctx, orphan)).To(Succeed())
	otherCluster := builder.Machine(f.namespace, "other-cluster", "other", infra, nil)
	otherCluster.Labels["set"] = "workers"
	g.Expect(env.Client.Create(ctx, otherCluster)).To(Succeed())
	controlled := builder.Machine(f.namespace, "controlled", "cluster", infra, nil)
	controlled.Labels["set"] = "workers"
	controlled.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Owner", Name: "o", UID: "1234", Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, controlled)).To(Succeed())

	ms := f.machineSet("workers", 1)
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), orphan)).To(Succeed())
		g.Expect(metav1.GetControllerOf(orphan)).To(HaveField("Name", "workers"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(ms.Status.Replicas).To(BeEquivalentTo(1))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machinesOf(g, ms)).To(HaveLen(1), "the adopted Machine is enough")
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(otherCluster), otherCluster)).To(Succeed())
		g.Expect(metav1.GetControllerOf(otherCluster)).To(BeNil())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(controlled), controlled)).To(Succeed())
		g.Expect(metav1.GetControllerOf(controlled).Name).To(Equal("o"))
	}, "1s", interval).Should(Succeed())
}

func TestPropagatesTemplateMetadataInPlace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 2)
	ms.Spec.Template.Labels["old"] = "label"
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())
	original := machinesOf(g, ms)
	// A label someone else sets stays.
	m := original[0]
	before := m.DeepCopy()
	m.Labels["user"] = "keep"
	g.Expect(env.Client.Patch(ctx, &m, client.MergeFrom(before))).To(Succeed())

	patchMS(g, ms, func(ms *clusterv1.MachineSet) {
		delete(ms.Spec.Template.Labels, "old")
		ms.Spec.Template.Labels["tier"] = "gold"
		ms.Spec.Template.Annotations["note"] = "changed"
		ms.Spec.Template.Spec.NodeDrainTimeout = &metav1.Duration{Duration: 90_000_000_000}
		ms.Spec.Template.Spec.Taints = []clusterv1.MachineTaint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}
	})
	g.Eventually(func(g Gomega) {
		machines := machinesOf(g, ms)
		g.Expect(machines).To(HaveLen(2))
		for _, m := range machines {
			g.Expect(m.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(m.Labels).NotTo(HaveKey("old"))
			g.Expect(m.Annotations).To(HaveKeyWithValue("note", "changed"))
			g.Expect(m.Spec.NodeDrainTimeout).To(Equal(&metav1.Duration{Duration: 90_000_000_000}))
			g.Expect(m.Spec.Taints).To(Equal([]clusterv1.MachineTaint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule, Propagation: clusterv1.MachineTaintPropagationAlways}}))
			infra := &metav1.PartialObjectMetadata{}
			infra.SetGroupVersionKind(schema.FromAPIVersionAndKind(m.Spec.InfrastructureRef.APIVersion, m.Spec.InfrastructureRef.Kind))
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: m.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
			g.Expect(infra.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(infra.Labels).NotTo(HaveKey("old"))
			g.Expect(infra.Labels).To(HaveKeyWithValue("from-infra-template", "yes"))
			g.Expect(infra.Annotations).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, "infra-template"))
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&m), &m)).To(Succeed())
	g.Expect(m.Labels).To(HaveKeyWithValue("user", "keep"))
	names := func(ms []clusterv1.Machine) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	g.Expect(names(machinesOf(g, ms))).To(ConsistOf(names(original)), "no Machine is replaced")
}

func TestSelectorNotMatchingTemplateBlocksCreation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 2)
	ms.Spec.Template.Labels = map[string]string{"set": "something-else"}
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		c := conditions.GetV1Beta2(ms, clusterv1.MachineSetScalingUpV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal("Scaling up from 0 to 2 replicas is blocked because:\n" +
			"* Spec.selector does not match the labels of spec.template.metadata"))
		g.Expect(conditions.Get(ms, clusterv1.MachineSetMachinesCreatedCondition)).To(HaveField("Reason", clusterv1.MachineSetInvalidConfigurationReason))
		g.Expect(ms.Status.FailureReason).To(Equal(ptr.To(clusterv1.InvalidConfigurationMachineSetError)))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(BeEmpty()) }, "1s", interval).Should(Succeed())

	// Fixing the template lets the MachineSet work.
	patchMS(g, ms, func(ms *clusterv1.MachineSet) { ms.Spec.Template.Labels["set"] = "workers" })
	g.Eventually(func(g Gomega) {
		g.Expect(machinesOf(g, ms)).To(HaveLen(2))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(ms.Status.FailureReason).To(BeNil())
	}, timeout, interval).Should(Succeed())
}

func TestDeletionWaitsForMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 2)
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		machines := machinesOf(g, ms)
		g.Expect(machines).To(HaveLen(2))
		for _, m := range machines {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeFalse())
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(conditions.GetV1Beta2(ms, clusterv1.MachineSetDeletingV1Beta2Condition)).To(HaveField("Message", "Deleting 2 Machines"))
	}, timeout, interval).Should(Succeed())
	for _, m := range machinesOf(g, ms) {
		removeFinalizers(g, &m)
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms))
	}, timeout, interval).Should(BeTrue())
}

func TestPausedMachineSetOnlyReportsPaused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 2)
	ms.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(conditions.IsV1Beta2True(ms, clusterv1.PausedV1Beta2Condition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(machinesOf(g, ms)).To(BeEmpty()) }, "1s", interval).Should(Succeed())

	patchMS(g, ms, func(ms *clusterv1.MachineSet) { delete(ms.Annotations, clusterv1.PausedAnnotation) })
	g.Eventually(func(g Gomega) {
		g.Expect(machinesOf(g, ms)).To(HaveLen(2))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), ms)).To(Succeed())
		g.Expect(conditions.GetV1Beta2(ms, clusterv1.PausedV1Beta2Condition)).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, interval).Should(Succeed())
}

func patchMS(g Gomega, ms *clusterv1.MachineSet, mutate func(*clusterv1.MachineSet)) {
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ms), ms); err != nil {
			return err
		}
		before := ms.DeepCopy()
		mutate(ms)
		return env.Client.Patch(context.Background(), ms, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}, timeout, interval).Should(Succeed())
}

// A Machine whose clone was never created (the manager stopped between creating the Machine and its
// clones) gets the clone once the Machine controller reports it missing; a provisioned Machine does not.
func TestCreatesAMachinesMissingCloneAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	ms := f.machineSet("workers", 1)
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	var m clusterv1.Machine
	g.Eventually(func(g Gomega) {
		machines := machinesOf(g, ms)
		g.Expect(machines).To(HaveLen(1))
		m = machines[0]
	}, timeout, interval).Should(Succeed())
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(schema.FromAPIVersionAndKind(m.Spec.InfrastructureRef.APIVersion, m.Spec.InfrastructureRef.Kind))
	infra.SetNamespace(f.namespace)
	infra.SetName(m.Spec.InfrastructureRef.Name)
	// The Machine is created before its clones: wait for the clone before deleting it.
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, infra)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra))
	}, timeout, interval).Should(BeTrue())

	// What the Machine controller writes once the Machine's grace period for its clones is over.
	reportMissing := func(m *clusterv1.Machine) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		before := m.DeepCopy()
		m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{{
			Type: clusterv1.MachineInfrastructureReadyV1Beta2Condition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineInfrastructureDoesNotExistV1Beta2Reason, Message: "InfraMachine does not exist",
			LastTransitionTime: metav1.Now(),
		}}}
		g.Expect(env.Client.Status().Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	}
	reportMissing(&m)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Expect(infra.GetOwnerReferences()).To(ConsistOf(And(HaveField("Kind", "Machine"), HaveField("UID", m.UID),
		HaveField("Controller", ptr.To(true)))))
	g.Expect(infra.GetLabels()).To(HaveKeyWithValue("from-infra-template", "yes"))
	g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, f.infraTemplate.GetName()))
	size, _, _ := unstructured.NestedString(infra.Object, "spec", "size")
	g.Expect(size).To(Equal("small"))

	// Once the infrastructure was ready, a deleted InfraMachine is the Machine's to report, not recreated.
	// The Machine controller reports the clone ready and the Machine Ready (over the DoesNotExist it
	// reported above); the MachineSet counting the Machine ready shows its controller saw that. Without
	// that wait, on a loaded machine a reconcile from a cache still showing the DoesNotExist report could
	// run after the deletion below and recreate the clone.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&m), &m)).To(Succeed())
	before := m.DeepCopy()
	m.Status.InfrastructureReady = true
	m.Status.V1Beta2 = &clusterv1.MachineV1Beta2Status{Conditions: []metav1.Condition{
		{Type: clusterv1.MachineInfrastructureReadyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()},
		{Type: clusterv1.MachineReadyV1Beta2Condition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()},
	}}
	g.Expect(env.Client.Status().Patch(ctx, &m, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &clusterv1.MachineSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ms), got)).To(Succeed())
		g.Expect(got.Status.ReadyReplicas).To(Equal(int32(1)))
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, infra)).To(Succeed())
	reportMissing(&m)
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(infra), infra))
	}, 3*time.Second, interval).Should(BeTrue())
}

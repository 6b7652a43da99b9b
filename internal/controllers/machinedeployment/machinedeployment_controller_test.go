package machinedeployment

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

func TestCreatesMachineSetAndMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 3)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())

	msName := waitForRunning(g, md, 3)
	g.Expect(md.Finalizers).To(ContainElement(clusterv1.MachineDeploymentFinalizer))
	g.Expect(md.OwnerReferences).To(ContainElement(And(HaveField("Kind", "Cluster"), HaveField("UID", f.cluster.UID))))
	g.Expect(md.Annotations).To(HaveKeyWithValue(clusterv1.RevisionAnnotation, "1"))
	g.Expect(md.Status.UnavailableReplicas).To(BeZero())
	g.Expect(md.Status.V1Beta2.ReadyReplicas).To(Equal(ptr.To[int32](3)))
	g.Expect(md.Status.V1Beta2.AvailableReplicas).To(Equal(ptr.To[int32](3)))
	g.Expect(md.Status.V1Beta2.UpToDateReplicas).To(Equal(ptr.To[int32](3)))
	g.Expect(md.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 3}}))
	g.Expect(md.Status.Selector).To(Equal("cluster.x-k8s.io/cluster-name=cluster,cluster.x-k8s.io/deployment-name=workers,pool=workers"))
	g.Expect(conditions.IsTrue(md, clusterv1.ReadyCondition)).To(BeTrue())
	for _, c := range []string{
		clusterv1.MachineDeploymentAvailableV1Beta2Condition, clusterv1.MachineDeploymentMachinesReadyV1Beta2Condition,
		clusterv1.MachineDeploymentMachinesUpToDateV1Beta2Condition,
	} {
		g.Expect(conditions.IsV1Beta2True(md, c)).To(BeTrue(), c)
	}
	for _, c := range []string{
		clusterv1.MachineDeploymentRollingOutV1Beta2Condition, clusterv1.MachineDeploymentScalingUpV1Beta2Condition,
		clusterv1.MachineDeploymentScalingDownV1Beta2Condition, clusterv1.MachineDeploymentDeletingV1Beta2Condition,
		clusterv1.PausedV1Beta2Condition,
	} {
		g.Expect(conditions.GetV1Beta2(md, c)).To(HaveField("Status", metav1.ConditionFalse), c)
	}

	machineSets := machineSetsOf(g, md)
	g.Expect(machineSets).To(HaveLen(1))
	ms := machineSets[0]
	g.Expect(ms.Name).To(Equal(msName))
	g.Expect(ms.Name).To(HavePrefix("workers-"))
	hash := ms.Labels[clusterv1.MachineDeploymentUniqueLabel]
	g.Expect(hash).To(HavePrefix(templateHash(&md.Spec.Template) + "-"))
	g.Expect(ms.Labels).To(Equal(map[string]string{
		"pool": "workers", clusterv1.ClusterNameLabel: "cluster", clusterv1.MachineDeploymentNameLabel: "workers",
		clusterv1.MachineDeploymentUniqueLabel: hash,
	}))
	g.Expect(ms.Spec.Selector.MatchLabels).To(Equal(map[string]string{
		"pool": "workers", clusterv1.ClusterNameLabel: "cluster", clusterv1.MachineDeploymentNameLabel: "workers",
		clusterv1.MachineDeploymentUniqueLabel: hash,
	}))
	g.Expect(ms.Annotations).To(HaveKeyWithValue(clusterv1.RevisionAnnotation, "1"))
	g.Expect(ms.Annotations).To(HaveKeyWithValue(clusterv1.DesiredReplicasAnnotation, "3"))
	g.Expect(ms.Annotations).To(HaveKeyWithValue(clusterv1.MaxReplicasAnnotation, "4"))
	g.Expect(*metav1.GetControllerOf(&ms)).To(HaveField("UID", md.UID))
	g.Expect(ms.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 3}}))

	for _, m := range machinesOf(g, md)[ms.Name] {
		g.Expect(m.Labels).To(Equal(map[string]string{
			"pool": "workers", clusterv1.ClusterNameLabel: "cluster", clusterv1.MachineDeploymentNameLabel: "workers",
			clusterv1.MachineDeploymentUniqueLabel: hash, clusterv1.MachineSetNameLabel: ms.Name,
		}))
		for _, ref := range []struct {
			apiVersion, kind, name, template string
		}{
			{m.Spec.InfrastructureRef.APIVersion, m.Spec.InfrastructureRef.Kind, m.Spec.InfrastructureRef.Name, f.infraTemplate.GetName()},
			{m.Spec.Bootstrap.ConfigRef.APIVersion, m.Spec.Bootstrap.ConfigRef.Kind, m.Spec.Bootstrap.ConfigRef.Name, f.bootstrapTemplate.GetName()},
		} {
			clone := &unstructured.Unstructured{}
			clone.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.apiVersion, ref.kind))
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: ref.name}, clone)).To(Succeed())
			g.Expect(clone.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, ref.template))
			g.Expect(clone.GetAnnotations()).To(HaveKey(clusterv1.TemplateClonedFromGroupKindAnnotation))
			// Owned by their Machine from creation (the MachineSet creates the Machine first).
			g.Expect(clone.GetOwnerReferences()).To(ConsistOf(And(HaveField("Kind", "Machine"), HaveField("UID", m.UID))))
			g.Expect(clone.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "cluster"))
		}
	}
}

// TestTopologyOwnedMachineSetHasTheTopologyFinalizer: the MachineSet of a MachineDeployment of a managed
// topology is created with the topology MachineSet controller's finalizer (which keeps its templates until
// it is gone), so that no patch adding it races the MachineSet controller's first status write; other
// MachineSets get only their own finalizer. (No topology MachineSet controller runs here to add it.)
func TestTopologyOwnedMachineSetHasTheTopologyFinalizer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	owned := f.machineDeployment("owned", 1)
	owned.Labels = map[string]string{clusterv1.ClusterTopologyOwnedLabel: ""}
	owned.Spec.Template.Labels[clusterv1.ClusterTopologyOwnedLabel] = ""
	plain := f.machineDeployment("plain", 1)
	for _, md := range []*clusterv1.MachineDeployment{owned, plain} {
		g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	}
	for md, want := range map[*clusterv1.MachineDeployment][]string{
		owned: {clusterv1.MachineSetFinalizer, clusterv1.MachineSetTopologyFinalizer},
		plain: {clusterv1.MachineSetFinalizer},
	} {
		g.Eventually(func(g Gomega) {
			machineSets := machineSetsOf(g, md)
			g.Expect(machineSets).To(HaveLen(1))
			g.Expect(machineSets[0].Finalizers).To(ConsistOf(want), md.Name)
		}, timeout, interval).Should(Succeed())
	}
}

func TestRollingUpdateStaysWithinSurgeAndUnavailability(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 3)
	md.Spec.Strategy = &clusterv1.MachineDeploymentStrategy{
		Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
		RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{
			MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
		},
	}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	oldMS := waitForRunning(g, md, 3)
	f.machines.resetSamples()

	patchMD(g, md, func(md *clusterv1.MachineDeployment) { md.Spec.Template.Spec.Version = ptr.To("v1.32.0") })
	newMS := ""
	g.Eventually(func(g Gomega) {
		newMS = waitForRunning(g, md, 3)
		g.Expect(newMS).NotTo(Equal(oldMS))
	}, timeout, interval).Should(Succeed())
	for _, m := range machinesOf(g, md)[newMS] {
		g.Expect(m.Spec.Version).To(Equal(ptr.To("v1.32.0")))
	}
	g.Expect(md.Status.Versions).To(Equal([]clusterv1.StatusVersion{{Version: "v1.32.0", Replicas: 3}}))

	samples := f.machines.getSamples()
	t.Logf("(available, total) during the rollout: %v", samples)
	g.Expect(len(samples)).To(BeNumerically(">", 3), "the rollout went through intermediate states")
	for _, s := range samples {
		g.Expect(s.available).To(BeNumerically(">=", 3), "availability dropped below 3: %v", samples)
		g.Expect(s.total).To(BeNumerically("<=", 4), "more than 4 Machines: %v", samples)
	}
	g.Expect(md.Annotations).To(HaveKeyWithValue(clusterv1.RevisionAnnotation, "2"))
	// The old MachineSet is kept, scaled to zero, as revisionHistoryLimit defaults to 1.
	g.Eventually(func(g Gomega) {
		names := map[string]int32{}
		for _, ms := range machineSetsOf(g, md) {
			names[ms.Name] = *ms.Spec.Replicas
		}
		g.Expect(names).To(Equal(map[string]int32{oldMS: 0, newMS: 3}))
	}, timeout, interval).Should(Succeed())
}

func TestOnDeleteReplacesOnlyDeletedMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 3)
	md.Spec.Strategy = &clusterv1.MachineDeploymentStrategy{Type: clusterv1.OnDeleteMachineDeploymentStrategyType}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	oldMS := waitForRunning(g, md, 3)

	patchMD(g, md, func(md *clusterv1.MachineDeployment) { md.Spec.Template.Spec.Version = ptr.To("v1.32.0") })
	g.Eventually(func(g Gomega) { g.Expect(machineSetsOf(g, md)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		machines := machinesOf(g, md)
		g.Expect(machines).To(HaveLen(1))
		g.Expect(machines[oldMS]).To(HaveLen(3))
	}, "2s", interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)).To(Succeed())
		g.Expect(conditions.GetV1Beta2(md, clusterv1.MachineDeploymentRollingOutV1Beta2Condition)).To(HaveField("Message",
			"Rolling out 3 not up-to-date replicas\n* Version v1.31.0, v1.32.0 required"))
		// The MachineSet tells its Machines they are out of date.
		for _, m := range machinesOf(g, md)[oldMS] {
			c := conditions.GetV1Beta2(&m, clusterv1.MachineUpToDateV1Beta2Condition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(*c).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Message", "* Version v1.31.0, v1.32.0 required")))
		}
		g.Expect(conditions.GetV1Beta2(md, clusterv1.MachineDeploymentMachinesUpToDateV1Beta2Condition)).To(HaveField("Status", metav1.ConditionFalse))
		g.Expect(md.Status.V1Beta2.UpToDateReplicas).To(Equal(ptr.To[int32](0)))
	}, timeout, interval).Should(Succeed())

	// The user deletes one old Machine: one new Machine replaces it, and only it.
	victim := machinesOf(g, md)[oldMS][0]
	g.Expect(env.Client.Delete(ctx, &victim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		machines := machinesOf(g, md)
		g.Expect(machines).To(HaveLen(2))
		g.Expect(machines[oldMS]).To(HaveLen(2))
		for ms, list := range machines {
			if ms != oldMS {
				g.Expect(list).To(HaveLen(1))
				g.Expect(list[0].Spec.Version).To(Equal(ptr.To("v1.32.0")))
			}
		}
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machinesOf(g, md)[oldMS]).To(HaveLen(2))
	}, "1s", interval).Should(Succeed())
}

func TestRolloutAfterInThePastRollsOut(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	oldMS := waitForRunning(g, md, 2)
	old := machineSetsOf(g, md)[0]
	// Timestamps have a resolution of one second.
	for !time.Now().Truncate(time.Second).After(old.CreationTimestamp.Time) {
		time.Sleep(100 * time.Millisecond)
	}

	patchMD(g, md, func(md *clusterv1.MachineDeployment) { md.Spec.RolloutAfter = ptr.To(metav1.Now()) })
	g.Eventually(func(g Gomega) {
		newMS := waitForRunning(g, md, 2)
		g.Expect(newMS).NotTo(Equal(oldMS))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machineSetsOf(g, md)).To(HaveLen(2), "one rollout, not a new MachineSet per reconcile")
	}, "2s", interval).Should(Succeed())
}

func TestPausedMachineDeploymentDoesNotRollOut(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	oldMS := waitForRunning(g, md, 2)

	patchMD(g, md, func(md *clusterv1.MachineDeployment) {
		md.Spec.Paused = true
		md.Spec.Template.Spec.Version = ptr.To("v1.32.0")
	})
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)).To(Succeed())
		g.Expect(md.Status.ObservedGeneration).To(Equal(md.Generation))
		c := conditions.GetV1Beta2(md, clusterv1.MachineDeploymentRollingOutV1Beta2Condition)
		g.Expect(c).To(HaveField("Status", metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("The rollout waits: spec.paused is set"))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machineSetsOf(g, md)).To(HaveLen(1))
	}, "2s", interval).Should(Succeed())

	// Scaling still works while paused.
	patchMD(g, md, func(md *clusterv1.MachineDeployment) { md.Spec.Replicas = ptr.To[int32](3) })
	g.Eventually(func(g Gomega) { g.Expect(machinesOf(g, md)[oldMS]).To(HaveLen(3)) }, timeout, interval).Should(Succeed())

	patchMD(g, md, func(md *clusterv1.MachineDeployment) { md.Spec.Paused = false })
	g.Eventually(func(g Gomega) {
		newMS := waitForRunning(g, md, 3)
		g.Expect(newMS).NotTo(Equal(oldMS))
	}, timeout, interval).Should(Succeed())
}

func TestTemplateLabelsPropagateInPlace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	msName := waitForRunning(g, md, 2)

	patchMD(g, md, func(md *clusterv1.MachineDeployment) {
		md.Spec.Template.Labels["tier"] = "gold"
		md.Spec.Template.Annotations = map[string]string{"note": "hello"}
		md.Spec.Template.Spec.NodeDrainTimeout = &metav1.Duration{Duration: time.Minute}
	})
	g.Eventually(func(g Gomega) {
		machines := machinesOf(g, md)
		g.Expect(machines).To(HaveKey(msName))
		g.Expect(machines[msName]).To(HaveLen(2))
		for _, m := range machines[msName] {
			g.Expect(m.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(m.Annotations).To(HaveKeyWithValue("note", "hello"))
			g.Expect(m.Spec.NodeDrainTimeout).To(Equal(&metav1.Duration{Duration: time.Minute}))
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(machineSetsOf(g, md)).To(HaveLen(1), "no new MachineSet")
	g.Expect(machinesOf(g, md)).To(HaveLen(1))

	// Removing the label removes it from the Machines too.
	patchMD(g, md, func(md *clusterv1.MachineDeployment) { delete(md.Spec.Template.Labels, "tier") })
	g.Eventually(func(g Gomega) {
		for _, m := range machinesOf(g, md)[msName] {
			g.Expect(m.Labels).NotTo(HaveKey("tier"))
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(machineSetsOf(g, md)).To(HaveLen(1), "no new MachineSet")
}

func TestRestoresOwnershipOfItsMachineSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 1)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	waitForRunning(g, md, 1)

	ms := machineSetsOf(g, md)[0]
	before := ms.DeepCopy()
	ms.OwnerReferences = nil
	g.Expect(env.Client.Patch(ctx, &ms, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&ms), &ms)).To(Succeed())
		g.Expect(metav1.GetControllerOf(&ms)).NotTo(BeNil())
		g.Expect(*metav1.GetControllerOf(&ms)).To(And(HaveField("Kind", "MachineDeployment"), HaveField("UID", md.UID)))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(machineSetsOf(g, md)).To(HaveLen(1), "the MachineSet is adopted back, not replaced")
	}, "1s", interval).Should(Succeed())
}

func TestAdoptsOrphanMachine(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	msName := waitForRunning(g, md, 2)
	ms := machineSetsOf(g, md)[0]

	// One Machine is marked for deletion, so that adopting another one makes the MachineSet delete it.
	victim := machinesOf(g, md)[msName][0]
	before := victim.DeepCopy()
	victim.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}
	g.Expect(env.Client.Patch(ctx, &victim, client.MergeFrom(before))).To(Succeed())

	// A Machine carrying the MachineSet's labels but no owner, for example restored from a backup.
	infra := builder.V1Beta1.InfraMachine(f.namespace, "orphan")
	g.Expect(env.Client.Create(ctx, infra)).To(Succeed())
	orphan := builder.Machine(f.namespace, "orphan", "cluster", infra, nil)
	orphan.Labels = ms.Spec.Template.Labels
	g.Expect(env.Client.Create(ctx, orphan)).To(Succeed())

	// The MachineSet adopts it, has one Machine too many, and deletes the marked one.
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), orphan)).To(Succeed())
		g.Expect(metav1.GetControllerOf(orphan)).To(HaveField("Name", msName))
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(&victim), &victim)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the marked Machine is deleted")
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)).To(Succeed())
		g.Expect(md.Status.Replicas).To(BeEquivalentTo(2))
		g.Expect(machinesOf(g, md)[msName]).To(HaveLen(2))
	}, timeout, interval).Should(Succeed())
}

func TestSelectorNotMatchingTemplateIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	md.Spec.Template.Labels = map[string]string{"pool": "other"}
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)).To(Succeed())
		c := conditions.GetV1Beta2(md, clusterv1.MachineDeploymentScalingUpV1Beta2Condition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal("Scaling up from 0 to 2 replicas is blocked because:\n" +
			"* Spec.selector does not match the labels of spec.template.metadata"))
		g.Expect(md.Status.Phase).To(Equal(string(clusterv1.MachineDeploymentPhaseFailed)))
		g.Expect(conditions.Get(md, clusterv1.MachineDeploymentMachineSetReadyCondition)).To(
			HaveField("Reason", clusterv1.MachineDeploymentInvalidConfigurationReason))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(machineSetsOf(g, md)).To(BeEmpty()) }, "1s", interval).Should(Succeed())
}

func TestDeletionRemovesMachineSetsAndMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t)
	md := f.machineDeployment("workers", 2)
	g.Expect(env.Client.Create(ctx, md)).To(Succeed())
	waitForRunning(g, md, 2)

	g.Expect(env.Client.Delete(ctx, md)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(md), md)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the MachineDeployment is gone")
		list := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.namespace))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
		msList := &clusterv1.MachineSetList{}
		g.Expect(env.Client.List(ctx, msList, client.InNamespace(f.namespace))).To(Succeed())
		g.Expect(msList.Items).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
}

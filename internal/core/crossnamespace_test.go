package core_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/test/builder"
)

// TestCrossNamespaceClusterAndBootstrapReferencesAreRefused completes TestCrossNamespaceReferencesAreRefused
// for the other references of issue 16: a Cluster's infrastructureRef and controlPlaneRef, and a Machine's
// bootstrap.configRef, naming namespace B are refused at admission; with the admission policy removed,
// the controllers say they refuse them, and deleting the Cluster (and its Machine) leaves B's objects alone.
func TestCrossNamespaceClusterAndBootstrapReferencesAreRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA, nsB := env.NewNamespace(t), env.NewNamespace(t)
	remove := applyAdmissionPolicy(t)
	p := builder.V1Beta1

	theirInfra := p.InfraCluster(nsB, "their-infra")
	theirCP := p.ControlPlane(nsB, "their-cp")
	theirBootstrap := p.BootstrapConfig(nsB, "their-bootstrap")
	ownInfra := p.InfraCluster(nsA, "own-infra")
	ownInfraMachine := p.InfraMachine(nsA, "own-machine")
	for _, obj := range []*unstructured.Unstructured{theirInfra, theirCP, theirBootstrap, ownInfra, ownInfraMachine} {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
	}

	must := func(field, kind string) string {
		return field + " names namespace " + nsB + ": Cluster API references must stay in the namespace of the " + kind + " (" + nsA + ")"
	}
	machine := builder.Machine(nsA, "intruder", "c", ownInfraMachine, theirBootstrap)
	tests := []struct {
		name string
		obj  client.Object
		want string
	}{
		{name: "a Cluster's infrastructureRef", obj: builder.Cluster(nsA, "c", theirInfra, nil), want: must("spec.infrastructureRef", "Cluster")},
		{name: "a Cluster's controlPlaneRef", obj: builder.Cluster(nsA, "c", ownInfra, theirCP), want: must("spec.controlPlaneRef", "Cluster")},
		{name: "a Machine's bootstrap.configRef", obj: machine, want: must("spec.bootstrap.configRef", "Machine")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// The first may meet the API server before the policy is in force: delete what got through.
			g.Eventually(createRefusal(ctx, tt.obj), 30*time.Second, 250*time.Millisecond).Should(ContainSubstring(tt.want))
		})
	}
	// Clean up whatever got through before the policy was in force, and wait until it is gone (saying what
	// is left, and why, when it is not).
	g.Eventually(func(g Gomega) {
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, machine.DeepCopy()))).To(Succeed())
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, builder.Cluster(nsA, "c", nil, nil)))).To(Succeed())
		m := &clusterv1.Machine{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(machine), m)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Machine is left: %v, finalizers %v, deleting since %v, conditions %+v", err, m.Finalizers, m.DeletionTimestamp, m.Status.V1Beta2)
		c := &clusterv1.Cluster{}
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "c"}, c)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Cluster is left: %v, finalizers %v, deleting since %v, conditions %+v", err, c.Finalizers, c.DeletionTimestamp, c.Status.V1Beta2)
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	// Without the policy, the controllers refuse the references themselves.
	remove()
	cluster := builder.Cluster(nsA, "c", theirInfra, theirCP)
	g.Eventually(func() error { return env.Client.Create(ctx, cluster.DeepCopy()) }, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(env.Client.Create(ctx, machine.DeepCopy())).To(Succeed())
	refusing := func(obj *unstructured.Unstructured) string {
		return "Refusing " + obj.GetKind() + " " + obj.GetName() + " in namespace " + nsB
	}
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
		infra := conditions.GetV1Beta2(c, clusterv1.ClusterInfrastructureReadyV1Beta2Condition)
		g.Expect(infra).NotTo(BeNil())
		g.Expect(infra.Message).To(HavePrefix(refusing(theirInfra)))
		cp := conditions.GetV1Beta2(c, clusterv1.ClusterControlPlaneAvailableV1Beta2Condition)
		g.Expect(cp).NotTo(BeNil())
		g.Expect(cp.Message).To(HavePrefix(refusing(theirCP)))
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), m)).To(Succeed())
		bootstrap := conditions.GetV1Beta2(m, clusterv1.MachineBootstrapConfigReadyV1Beta2Condition)
		g.Expect(bootstrap).NotTo(BeNil())
		g.Expect(bootstrap.Status).NotTo(Equal(metav1.ConditionTrue))
		g.Expect(bootstrap.Message).To(HavePrefix(refusing(theirBootstrap)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, cluster.DeepCopy())).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), &clusterv1.Machine{}))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), &clusterv1.Cluster{}))).To(BeTrue())
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed(), "the Cluster's and the Machine's deletions complete")
	for _, theirs := range []*unstructured.Unstructured{theirInfra, theirCP, theirBootstrap} {
		expectLeftAlone(ctx, g, theirs)
	}
}

// TestCrossNamespaceReferenceFromBeforeThePolicy: an object that got a reference to another namespace
// before the admission policy was in force (created earlier, or in the moment the policy takes to apply)
// can still be updated without touching the reference, and deleted: the finalizers' removal is not
// refused, so the deletion completes. Bringing in another such reference is still refused.
func TestCrossNamespaceReferenceFromBeforeThePolicy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nsA, nsB, nsC := env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t)
	p := builder.V1Beta1
	theirInfra := p.InfraCluster(nsB, "their-infra")
	g.Expect(env.Client.Create(ctx, theirInfra)).To(Succeed())
	const hold = "test.capstan.dev/hold"
	old := builder.Cluster(nsA, "old", theirInfra, nil)
	old.Finalizers = []string{hold}
	g.Expect(env.Client.Create(ctx, old)).To(Succeed())

	applyAdmissionPolicy(t)
	probe := builder.Cluster(nsA, "probe", theirInfra, nil)
	g.Eventually(createRefusal(ctx, probe), 30*time.Second, 250*time.Millisecond).Should(ContainSubstring("spec.infrastructureRef names namespace "+nsB), "the policy is in force")

	// The Cluster controller writes the Cluster too: a conflict is tried again, for up to about 10 s.
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 1.5, Steps: 12, Cap: 2 * time.Second}
	update := func(change func(c *clusterv1.Cluster)) error {
		return retry.RetryOnConflict(backoff, func() error {
			c := &clusterv1.Cluster{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), c); err != nil {
				return err
			}
			change(c)
			return env.Client.Update(ctx, c)
		})
	}
	g.Expect(update(func(c *clusterv1.Cluster) { c.Labels = map[string]string{"team": "a"} })).To(Succeed(),
		"an update that leaves the reference as it is passes")
	g.Expect(update(func(c *clusterv1.Cluster) { c.Spec.InfrastructureRef.Namespace = nsC })).To(MatchError(ContainSubstring(
		"spec.infrastructureRef names namespace "+nsC+": Cluster API references must stay in the namespace of the Cluster ("+nsA+")")),
		"an update that points the reference at yet another namespace is refused")

	g.Expect(env.Client.Delete(ctx, old.DeepCopy())).To(Succeed())
	g.Expect(update(func(c *clusterv1.Cluster) { controllerutil.RemoveFinalizer(c, hold) })).To(Succeed(),
		"a deleting Cluster's finalizer can be removed")
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(old), &clusterv1.Cluster{}))
	}, 60*time.Second, 250*time.Millisecond).Should(BeTrue(), "the Cluster controller removes its finalizer too, and the deletion completes")
	expectLeftAlone(ctx, g, theirInfra)
}

package move_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clusterctl/move"
	"github.com/capstan-dev/capstan/internal/clusterctl/move/movetest"
)

var threeClusters = []string{"alpha", "bravo", "charlie"}

// objectsPerFixture is how many objects a fixture of three clusters moves: 20 per Cluster, the ClusterClass
// and its template, the ConfigMap labelled move, the identity and its Secret.
const objectsPerFixture = 3*20 + 2 + 1 + 2

func TestMoveThreeClusters(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, threeClusters...)
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(before).To(HaveLen(objectsPerFixture))
	sourceUIDs, err := movetest.UIDs(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())

	res, err := move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())

	problems := movetest.Verify(ctx, source.Client, target.Client, ns, before)
	g.Expect(problems).To(BeEmpty(), strings.Join(problems, "\n"))
	g.Expect(ownObjects(res.Plan.Objects(), ns)).To(Equal(objectsPerFixture))
	g.Expect(res.Plan.Summary()).To(HaveSuffix(" objects (3 Clusters, 1 ClusterClass)"))
	g.Expect(res.Resumed).To(BeEmpty())
	g.Expect(res.Plan.NotMoved).To(ContainElement(move.NotMoved{
		Ref:    move.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: movetest.UnrelatedConfigMap},
		Reason: "not linked to a Cluster, ClusterClass or ClusterResourceSet and not labelled clusterctl.cluster.x-k8s.io/move",
	}))

	// New UIDs in the target.
	targetUIDs, err := movetest.UIDs(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	for k, uid := range targetUIDs {
		if k == "ConfigMap/"+movetest.UnrelatedConfigMap {
			continue
		}
		g.Expect(uid).NotTo(Equal(sourceUIDs[k]), k)
	}
	// Status is never restored.
	cluster := &clusterv1.Cluster{}
	g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alpha"}, cluster)).To(Succeed())
	g.Expect(cluster.Status.InfrastructureReady).To(BeFalse())
	g.Expect(cluster.Finalizers).To(ConsistOf("cluster.cluster.x-k8s.io"))
}

func TestMoveResumesAfterFailureWhileDeleting(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "delta")
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())

	// The source refuses the deletion of the Cluster (the last object deleted): the move stops with
	// everything else deleted and says that running it again finishes it.
	failed := errors.New("injected failure")
	opts := move.Options{Namespace: ns, Backoffs: fastBackoffs(), Checkpoint: func(name string) {
		if name == "delete Machine "+ns+"/delta-cp-0" {
			panic(failed)
		}
	}}
	func() {
		defer func() {
			g.Expect(recover()).To(Equal(failed))
		}()
		_, _ = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), opts)
	}()
	journal := &corev1.ConfigMap{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: move.JournalName}, journal)).To(Succeed())
	g.Expect(journal.Data["journal.json"]).To(ContainSubstring(`"phase":"Deleting"`))

	// A dry run says that a move is in progress.
	plan, err := move.DryRun(ctx, clusterOf(t, source, "source"), nil, move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Problems).To(ContainElement(ContainSubstring("was interrupted while deleting the moved objects from the source")))

	// Another destination is refused: objects were deleted from the source already.
	_, err = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "elsewhere"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	var pe *move.PreflightError
	g.Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("to cluster target was interrupted after objects were deleted"))

	// Someone deletes, from the target, an object already deleted from the source: the resumed move
	// says it is lost and finishes.
	lost := &corev1.Secret{}
	lost.Namespace, lost.Name = ns, "delta-md-0-x7k2p-a-bootstrap"
	err = source.Client.Get(ctx, client.ObjectKeyFromObject(lost), &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Secret should be gone from the source already")
	g.Expect(target.Client.Delete(ctx, lost)).To(Succeed())
	delete(before, "Secret/"+ns+"/"+lost.Name)

	res, err := move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Resumed).To(Equal(move.PhaseDeleting))
	g.Expect(res.Warnings).To(ConsistOf("1 object is neither in the source nor in the target (deleted from the target during the move): Secret " + ns + "/" + lost.Name))
	problems := movetest.Verify(ctx, source.Client, target.Client, ns, before)
	g.Expect(problems).To(BeEmpty(), strings.Join(problems, "\n"))
}

func TestMoveUndoesAFailedCopy(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "echo")
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())

	// Something deletes a Machine's bootstrap Secret while the copy runs.
	opts := move.Options{Namespace: ns, Backoffs: fastBackoffs(), Checkpoint: func(name string) {
		if name == "create Machine "+ns+"/echo-md-0-x7k2p-a" {
			s := &corev1.Secret{}
			s.Namespace, s.Name = ns, "echo-md-0-x7k2p-a-bootstrap"
			g.Expect(source.Client.Delete(context.Background(), s)).To(Succeed())
		}
	}}
	_, err = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), opts)
	var me *move.Error
	g.Expect(errors.As(err, &me)).To(BeTrue(), "%v", err)
	g.Expect(me.RolledBack).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("Secret " + ns + "/echo-md-0-x7k2p-a-bootstrap disappeared from the source"))
	g.Expect(err.Error()).To(ContainSubstring("the move was undone"))

	// The source is as before (minus the deleted Secret) and unpaused; the target has none of the copies.
	after, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	delete(before, "Secret/"+ns+"/echo-md-0-x7k2p-a-bootstrap")
	g.Expect(after).To(Equal(before), cmp.Diff(before, after))
	cluster := &clusterv1.Cluster{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "echo"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeFalse())
	copies, err := movetest.Take(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	for k := range copies {
		g.Expect(k).To(HavePrefix(movetest.IdentityKind+"/"), "copy left in the target")
	}
	err = source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: move.JournalName}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
}

func TestMoveWaitsForBlockMove(t *testing.T) {
	tests := []struct {
		name    string
		release bool
	}{
		{name: "the annotation goes away", release: true},
		{name: "the annotation stays", release: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := testContext(t)
			name := "foxtrot"
			if !tt.release {
				name = "golf"
			}
			ns := newNamespace(t, name)
			before, err := movetest.Take(ctx, source.Client, ns)
			g.Expect(err).NotTo(HaveOccurred())
			im := &unstructured.Unstructured{}
			im.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
			im.SetKind("GenericInfrastructureMachine")
			g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-cp-0"}, im)).To(Succeed())
			im.SetAnnotations(map[string]string{clusterctlv1.BlockMoveAnnotation: ""})
			g.Expect(source.Client.Update(ctx, im)).To(Succeed())

			waits := 0
			opts := move.Options{Namespace: ns, Backoffs: fastBackoffs(), Checkpoint: func(cp string) {
				if strings.HasPrefix(cp, "pause ") {
					waits++
				}
			}}
			if tt.release {
				opts.Checkpoint = func(cp string) {
					if cp == "pause Cluster "+ns+"/"+name {
						// The provider finishes its work once the cluster is paused.
						go func() {
							cur := &unstructured.Unstructured{}
							cur.SetGroupVersionKind(im.GroupVersionKind())
							_ = source.Client.Get(context.Background(), client.ObjectKeyFromObject(im), cur)
							cur.SetAnnotations(nil)
							_ = source.Client.Update(context.Background(), cur)
						}()
					}
				}
			}
			_, err = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), opts)
			if tt.release {
				g.Expect(err).NotTo(HaveOccurred())
				problems := movetest.Verify(ctx, source.Client, target.Client, ns, before)
				g.Expect(problems).To(BeEmpty(), strings.Join(problems, "\n"))
				return
			}
			var me *move.Error
			g.Expect(errors.As(err, &me)).To(BeTrue(), "%v", err)
			g.Expect(me.RolledBack).To(BeTrue())
			g.Expect(err.Error()).To(ContainSubstring("GenericInfrastructureMachine " + ns + "/golf-cp-0 still annotated clusterctl.cluster.x-k8s.io/block-move"))
			cluster := &clusterv1.Cluster{}
			g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
			g.Expect(cluster.Spec.Paused).To(BeFalse())
		})
	}
}

func TestPreflight(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "hotel", "india")

	// Several problems at once: a paused Cluster, a Machine without a node, a Cluster still provisioning,
	// a target that misses a provider and has another one older, and a Cluster the target already manages.
	cluster := &clusterv1.Cluster{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hotel"}, cluster)).To(Succeed())
	cluster.Spec.Paused = true
	g.Expect(source.Client.Update(ctx, cluster)).To(Succeed())
	machine := &clusterv1.Machine{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hotel-md-0-x7k2p-a"}, machine)).To(Succeed())
	machine.Status.NodeRef = nil
	g.Expect(source.Client.Status().Update(ctx, machine)).To(Succeed())
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "india"}, cluster)).To(Succeed())
	cluster.Status.InfrastructureReady = false
	g.Expect(source.Client.Status().Update(ctx, cluster)).To(Succeed())
	g.Expect(movetest.SetProvider(ctx, source.Client, "extra-system", "extra", clusterctlv1.AddonProviderType, "v0.3.0")).To(Or(Succeed(), MatchError(ContainSubstring("not found"))))
	g.Expect(movetest.SetProvider(ctx, target.Client, movetest.InfraNamespace, "generic", clusterctlv1.InfrastructureProviderType, "v0.9.0")).To(Succeed())
	defer func() {
		g.Expect(movetest.SetProvider(ctx, target.Client, movetest.InfraNamespace, "generic", clusterctlv1.InfrastructureProviderType, "v1.1.0")).To(Succeed())
	}()
	g.Expect(target.Client.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta("", ns)})).To(Succeed())
	existing := &clusterv1.Cluster{ObjectMeta: objectMeta(ns, "india")}
	g.Expect(target.Client.Create(ctx, existing)).To(Succeed())

	sourceBefore, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	var pe *move.PreflightError
	g.Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
	want := []string{
		"Cluster " + ns + "/hotel is paused (spec.paused is true): clusterctl move does not move what someone else paused; unpause it first",
		"Cluster " + ns + "/india already exists in the target management cluster target and is not paused: the move would overwrite a cluster the target manages",
		"Cluster " + ns + "/india is still provisioning its infrastructure: wait until it is provisioned",
		"Machine " + ns + "/hotel-md-0-x7k2p-a is still provisioning its node (no status.nodeRef): wait until it has one",
		"provider infrastructure-generic in the target management cluster is older than in the source (source v1.0.0, target v0.9.0): upgrade it there first (clusterctl upgrade apply)",
	}
	got := append([]string{}, pe.Problems...)
	sort.Strings(got)
	g.Expect(got).To(Equal(want), cmp.Diff(want, got))

	// Nothing changed: no journal, nothing paused, nothing copied.
	sourceAfter, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sourceAfter).To(Equal(sourceBefore))
	err = source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: move.JournalName}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "india"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeFalse())
	copies, err := movetest.Take(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(copies).To(HaveLen(1)) // The Cluster created above.
}

func TestPreflightNothingToMove(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t)
	_, err := move.Move(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).To(MatchError(ContainSubstring("nothing to move in namespace " + ns + ": it has no Cluster, ClusterClass or ClusterResourceSet and no object labelled clusterctl.cluster.x-k8s.io/move (choose the namespace with --namespace)")))
}

func TestDryRun(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "juliett")
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	plan, err := move.DryRun(ctx, clusterOf(t, source, "source"), clusterOf(t, target, "target"), move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Problems).To(BeEmpty())
	g.Expect(plan.Count("Cluster")).To(Equal(1))
	g.Expect(plan.Groups[0]).To(ContainElement(move.Object{
		Ref: move.Ref{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "ClusterClass", Namespace: ns, Name: movetest.ClusterClass},
		UID: uidOf(ctx, t, "ClusterClass", ns, movetest.ClusterClass),
	}))
	after, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(before))
	copies, err := movetest.Take(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(copies).To(BeEmpty())
}

func TestToDirectoryAndFromDirectory(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, threeClusters...)
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(t.TempDir(), "backup")

	res, err := move.ToDirectory(ctx, clusterOf(t, source, "source"), dir, move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	// Every move also copies the global identities of the other tests' namespaces.
	g.Expect(ownObjects(res.Plan.Objects(), ns)).To(Equal(objectsPerFixture))
	files, err := os.ReadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(files)).To(Equal(len(res.Plan.Objects())))
	g.Expect(filepath.Join(dir, "Cluster_"+ns+"_alpha.yaml")).To(BeARegularFile())
	g.Expect(filepath.Join(dir, movetest.IdentityKind+"__"+movetest.IdentityName(ns)+".yaml")).To(BeARegularFile())

	// The source keeps everything, unpaused.
	after, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(before))
	cluster := &clusterv1.Cluster{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alpha"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeFalse())

	// Restore into the target, where the namespace does not exist.
	res, err = move.FromDirectory(ctx, clusterOf(t, target, "target"), dir, move.Options{Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ownObjects(res.Plan.Objects(), ns)).To(Equal(objectsPerFixture))
	restored, err := movetest.Take(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restored).To(Equal(before), cmp.Diff(before, restored))
	g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alpha"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeFalse())
	g.Expect(cluster.UID).NotTo(Equal(uidOf(ctx, t, "Cluster", ns, "alpha")))

	// A second restore is refused: the target manages those Clusters now.
	_, err = move.FromDirectory(ctx, clusterOf(t, target, "target"), dir, move.Options{Backoffs: fastBackoffs()})
	g.Expect(err).To(MatchError(ContainSubstring("Cluster " + ns + "/alpha already exists in the target management cluster target and is not paused")))
}

func uidOf(ctx context.Context, t testing.TB, kind, ns, name string) types.UID {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(clusterv1.GroupVersion.String())
	u.SetKind(kind)
	if err := source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u.GetUID()
}

// ownObjects counts the objects of a fixture namespace: its own objects and its global identity with the
// identity's Secret.
func ownObjects(objs []move.Object, ns string) int {
	n := 0
	for _, o := range objs {
		if o.Namespace == ns || strings.HasPrefix(o.Name, movetest.IdentityName(ns)) {
			n++
		}
	}
	return n
}

// interrupt runs fn and stops it, as a crash would, at the first checkpoint named at.
func interrupt(g Gomega, at string, fn func(move.Options)) {
	stop := errors.New("interrupted")
	defer func() {
		g.Expect(recover()).To(Equal(stop), "the run did not reach checkpoint %s", at)
	}()
	fn(move.Options{Backoffs: fastBackoffs(), Checkpoint: func(name string) {
		if name == at {
			panic(stop)
		}
	}})
}

func TestDirectoryRunsResumeAfterAnInterruption(t *testing.T) {
	g := NewWithT(t)
	ctx := testContext(t)
	ns := newNamespace(t, "kilo", "lima")
	before, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()

	// Interrupted while writing: the source stays paused, the journal says so, and a second run unpauses it.
	interrupt(g, "write Machine "+ns+"/lima-cp-0", func(o move.Options) {
		o.Namespace = ns
		_, _ = move.ToDirectory(ctx, clusterOf(t, source, "source"), dir, o)
	})
	cluster := &clusterv1.Cluster{}
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kilo"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeTrue())
	res, err := move.ToDirectory(ctx, clusterOf(t, source, "source"), dir, move.Options{Namespace: ns, Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Resumed).To(Equal(move.PhaseCopying))
	after, err := movetest.Take(ctx, source.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(Equal(before))
	g.Expect(source.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kilo"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeFalse())

	// Interrupted after unpausing one restored Cluster: running the restore again finishes it.
	interrupt(g, "unpause Cluster "+ns+"/kilo", func(o move.Options) {
		_, _ = move.FromDirectory(ctx, clusterOf(t, target, "target"), dir, o)
	})
	g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: move.JournalName}, &corev1.ConfigMap{})).To(Succeed())
	g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "lima"}, cluster)).To(Succeed())
	g.Expect(cluster.Spec.Paused).To(BeTrue())
	_, err = move.FromDirectory(ctx, clusterOf(t, target, "target"), dir, move.Options{Backoffs: fastBackoffs()})
	g.Expect(err).NotTo(HaveOccurred())
	restored, err := movetest.Take(ctx, target.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restored).To(Equal(before), cmp.Diff(before, restored))
	for _, name := range []string{"kilo", "lima"} {
		g.Expect(target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		g.Expect(cluster.Spec.Paused).To(BeFalse())
	}
	err = target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: move.JournalName}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
}

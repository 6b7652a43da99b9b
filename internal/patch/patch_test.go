package patch_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/patch"
	"github.com/capstan-dev/capstan/internal/test/apicount"
	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) { env = e }))
}

// newCluster creates a Cluster and returns it as the server has it.
func newCluster(ctx context.Context, g Gomega, t *testing.T) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: env.NewNamespace(t), Name: "c"}}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	return c
}

func get(ctx context.Context, g Gomega, c *clusterv1.Cluster) *clusterv1.Cluster {
	out := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), out)).To(Succeed())
	return out
}

// otherSetsACondition writes c's status as another controller would: it sets the UpToDate condition.
func otherSetsACondition(ctx context.Context, g Gomega, c *clusterv1.Cluster) {
	other := get(ctx, g, c)
	h := patch.NewHelper(other, env.Client)
	conditions.SetV1Beta2(other, metav1.Condition{Type: "UpToDate", Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: metav1.Now()})
	g.Expect(h.Patch(ctx, other)).To(Succeed())
}

func ready(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: "Available", Status: status, Reason: "Test", LastTransitionTime: metav1.Now()}
}

func TestPatchWritesMetadataSpecAndStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)

	h := patch.NewHelper(c, env.Client)
	c.Labels = map[string]string{"team": "a"}
	c.Spec.Paused = true
	c.Status.Phase = string(clusterv1.ClusterPhaseProvisioning)
	conditions.SetV1Beta2(c, ready(metav1.ConditionTrue))
	g.Expect(h.Patch(ctx, c)).To(Succeed())

	got := get(ctx, g, c)
	g.Expect(got.Labels).To(HaveKeyWithValue("team", "a"))
	g.Expect(got.Spec.Paused).To(BeTrue())
	g.Expect(got.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioning)))
	g.Expect(conditions.GetV1Beta2(got, "Available")).NotTo(BeNil())
	g.Expect(c.ResourceVersion).To(Equal(got.ResourceVersion), "obj is what the server returned")

	// Nothing changed: nothing is sent.
	h = patch.NewHelper(got, env.Client)
	g.Expect(h.Patch(ctx, got)).To(Succeed())
	g.Expect(get(ctx, g, c).ResourceVersion).To(Equal(got.ResourceVersion))
}

// A status patch that changes conditions, computed from a copy older than the server's, fails with a
// conflict instead of replacing the conditions others wrote meanwhile; other status fields merge.
func TestPatchConditionsOfAStaleCopyConflict(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	stale := c.DeepCopy()

	otherSetsACondition(ctx, g, c)

	writes := &patch.Writes{}
	h := patch.NewHelper(stale, env.Client, patch.WithWrites(writes))
	conditions.SetV1Beta2(stale, ready(metav1.ConditionFalse))
	err := h.Patch(ctx, stale)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(conditions.GetV1Beta2(get(ctx, g, c), "UpToDate")).NotTo(BeNil(), "the other controller's condition is kept")
	g.Expect(writes.Stale(c)).To(BeTrue(), "the copy that conflicted is known to be stale")

	// A status change without conditions merges into the newer object.
	stale = c.DeepCopy()
	h = patch.NewHelper(stale, env.Client)
	stale.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
	g.Expect(h.Patch(ctx, stale)).To(Succeed())
	got := get(ctx, g, c)
	g.Expect(got.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
	g.Expect(conditions.GetV1Beta2(got, "UpToDate")).NotTo(BeNil())
}

// Finalizers are a list too: written from a stale copy, they would drop one added meanwhile.
func TestPatchFinalizersOfAStaleCopyConflict(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	stale := c.DeepCopy()

	other := get(ctx, g, c)
	h := patch.NewHelper(other, env.Client)
	other.Finalizers = append(other.Finalizers, "example.com/other")
	g.Expect(h.Patch(ctx, other)).To(Succeed())

	h = patch.NewHelper(stale, env.Client)
	stale.Finalizers = append(stale.Finalizers, "example.com/mine")
	g.Expect(apierrors.IsConflict(h.Patch(ctx, stale))).To(BeTrue())
	g.Expect(get(ctx, g, c).Finalizers).To(ConsistOf("example.com/other"))

	got := get(ctx, g, c)
	got.Finalizers = nil
	g.Expect(env.Client.Update(ctx, got)).To(Succeed())
}

// A spec change gives the object a new generation; the status computed in the same reconcile describes it,
// so it records the new generation without a second write.
func TestPatchStatusObservesTheNewGeneration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	gen := c.Generation

	writes := &patch.Writes{}
	read := c.DeepCopy()
	h := patch.NewHelper(c, env.Client, patch.WithWrites(writes))
	c.Spec.Paused = true
	c.Status.ObservedGeneration = gen
	cond := ready(metav1.ConditionTrue)
	cond.ObservedGeneration = gen
	conditions.SetV1Beta2(c, cond)
	g.Expect(h.Patch(ctx, c)).To(Succeed())

	got := get(ctx, g, c)
	g.Expect(got.Generation).To(Equal(gen + 1))
	g.Expect(got.Status.ObservedGeneration).To(Equal(gen + 1))
	g.Expect(conditions.GetV1Beta2(got, "Available").ObservedGeneration).To(Equal(gen + 1))
	g.Expect(writes.Stale(read)).To(BeTrue(), "the version read is known to be replaced")
	g.Expect(writes.Stale(got)).To(BeFalse(), "the version written is current")
}

// Removing the last annotation of a copy removes that annotation only: one that another writer added
// since the copy was read stays (a merge patch nulling the whole map would drop it).
func TestPatchRemovingTheLastAnnotationKeepsOthers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	c.Annotations = map[string]string{"mine": "1"}
	g.Expect(env.Client.Update(ctx, c)).To(Succeed())

	h := patch.NewHelper(c, env.Client)
	other := get(ctx, g, c)
	other.Annotations["theirs"] = "2"
	g.Expect(env.Client.Update(ctx, other)).To(Succeed())

	delete(c.Annotations, "mine")
	g.Expect(h.Patch(ctx, c)).To(Succeed())
	g.Expect(get(ctx, g, c).Annotations).To(Equal(map[string]string{"theirs": "2"}))
}

// Removing the last finalizer of an object being deleted deletes it: the status changed in the same
// reconcile is not sent, since the server could only answer Not Found, and the copy read before is known
// to be stale.
func TestPatchRemovingTheLastFinalizerSendsNoStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: env.NewNamespace(t), Name: "c", Finalizers: []string{"example.com/mine"}}}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	deleting := get(ctx, g, c)

	counter := apicount.New()
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = counter.Wrap
	counted, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	cached := deleting.DeepCopy()
	writes := &patch.Writes{}
	h := patch.NewHelper(deleting, counted, patch.WithWrites(writes))
	deleting.Finalizers = nil
	deleting.Status.Phase = string(clusterv1.ClusterPhaseDeleting)
	g.Expect(h.Patch(ctx, deleting)).To(Succeed())
	// The server answers with the object at the version it had: the copy still in a cache is known to be
	// older than the server's (gone), so the deletion's work is not done again from it.
	g.Expect(writes.Stale(cached)).To(BeTrue(), "the cached copy, finalizer and all, is known to be stale")
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &clusterv1.Cluster{}))).To(BeTrue(), "the Cluster is gone")
	g.Expect(counter.Snapshot().Sum(func(k apicount.Key) bool { return k.Verb == "PATCH" })).To(Equal(1), "only the finalizer's patch is sent:\n%s", counter.Snapshot())
}

// Adding or removing a finalizer does not conflict with other writes of the object (its status here): only
// with a change of the finalizers.
func TestPatchFinalizersOfAStaleCopyMergeWithOtherWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	stale := c.DeepCopy()

	otherSetsACondition(ctx, g, c)

	h := patch.NewHelper(stale, env.Client)
	stale.Finalizers = append(stale.Finalizers, "example.com/mine")
	g.Expect(h.Patch(ctx, stale)).To(Succeed())
	got := get(ctx, g, c)
	g.Expect(got.Finalizers).To(ConsistOf("example.com/mine"))
	g.Expect(conditions.GetV1Beta2(got, "UpToDate")).NotTo(BeNil(), "the other write is kept")

	// And removed from a copy older than a status write.
	stale = got.DeepCopy()
	other := get(ctx, g, c)
	h = patch.NewHelper(other, env.Client)
	other.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
	g.Expect(h.Patch(ctx, other)).To(Succeed())
	h = patch.NewHelper(stale, env.Client)
	stale.Finalizers = nil
	g.Expect(h.Patch(ctx, stale)).To(Succeed())
	got = get(ctx, g, c)
	g.Expect(got.Finalizers).To(BeEmpty())
	g.Expect(got.Status.Phase).To(Equal(string(clusterv1.ClusterPhaseProvisioned)))
}

// A finalizer the API server refuses is its error, not a conflict to retry.
func TestPatchInvalidFinalizerIsNotAConflict(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newCluster(ctx, g, t)
	h := patch.NewHelper(c, env.Client)
	c.Finalizers = append(c.Finalizers, "not a/valid finalizer")
	err := h.Patch(ctx, c)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(apierrors.IsConflict(err)).To(BeFalse())
}

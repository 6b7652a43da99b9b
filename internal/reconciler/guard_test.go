package reconciler

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/patch"
)

// cacheOfOne stands for the manager's cache holding at most one Machine (or failing every read with err).
type cacheOfOne struct {
	client.Reader
	m   *clusterv1.Machine
	err error
}

func (c *cacheOfOne) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if c.err != nil {
		return c.err
	}
	if c.m == nil || client.ObjectKeyFromObject(c.m) != key {
		return apierrors.NewNotFound(schema.GroupResource{Group: clusterv1.GroupVersion.Group, Resource: "machines"}, key.Name)
	}
	c.m.DeepCopyInto(obj.(*clusterv1.Machine))
	return nil
}

// machines records what it was given.
type machines struct {
	reconciled []string
	released   []types.NamespacedName
}

func (r *machines) Reconcile(_ context.Context, m *clusterv1.Machine) (reconcile.Result, error) {
	r.reconciled = append(r.reconciled, m.ResourceVersion)
	return reconcile.Result{}, nil
}

type releasingMachines struct{ machines }

func (r *releasingMachines) Release(_ context.Context, key types.NamespacedName) error {
	r.released = append(r.released, key)
	return nil
}

func TestGuardedReconcilesNoCopyOlderThanItsLastWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "u1", ResourceVersion: "10"}}
	cache := &cacheOfOne{m: m}
	var writes patch.Writes
	r := &machines{}
	guarded := Guarded(cache, &writes, r)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "m"}}

	_, err := guarded.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.reconciled).To(Equal([]string{"10"}), "a copy the controller did not replace is reconciled")

	// The controller wrote the Machine: version 10 became 11 on the server, the cache still shows 10.
	written := m.DeepCopy()
	written.ResourceVersion = "11"
	writes.Record("10", written)
	res, err := guarded.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(reconcile.Result{}), "the event of version 11 brings the Machine back")
	g.Expect(r.reconciled).To(Equal([]string{"10"}), "the copy the last write replaced is not reconciled again")

	cache.m.ResourceVersion = "11"
	_, err = guarded.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.reconciled).To(Equal([]string{"10", "11"}), "the cache caught up: the newer copy is reconciled")
}

func TestGuardedWhenTheObjectIsGoneOrUnreadable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "gone"}}

	plain := &machines{}
	res, err := Guarded(&cacheOfOne{}, nil, plain).Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(reconcile.Result{}))
	g.Expect(plain.reconciled).To(BeEmpty())

	releasing := &releasingMachines{}
	_, err = Guarded(&cacheOfOne{}, nil, releasing).Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(releasing.released).To(Equal([]types.NamespacedName{req.NamespacedName}), "a reconciler that releases is told the object is gone")
	g.Expect(releasing.reconciled).To(BeEmpty())

	_, err = Guarded(&cacheOfOne{err: errors.New("the cache is not started")}, nil, plain).Reconcile(ctx, req)
	g.Expect(err).To(MatchError("getting Machine ns/gone: the cache is not started"))
	g.Expect(plain.reconciled).To(BeEmpty())
}

package reconciler_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/reconciler"
)

func TestRefersTo(t *testing.T) {
	group := clusterv1.GroupVersion.Group
	tests := []struct {
		name string
		ref  metav1.OwnerReference
		want bool
	}{
		{name: "current version", ref: metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"}, want: true},
		{name: "older version of the group", ref: metav1.OwnerReference{APIVersion: group + "/v1alpha4", Kind: "Cluster"}, want: true},
		{name: "other kind", ref: metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"}},
		{name: "same kind in another group", ref: metav1.OwnerReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "Cluster"}},
		{name: "core group", ref: metav1.OwnerReference{APIVersion: "v1", Kind: "Cluster"}},
		{name: "unparsable apiVersion", ref: metav1.OwnerReference{APIVersion: "a/b/c", Kind: "Cluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(reconciler.RefersTo(tt.ref, group, "Cluster")).To(Equal(tt.want))
		})
	}
}

// TestAddFinalizerFirst: the finalizer is written on its own, once, and never to an object being deleted.
func TestAddFinalizerFirst(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ms"}}
	deleting := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "deleting",
		Finalizers: []string{"other"}, DeletionTimestamp: &metav1.Time{Time: metav1.Now().Time}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ms, deleting).Build()

	added, err := reconciler.AddFinalizerFirst(ctx, c, ms, clusterv1.MachineSetFinalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeTrue())
	got := &clusterv1.MachineSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ms), got)).To(Succeed())
	g.Expect(got.Finalizers).To(ConsistOf(clusterv1.MachineSetFinalizer))

	added, err = reconciler.AddFinalizerFirst(ctx, c, got, clusterv1.MachineSetFinalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())

	added, err = reconciler.AddFinalizerFirst(ctx, c, deleting, clusterv1.MachineSetFinalizer)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(deleting), got)).To(Succeed())
	g.Expect(got.Finalizers).To(ConsistOf("other"))
}

func TestSetClusterNameLabel(t *testing.T) {
	g := NewWithT(t)
	unlabelled := &clusterv1.Machine{}
	reconciler.SetClusterNameLabel(unlabelled, "c1")
	g.Expect(unlabelled.Labels).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "c1"}))

	labelled := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b", clusterv1.ClusterNameLabel: "old"}}}
	reconciler.SetClusterNameLabel(labelled, "c1")
	g.Expect(labelled.Labels).To(Equal(map[string]string{"a": "b", clusterv1.ClusterNameLabel: "c1"}))
}

// TestWaitForCluster: an object waits while its Cluster does not exist, unless it is being deleted, and
// the logger of the context it is reconciled with names the Cluster.
func TestWaitForCluster(t *testing.T) {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster).Build()
	deleting := metav1.ObjectMeta{Namespace: "ns", Name: "ms", Finalizers: []string{clusterv1.MachineSetFinalizer},
		DeletionTimestamp: &metav1.Time{Time: metav1.Now().Time}}

	tests := []struct {
		name        string
		obj         metav1.ObjectMeta
		clusterName string
		wantCluster bool
		wantWait    bool
	}{
		{name: "the Cluster exists", obj: metav1.ObjectMeta{Namespace: "ns", Name: "ms"}, clusterName: "c", wantCluster: true},
		{name: "the Cluster does not exist yet", obj: metav1.ObjectMeta{Namespace: "ns", Name: "ms"}, clusterName: "gone", wantWait: true},
		{name: "deleted without its Cluster", obj: deleting, clusterName: "gone"},
		{name: "deleted with its Cluster", obj: deleting, clusterName: "c", wantCluster: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var logged []string
			log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
			ctx := ctrl.LoggerInto(context.Background(), log)
			ms := &clusterv1.MachineSet{ObjectMeta: tt.obj}

			ctx, got, wait, err := reconciler.WaitForCluster(ctx, c, ms, tt.clusterName, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(wait).To(Equal(tt.wantWait))
			g.Expect(got != nil).To(Equal(tt.wantCluster))
			if tt.wantWait {
				g.Expect(logged).To(ConsistOf(ContainSubstring(`"msg"="Waiting for the Cluster to exist"`)))
			}
			ctrl.LoggerFrom(ctx).Info("Next")
			g.Expect(logged[len(logged)-1]).To(ContainSubstring(`"Cluster"={"name"="` + tt.clusterName + `" "namespace"="ns"}`))
		})
	}
}

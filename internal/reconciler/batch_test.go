package reconciler_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/internal/reconciler"
)

// TestDelayConditionChanges: an update of a provider object that changes only its conditions, or any
// update of one being deleted, reconciles the owner once the delay has passed; any other change, and the
// object's creation and deletion, at once.
func TestDelayConditionChanges(t *testing.T) {
	g := NewWithT(t)
	base := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
			"metadata": map[string]any{"name": "cp", "namespace": "ns", "resourceVersion": "1"},
			"spec":     map[string]any{"replicas": int64(1)},
			"status": map[string]any{
				"ready":      false,
				"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "ScalingUp"}},
				"v1beta2":    map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False"}}},
			},
		}}
		return u
	}
	owner := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "cluster"}}}
	})
	const delay = 300 * time.Millisecond
	h := reconciler.DelayConditionChanges(owner, delay)

	cases := []struct {
		name    string
		change  func(*unstructured.Unstructured)
		delayed bool
	}{
		{"a reason of its v1beta1 Ready condition", func(u *unstructured.Unstructured) {
			g.Expect(unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "False", "reason": "WaitingForKubeadmInit"}}, "status", "conditions")).To(Succeed())
		}, true},
		{"its v1beta2 conditions", func(u *unstructured.Unstructured) {
			g.Expect(unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Available", "status": "True"}}, "status", "v1beta2", "conditions")).To(Succeed())
		}, true},
		{"its readiness with its conditions", func(u *unstructured.Unstructured) {
			g.Expect(unstructured.SetNestedField(u.Object, true, "status", "ready")).To(Succeed())
			g.Expect(unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions")).To(Succeed())
		}, false},
		{"a counter", func(u *unstructured.Unstructured) {
			g.Expect(unstructured.SetNestedField(u.Object, int64(1), "status", "readyReplicas")).To(Succeed())
		}, false},
		{"its spec", func(u *unstructured.Unstructured) {
			g.Expect(unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")).To(Succeed())
		}, false},
		{"the start of its deletion", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}, true},
		{"a counter of an object being deleted", func(u *unstructured.Unstructured) {
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			g.Expect(unstructured.SetNestedField(u.Object, int64(0), "status", "readyReplicas")).To(Succeed())
		}, true},
	}
	for _, tc := range cases {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		old := base()
		updated := base()
		updated.SetResourceVersion("2")
		tc.change(updated)
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: updated}, q)
		if tc.delayed {
			g.Expect(q.Len()).To(Equal(0), "%s: the owner is reconciled before the delay", tc.name)
			g.Eventually(q.Len, 5*delay, 10*time.Millisecond).Should(Equal(1), "%s: the owner is not reconciled after the delay", tc.name)
		} else {
			g.Expect(q.Len()).To(Equal(1), "%s: the owner is not reconciled at once", tc.name)
		}
		g.Expect(old.Object).To(Equal(base().Object), "%s: the event's object was changed", tc.name)
		q.ShutDown()
	}
	// Creation and deletion are passed on at once.
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Create(context.Background(), event.CreateEvent{Object: base()}, q)
	g.Expect(q.Len()).To(Equal(1))
	req, _ := q.Get()
	q.Done(req)
	gone := base()
	gone.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	h.Delete(context.Background(), event.DeleteEvent{Object: gone}, q)
	g.Expect(q.Len()).To(Equal(1), "the owner is not reconciled at once when the object is gone")
}

package machine

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

func pod(ns, name string, mutate ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, f := range mutate {
		f(&p)
	}
	return p
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func TestPodsToDrain(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	deletedAgo := func(d time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now.Add(-d)} }
	}
	pods := []corev1.Pod{
		pod("b", "app"),
		pod("a", "app"),
		pod("kube-system", "agent", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)}}
		}),
		pod("kube-system", "replica", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}}
		}),
		pod("kube-system", "kube-apiserver-node", func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorPodAnnotation: "x"} }),
		pod("a", "skipped", func(p *corev1.Pod) {
			p.Labels = map[string]string{clusterv1.PodDrainLabel: clusterv1.PodDrainLabelSkip}
		}),
		pod("a", "terminating", deletedAgo(time.Minute)),
		pod("a", "long-gone", deletedAgo(10*time.Minute)),
	}
	tests := []struct {
		name          string
		skipWaitAfter time.Duration
		want          []string
	}{
		{name: "reachable Node", skipWaitAfter: skipWaitForDeleteTimeout, want: []string{"a/app", "a/terminating", "b/app", "kube-system/replica"}},
		{name: "unreachable Node", skipWaitAfter: time.Second, want: []string{"a/app", "b/app", "kube-system/replica"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(podNames(podsToDrain(pods, now, tt.skipWaitAfter))).To(Equal(tt.want))
		})
	}
}

func TestEvictionResultMessage(t *testing.T) {
	p := func(name string) *corev1.Pod { x := pod("ns", name); return &x }
	tests := []struct {
		name   string
		result evictionResult
		want   string
	}{
		{
			name:   "terminating Pods",
			result: evictionResult{terminating: []*corev1.Pod{p("b"), p("a")}},
			want:   "Drain not completed yet:\n* Pods ns/a, ns/b: deletionTimestamp set, but still not removed from the Node",
		},
		{
			name: "many Pods and failures, in a stable order",
			result: evictionResult{
				terminating: []*corev1.Pod{p("e"), p("d"), p("c"), p("b"), p("a")},
				failed: map[string][]*corev1.Pod{
					"zz failure": {p("z")},
					"cannot evict pod as it would violate the pod's disruption budget": {p("y"), p("x")},
				},
			},
			want: "Drain not completed yet:\n" +
				"* Pods ns/a, ns/b, ns/c, ... (2 more): deletionTimestamp set, but still not removed from the Node\n" +
				"* Pods ns/x, ns/y: cannot evict pod as it would violate the pod's disruption budget\n" +
				"* Pod ns/z: zz failure",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.result.completed()).To(BeFalse())
			g.Expect(tt.result.message()).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(evictionResult{}.completed()).To(BeTrue())
}

func TestEvictionRefusal(t *testing.T) {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "DisruptionBudget", Message: "The disruption budget pdb needs 1 healthy pods and has 1 currently"}}
	NewWithT(t).Expect(evictionRefusal(err)).To(Equal(
		"cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb needs 1 healthy pods and has 1 currently"))
	NewWithT(t).Expect(evictionRefusal(apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x"))).To(Equal(`pods "x" not found`))
}

func TestNodeUnreachable(t *testing.T) {
	node := func(status corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	}
	g := NewWithT(t)
	g.Expect(nodeUnreachable(node(corev1.ConditionUnknown))).To(BeTrue())
	g.Expect(nodeUnreachable(node(corev1.ConditionFalse))).To(BeFalse())
	g.Expect(nodeUnreachable(&corev1.Node{})).To(BeFalse())
}

package hooks

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	runtimehooksv1 "github.com/capstan-dev/capstan/api/runtime/hooks/v1alpha1"
	runtimev1 "github.com/capstan-dev/capstan/api/runtime/v1alpha1"
)

func TestPendingHooks(t *testing.T) {
	tests := []struct {
		name       string
		annotation *string
		mark, done []runtimehooksv1.Hook
		want       *string
		changed    bool
	}{
		{name: "marked on an object without annotations", mark: []runtimehooksv1.Hook{runtimehooksv1.AfterClusterUpgrade, runtimehooksv1.AfterControlPlaneUpgrade},
			want: ptr("AfterClusterUpgrade,AfterControlPlaneUpgrade"), changed: true},
		{name: "marking twice changes nothing", annotation: ptr("AfterClusterUpgrade"), mark: []runtimehooksv1.Hook{runtimehooksv1.AfterClusterUpgrade},
			want: ptr("AfterClusterUpgrade")},
		{name: "upstream's list with spaces is read", annotation: ptr("AfterControlPlaneUpgrade, AfterClusterUpgrade"), done: []runtimehooksv1.Hook{runtimehooksv1.AfterControlPlaneUpgrade},
			want: ptr("AfterClusterUpgrade"), changed: true},
		{name: "the annotation goes with the last hook", annotation: ptr("AfterControlPlaneInitialized"), done: []runtimehooksv1.Hook{runtimehooksv1.AfterControlPlaneInitialized},
			changed: true},
		{name: "done for a hook that is not pending changes nothing", annotation: ptr("AfterClusterUpgrade"), done: []runtimehooksv1.Hook{runtimehooksv1.AfterControlPlaneInitialized},
			want: ptr("AfterClusterUpgrade")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"keep": "me"}}}
			if tt.annotation != nil {
				c.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: *tt.annotation}
			}
			changed := false
			if len(tt.mark) > 0 {
				changed = MarkPending(c, tt.mark...)
				for _, h := range tt.mark {
					g.Expect(IsPending(h, c)).To(BeTrue())
				}
			}
			if len(tt.done) > 0 {
				changed = MarkDone(c, tt.done...)
				for _, h := range tt.done {
					g.Expect(IsPending(h, c)).To(BeFalse())
				}
			}
			g.Expect(changed).To(Equal(tt.changed))
			got, ok := c.Annotations[runtimev1.PendingHooksAnnotation]
			if tt.want == nil {
				g.Expect(ok).To(BeFalse(), "annotation %q", got)
				return
			}
			g.Expect(got).To(Equal(*tt.want))
		})
	}
}

func TestOkToDelete(t *testing.T) {
	g := NewWithT(t)
	c := &clusterv1.Cluster{}
	g.Expect(IsOkToDelete(c)).To(BeFalse())
	g.Expect(MarkOkToDelete(c)).To(BeTrue())
	g.Expect(IsOkToDelete(c)).To(BeTrue())
	g.Expect(c.Annotations).To(HaveKeyWithValue(runtimev1.OkToDeleteAnnotation, ""))
	g.Expect(MarkOkToDelete(c)).To(BeFalse())
}

func ptr(s string) *string { return &s }

package machine

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// TestPlanDrainHonoursMachineDrainRules: the first rule (by name) that selects a Pod decides: Skip leaves
// it alone, WaitCompleted waits for it without evicting it, and Drain orders evictions, the lowest order
// first; the cluster.x-k8s.io/drain label wins over the rules.
func TestPlanDrainHonoursMachineDrainRules(t *testing.T) {
	pod := func(ns, name string, l map[string]string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}, Status: corev1.PodStatus{Phase: phase}}
	}
	rule := func(name string, b clusterv1.MachineDrainRuleDrainBehavior, order *int32, pods ...clusterv1.MachineDrainRulePodSelector) *clusterv1.MachineDrainRule {
		return &clusterv1.MachineDrainRule{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1.MachineDrainRuleSpec{Drain: clusterv1.MachineDrainRuleDrainConfig{Behavior: b, Order: order}, Pods: pods}}
	}
	app := func(v string) clusterv1.MachineDrainRulePodSelector {
		return clusterv1.MachineDrainRulePodSelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}}
	}
	monitoringNS := clusterv1.MachineDrainRulePodSelector{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "monitoring"}}}
	namespaces := map[string]map[string]string{"mon": {"team": "monitoring"}, "default": {}}
	rules := []*clusterv1.MachineDrainRule{
		rule("a-skip-agents", clusterv1.MachineDrainRuleDrainBehaviorSkip, nil, app("agent")),
		rule("b-db-last", clusterv1.MachineDrainRuleDrainBehaviorDrain, ptr.To[int32](10), app("db")),
		rule("c-jobs", clusterv1.MachineDrainRuleDrainBehaviorWaitCompleted, nil, app("job")),
		rule("d-monitoring-last", clusterv1.MachineDrainRuleDrainBehaviorDrain, ptr.To[int32](10), monitoringNS),
	}
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	g := NewWithT(t)
	pods := []*corev1.Pod{
		pod("default", "agent", map[string]string{"app": "agent"}, corev1.PodRunning),
		pod("default", "db", map[string]string{"app": "db"}, corev1.PodRunning),
		pod("default", "job", map[string]string{"app": "job"}, corev1.PodRunning),
		pod("default", "done-job", map[string]string{"app": "job"}, corev1.PodSucceeded),
		pod("default", "web", map[string]string{"app": "web"}, corev1.PodRunning),
		pod("mon", "prometheus", nil, corev1.PodRunning),
		pod("default", "labelled", map[string]string{"app": "db", clusterv1.PodDrainLabel: "skip"}, corev1.PodRunning),
	}
	p := planDrain(pods, rules, namespaces)
	g.Expect(names(p.evictNow)).To(ConsistOf("default/web"))
	g.Expect(names(p.waitCompleted)).To(ConsistOf("default/job"))
	g.Expect(names(p.later)).To(ConsistOf("default/db", "mon/prometheus"))

	// Once the order 0 Pods are gone, the order 10 ones are evicted.
	p = planDrain([]*corev1.Pod{pods[1], pods[5]}, rules, namespaces)
	g.Expect(names(p.evictNow)).To(ConsistOf("default/db", "mon/prometheus"))
	g.Expect(p.later).To(BeEmpty())

	// Rules of other Machines do not apply.
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pool": "a"}}}
	other := rule("x", clusterv1.MachineDrainRuleDrainBehaviorSkip, nil)
	other.Spec.Machines = []clusterv1.MachineDrainRuleMachineSelector{{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "b"}}}}
	g.Expect(appliesToMachine(other, m, &clusterv1.Cluster{})).To(BeFalse())
	other.Spec.Machines[0].Selector.MatchLabels["pool"] = "a"
	g.Expect(appliesToMachine(other, m, &clusterv1.Cluster{})).To(BeTrue())
}

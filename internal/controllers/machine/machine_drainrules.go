package machine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedrainrules,verbs=get;list;watch

// machineDrainRules returns the MachineDrainRules of the Machine's namespace that apply to it (one of
// spec.machines matches the Machine and its Cluster, or spec.machines is empty), sorted by name: for a Pod,
// the first rule that selects it decides, as upstream.
func (r *Reconciler) machineDrainRules(ctx context.Context, s *scope) ([]*clusterv1.MachineDrainRule, error) {
	list := &clusterv1.MachineDrainRuleList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.machine.Namespace)); err != nil {
		return nil, fmt.Errorf("listing MachineDrainRules: %w", err)
	}
	var out []*clusterv1.MachineDrainRule
	for i := range list.Items {
		rule := &list.Items[i]
		if appliesToMachine(rule, s.machine, s.cluster) {
			out = append(out, rule)
		}
	}
	slices.SortFunc(out, func(a, b *clusterv1.MachineDrainRule) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func appliesToMachine(rule *clusterv1.MachineDrainRule, m *clusterv1.Machine, cluster *clusterv1.Cluster) bool {
	if len(rule.Spec.Machines) == 0 {
		return true
	}
	for _, sel := range rule.Spec.Machines {
		if matches(sel.Selector, m.Labels) && matches(sel.ClusterSelector, cluster.Labels) {
			return true
		}
	}
	return false
}

// matches reports whether a label selector (nil or empty: everything) matches labels; an invalid selector
// matches nothing.
func matches(sel *metav1.LabelSelector, l map[string]string) bool {
	if sel == nil {
		return true
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return selector.Empty() || selector.Matches(labels.Set(l))
}

// namespacesFor reads the labels of the workload cluster's namespaces when a rule selects Pods by
// namespace.
func namespacesFor(ctx context.Context, remote client.Reader, rules []*clusterv1.MachineDrainRule) (map[string]map[string]string, error) {
	needed := slices.ContainsFunc(rules, func(r *clusterv1.MachineDrainRule) bool {
		return slices.ContainsFunc(r.Spec.Pods, func(p clusterv1.MachineDrainRulePodSelector) bool { return p.NamespaceSelector != nil })
	})
	if !needed {
		return nil, nil
	}
	list := &corev1.NamespaceList{}
	if err := remote.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the namespaces of the workload cluster: %w", err)
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, ns := range list.Items {
		out[ns.Name] = ns.Labels
	}
	return out, nil
}

// podBehavior is how the drain treats one Pod.
type podBehavior struct {
	behavior clusterv1.MachineDrainRuleDrainBehavior
	order    int32
}

// behaviorOf decides how a Pod is drained, as upstream: its cluster.x-k8s.io/drain label (skip or
// wait-completed) first, then the first MachineDrainRule that selects it, else Drain with order 0.
func behaviorOf(pod *corev1.Pod, rules []*clusterv1.MachineDrainRule, namespaces map[string]map[string]string) podBehavior {
	if v, ok := pod.Labels[clusterv1.PodDrainLabel]; ok {
		switch {
		case strings.EqualFold(v, string(clusterv1.MachineDrainRuleDrainBehaviorSkip)):
			return podBehavior{behavior: clusterv1.MachineDrainRuleDrainBehaviorSkip}
		case strings.EqualFold(strings.Replace(v, "-", "", 1), string(clusterv1.MachineDrainRuleDrainBehaviorWaitCompleted)):
			return podBehavior{behavior: clusterv1.MachineDrainRuleDrainBehaviorWaitCompleted}
		}
	}
	for _, rule := range rules {
		if !appliesToPod(rule, pod, namespaces) {
			continue
		}
		return podBehavior{behavior: rule.Spec.Drain.Behavior, order: ptr.Deref(rule.Spec.Drain.Order, 0)}
	}
	return podBehavior{behavior: clusterv1.MachineDrainRuleDrainBehaviorDrain}
}

func appliesToPod(rule *clusterv1.MachineDrainRule, pod *corev1.Pod, namespaces map[string]map[string]string) bool {
	if len(rule.Spec.Pods) == 0 {
		return true
	}
	for _, sel := range rule.Spec.Pods {
		if matches(sel.Selector, pod.Labels) && matches(sel.NamespaceSelector, namespaces[pod.Namespace]) {
			return true
		}
	}
	return false
}

// drainPlan is what one drain pass does with the Pods to drain.
type drainPlan struct {
	// evictNow are evicted in this pass: the Pods to drain of the lowest order.
	evictNow []*corev1.Pod
	// waitCompleted are waited for (not evicted) in this pass.
	waitCompleted []*corev1.Pod
	// later are the Pods of higher orders.
	later []*corev1.Pod
}

func (p drainPlan) empty() bool {
	return len(p.evictNow) == 0 && len(p.waitCompleted) == 0 && len(p.later) == 0
}

// planDrain sorts the Pods by their drain behavior: skipped Pods are left out, completed Pods need no
// waiting, and only the Pods of the lowest order (of Drain and WaitCompleted Pods) are acted on now.
func planDrain(pods []*corev1.Pod, rules []*clusterv1.MachineDrainRule, namespaces map[string]map[string]string) drainPlan {
	type item struct {
		pod *corev1.Pod
		b   podBehavior
	}
	var items []item
	minOrder := int32(math.MaxInt32)
	for _, pod := range pods {
		b := behaviorOf(pod, rules, namespaces)
		switch b.behavior {
		case clusterv1.MachineDrainRuleDrainBehaviorSkip:
			continue
		case clusterv1.MachineDrainRuleDrainBehaviorWaitCompleted:
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
		}
		items = append(items, item{pod, b})
		minOrder = min(minOrder, b.order)
	}
	var p drainPlan
	for _, it := range items {
		switch {
		case it.b.order != minOrder:
			p.later = append(p.later, it.pod)
		case it.b.behavior == clusterv1.MachineDrainRuleDrainBehaviorWaitCompleted:
			p.waitCompleted = append(p.waitCompleted, it.pod)
		default:
			p.evictNow = append(p.evictNow, it.pod)
		}
	}
	return p
}

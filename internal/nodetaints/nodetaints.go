// Package nodetaints puts the taints of a Machine (spec.taints, upstream v1.12's MachineTaints) on its
// Node, as upstream's Machine controller does: Always taints are kept on the Node and removed from it once
// they leave the Machine; OnInitialization taints are put once, the first time the Node is synced. The
// Node's cluster.x-k8s.io/taints-from-machine annotation records the Always taints last put (so that only
// those are ever removed) and, by being there, that the OnInitialization ones were put.
package nodetaints

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Apply puts taints on node (a copy the caller patches) and reports whether node changed.
func Apply(node *corev1.Node, taints []clusterv1.MachineTaint) bool {
	recorded, initialized := node.Annotations[clusterv1.TaintsFromMachineAnnotation]
	owned := map[string]bool{}
	for _, k := range strings.Split(recorded, ",") {
		if k != "" {
			owned[k] = true
		}
	}
	changed := false
	var always []string
	wanted := map[string]bool{}
	for _, t := range taints {
		k := key(t.Key, t.Effect)
		wanted[k] = true
		if t.Propagation == clusterv1.MachineTaintPropagationAlways {
			always = append(always, k)
		} else if initialized {
			continue
		}
		changed = ensure(node, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}) || changed
	}
	// An Always taint put before and no longer on the Machine (at all: one now OnInitialization stays) goes.
	kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
		k := key(t.Key, t.Effect)
		return owned[k] && !wanted[k]
	})
	if len(kept) != len(node.Spec.Taints) {
		node.Spec.Taints, changed = kept, true
	}
	slices.Sort(always)
	if value := strings.Join(always, ","); !initialized || value != recorded {
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[clusterv1.TaintsFromMachineAnnotation] = value
		changed = true
	}
	return changed
}

func key(k string, effect corev1.TaintEffect) string { return k + ":" + string(effect) }

// ensure puts taint on node, or sets its value where the Node has the taint (same key and effect) with
// another; it reports whether node changed.
func ensure(node *corev1.Node, taint corev1.Taint) bool {
	for i, t := range node.Spec.Taints {
		if t.Key == taint.Key && t.Effect == taint.Effect {
			if t.Value == taint.Value {
				return false
			}
			node.Spec.Taints[i].Value = taint.Value
			return true
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, taint)
	return true
}

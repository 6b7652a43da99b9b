package machinepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/kubeversion"
	"github.com/capstan-dev/capstan/internal/nodetaints"
)

// nodeRefsOf returns the Nodes of the provider IDs, in the order of the list, how many are Ready and
// available (Ready for at least minReadySeconds at now), and how many run each kubelet version (upstream's
// versionsFromNodeRefs).
func nodeRefsOf(providerIDs []string, byProviderID map[string]*corev1.Node, minReadySeconds int32, now time.Time) nodeFacts {
	var f nodeFacts
	var versions []clusterv1.StatusVersion
	for _, id := range providerIDs {
		node := byProviderID[id]
		if id == "" || node == nil {
			continue
		}
		f.refs = append(f.refs, corev1.ObjectReference{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Node", Name: node.Name, UID: node.UID})
		versions = append(versions, clusterv1.StatusVersion{Version: node.Status.NodeInfo.KubeletVersion, Replicas: 1})
		ready := readyCondition(node)
		if ready == nil || ready.Status != corev1.ConditionTrue {
			continue
		}
		f.ready++
		if !ready.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).After(now) {
			f.available++
		}
	}
	f.versions = kubeversion.Aggregate(versions)
	return f
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func equalRefs(a, b []corev1.ObjectReference) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.ObjectReference) bool { return x.Name == y.Name && x.UID == y.UID })
}

func nodeNames(refs []corev1.ObjectReference) string {
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

// deleteRetiredNodes deletes the Nodes of nodeRefs whose provider ID is no longer in providerIDs: an
// InfraMachinePool says that an instance is gone by removing its provider ID from the list.
func deleteRetiredNodes(ctx context.Context, c client.Client, nodeRefs []corev1.ObjectReference, providerIDs []string) error {
	log := ctrl.LoggerFrom(ctx)
	for _, ref := range nodeRefs {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, node); err != nil {
			if !apierrors.IsNotFound(err) {
				log.Error(err, "Cannot read a Node of the MachinePool, skipping it", "Node", klog.KRef("", ref.Name))
			}
			continue
		}
		if node.Spec.ProviderID == "" || slices.Contains(providerIDs, node.Spec.ProviderID) {
			continue
		}
		log.Info("Deleting a Node whose instance left the pool", "Node", klog.KObj(node), "providerID", node.Spec.ProviderID)
		if err := c.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Node %s: %w", node.Name, err)
		}
	}
	return nil
}

// annotateNodes gives the pool's Nodes the cluster-name, cluster-namespace, owner-kind and owner-name
// annotations and removes the node.cluster.x-k8s.io/uninitialized taint, as upstream does.
func annotateNodes(ctx context.Context, c client.Client, mp *clusterv1.MachinePool, refs []corev1.ObjectReference, byProviderID map[string]*corev1.Node) error {
	byName := map[string]*corev1.Node{}
	for _, n := range byProviderID {
		byName[n.Name] = n
	}
	desired := map[string]string{
		clusterv1.ClusterNameAnnotation:      mp.Spec.ClusterName,
		clusterv1.ClusterNamespaceAnnotation: mp.Namespace,
		clusterv1.OwnerKindAnnotation:        "MachinePool",
		clusterv1.OwnerNameAnnotation:        mp.Name,
	}
	for _, ref := range refs {
		node := byName[ref.Name]
		if node == nil {
			continue
		}
		updated := node.DeepCopy()
		changed := false
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		for k, v := range desired {
			if updated.Annotations[k] != v {
				updated.Annotations[k], changed = v, true
			}
		}
		if i := slices.IndexFunc(updated.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == clusterv1.NodeUninitializedTaintKey && t.Effect == corev1.TaintEffectNoSchedule
		}); i >= 0 {
			updated.Spec.Taints, changed = slices.Delete(updated.Spec.Taints, i, i+1), true
		}
		changed = nodetaints.Apply(updated, mp.Spec.Template.Spec.Taints) || changed
		if !changed {
			continue
		}
		if err := c.Patch(ctx, updated, client.StrategicMergeFrom(node)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("annotating Node %s: %w", node.Name, err)
		}
	}
	return nil
}

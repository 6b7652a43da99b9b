package machine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/clustercache"
	"github.com/capstan-dev/capstan/internal/nodetaints"
)

// errNodeNotFound says that no Node has the Machine's providerID.
var errNodeNotFound = errors.New("no Node with the Machine's providerID")

// nodeWatchName names the Machine controller's watch on Nodes in the clustercache.
const nodeWatchName = "machine-nodes"

// reconcileNode finds the Machine's Node by providerID, links it (status.nodeRef, status.nodeInfo) and
// syncs the Machine's labels and annotations to it.
func (r *Reconciler) reconcileNode(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	m := s.machine
	if s.cluster == nil {
		return ctrl.Result{}, nil
	}
	clusterKey := client.ObjectKeyFromObject(s.cluster)
	s.health = r.ClusterCache.Health(clusterKey)
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID == "" {
		log.V(4).Info("Waiting for the infrastructure provider to report spec.providerID")
		return ctrl.Result{}, nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, clusterKey)
	if err != nil {
		s.nodeGetErr = err
		return ctrl.Result{}, err
	}
	if err := r.ClusterCache.WatchNodes(ctx, clusterKey, nodeWatchName, r.controller, r.nodeToMachines(clusterKey)); err != nil {
		s.nodeGetErr = err
		return ctrl.Result{}, err
	}
	node, err := getNode(ctx, remote, *m.Spec.ProviderID)
	if errors.Is(err, errNodeNotFound) {
		if m.Status.NodeRef != nil && m.DeletionTimestamp.IsZero() {
			log.Info("The Machine's Node has been deleted", "Node", klog.KRef("", m.Status.NodeRef.Name))
		} else if m.DeletionTimestamp.IsZero() {
			// The Node's creation requeues the Machine.
			log.Info("Waiting for a Node with the Machine's providerID", "providerID", *m.Spec.ProviderID)
		}
		return ctrl.Result{}, nil
	}
	if err != nil {
		s.nodeGetErr = err
		return ctrl.Result{}, err
	}
	s.node = node

	if m.Status.NodeRef == nil {
		log.Info("Linking the Machine to its Node", "Node", klog.KObj(node))
		m.Status.NodeRef = &corev1.ObjectReference{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Node", Name: node.Name, UID: node.UID}
		r.event(m, corev1.EventTypeNormal, "SuccessfulSetNodeRef", "%s", node.Name)
	}
	info := node.Status.NodeInfo
	m.Status.NodeInfo = &info

	desired, changed := desiredNode(node, m, r.AdditionalSyncMachineLabels)
	if !changed {
		return ctrl.Result{}, nil
	}
	log.V(4).Info("Syncing labels and annotations to the Node", "Node", klog.KObj(node))
	if err := remote.Patch(ctx, desired, client.StrategicMergeFrom(node)); err != nil {
		return ctrl.Result{}, fmt.Errorf("syncing labels to Node %s: %w", node.Name, err)
	}
	return ctrl.Result{}, nil
}

// getNode finds the Node with a providerID, from the clustercache's index.
func getNode(ctx context.Context, c client.Reader, providerID string) (*corev1.Node, error) {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.MatchingFields{clustercache.NodeProviderIDField: providerID}); err != nil {
		return nil, fmt.Errorf("listing Nodes with providerID %s: %w", providerID, err)
	}
	switch len(nodes.Items) {
	case 0:
		return nil, errNodeNotFound
	case 1:
		return &nodes.Items[0], nil
	default:
		return nil, fmt.Errorf("%d Nodes have providerID %s, expected one", len(nodes.Items), providerID)
	}
}

// managedLabels returns the Machine labels that belong on its Node: node-role.kubernetes.io/*, labels of
// the node-restriction.kubernetes.io and node.cluster.x-k8s.io domains (and their subdomains), and those
// whose key matches one of the additional patterns.
func managedLabels(labels map[string]string, additional []*regexp.Regexp) map[string]string {
	out := map[string]string{}
	for key, value := range labels {
		domain, _, hasPrefix := strings.Cut(key, "/")
		if hasPrefix && (domain == clusterv1.NodeRoleLabelPrefix ||
			inDomain(domain, clusterv1.NodeRestrictionLabelDomain) || inDomain(domain, clusterv1.ManagedNodeLabelDomain)) {
			out[key] = value
			continue
		}
		if slices.ContainsFunc(additional, func(re *regexp.Regexp) bool { return re.MatchString(key) }) {
			out[key] = value
		}
	}
	return out
}

func inDomain(domain, parent string) bool {
	return domain == parent || strings.HasSuffix(domain, "."+parent)
}

// desiredNode returns the Node with the Machine's managed labels (removing those synced before that the
// Machine no longer has, as recorded in the labels-from-machine annotation), the annotations linking it to
// the Machine, without the uninitialized taint and with the Machine's taints (package nodetaints); changed is
// false when the Node already is so.
func desiredNode(node *corev1.Node, m *clusterv1.Machine, additional []*regexp.Regexp) (*corev1.Node, bool) {
	wanted := managedLabels(m.Labels, additional)
	out := node.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}

	for _, key := range strings.Split(node.Annotations[clusterv1.LabelsFromMachineAnnotation], ",") {
		if _, still := wanted[key]; key != "" && !still {
			delete(out.Labels, key)
		}
	}
	maps.Copy(out.Labels, wanted)

	annotations := map[string]string{
		clusterv1.ClusterNameAnnotation:       m.Spec.ClusterName,
		clusterv1.ClusterNamespaceAnnotation:  m.Namespace,
		clusterv1.MachineAnnotation:           m.Name,
		clusterv1.LabelsFromMachineAnnotation: strings.Join(slices.Sorted(maps.Keys(wanted)), ","),
	}
	if owner := metav1.GetControllerOf(m); owner != nil {
		annotations[clusterv1.OwnerKindAnnotation] = owner.Kind
		annotations[clusterv1.OwnerNameAnnotation] = owner.Name
	}
	maps.Copy(out.Annotations, annotations)

	taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
		return t.Key == clusterv1.NodeUninitializedTaintKey && t.Effect == corev1.TaintEffectNoSchedule
	})
	taintsChanged := len(taints) != len(node.Spec.Taints)
	if taintsChanged {
		out.Spec.Taints = taints
	}
	taintsChanged = nodetaints.Apply(out, m.Spec.Taints) || taintsChanged

	changed := taintsChanged || !maps.Equal(out.Labels, node.Labels) || !maps.Equal(out.Annotations, node.Annotations)
	return out, changed
}

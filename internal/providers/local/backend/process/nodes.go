package process

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

const (
	nodeLeaseNamespace = "kube-node-lease"
	// nodeLeaseDuration is the kubelet's default (40s); leases are renewed every heartbeat interval.
	nodeLeaseDuration = 40
	controlPlaneRole  = "node-role.kubernetes.io/control-plane"
	zoneLabel         = "topology.kubernetes.io/zone"
	// excludeFromLBLabel is the label kubeadm gives control plane Nodes.
	excludeFromLBLabel = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// nodeSpec is what a simulated machine registers as its Node.
type nodeSpec struct {
	Name, ProviderID, KubeletVersion, FailureDomain string
	ControlPlane                                    bool
	Labels                                          map[string]string
	Taints                                          []corev1.Taint
	DefaultTaints                                   bool
	// Ready is the status the Node's Ready condition reports (see backend.Machine.Ready).
	Ready string
	// KubeletPort is the simulated kubelet's port.
	KubeletPort int
}

func newNodeSpec(m backend.Machine, kubeletPort int) nodeSpec {
	return nodeSpec{
		Name: m.NodeName, ProviderID: m.ProviderID, KubeletVersion: m.Version, FailureDomain: m.FailureDomain,
		ControlPlane: m.ControlPlane != nil, Labels: m.Labels, Taints: m.Taints, DefaultTaints: m.DefaultTaints,
		Ready: m.Ready, KubeletPort: kubeletPort,
	}
}

// desiredNode returns the Node a simulated machine registers: its labels, provider ID and taints (for
// control plane nodes, kubeadm's role labels and, unless the bootstrap data sets taints, kubeadm's
// control-plane taint), and a Ready status with the capacity of a small machine.
func desiredNode(n nodeSpec, now metav1.Time) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": n.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     runtime.GOARCH,
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	if n.FailureDomain != "" {
		labels[zoneLabel] = n.FailureDomain
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: n.ProviderID},
	}
	if n.ControlPlane {
		labels[controlPlaneRole] = ""
		labels[excludeFromLBLabel] = ""
		if n.DefaultTaints {
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: controlPlaneRole, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, n.Taints...)
	node.Status = desiredNodeStatus(n, now)
	return node
}

func desiredNodeStatus(n nodeSpec, now metav1.Time) corev1.NodeStatus {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("2"),
		corev1.ResourceMemory:           resource.MustParse("4Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	ready := condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "Simulated node by capstan infra-local is ready")
	switch corev1.ConditionStatus(n.Ready) {
	case corev1.ConditionFalse:
		ready = condition(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", "Simulated node is made not ready by the LocalMachine's node-ready annotation")
	case corev1.ConditionUnknown:
		ready = condition(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")
	}
	return corev1.NodeStatus{
		Capacity:    resources,
		Allocatable: resources.DeepCopy(),
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "Simulated node has sufficient memory available"),
			condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "Simulated node has no disk pressure"),
			condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "Simulated node has sufficient PID available"),
			ready,
		},
		Addresses: nodeAddresses(n.Name),
		DaemonEndpoints: corev1.NodeDaemonEndpoints{
			KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(n.KubeletPort)}, //nolint:gosec // a port fits
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          n.KubeletVersion,
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
			OSImage:                 "capstan simulated node",
			ContainerRuntimeVersion: "capstan://simulated",
			MachineID:               n.Name,
			SystemUUID:              n.Name,
		},
	}
}

func nodeAddresses(name string) []corev1.NodeAddress {
	return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}}
}

// statusUpToDate reports whether a Node's status already says what the simulated machine reports
// (ignoring heartbeat times).
func statusUpToDate(have, want corev1.NodeStatus) bool {
	if have.NodeInfo.KubeletVersion != want.NodeInfo.KubeletVersion || !equality.Semantic.DeepEqual(have.Addresses, want.Addresses) ||
		have.DaemonEndpoints != want.DaemonEndpoints ||
		!equality.Semantic.DeepEqual(have.Capacity, want.Capacity) {
		return false
	}
	for _, w := range want.Conditions {
		found := false
		for _, h := range have.Conditions {
			if h.Type == w.Type {
				found = h.Status == w.Status
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// registerNode creates or updates the Node and its Lease.
func registerNode(ctx context.Context, client kubernetes.Interface, n nodeSpec) error {
	now := metav1.Now()
	want := desiredNode(n, now)
	node, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		node, err = client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating Node %s: %w", n.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading Node %s: %w", n.Name, err)
	default:
		if node.Spec.ProviderID != "" && node.Spec.ProviderID != n.ProviderID {
			return fmt.Errorf("node %s already exists with provider ID %s", n.Name, node.Spec.ProviderID)
		}
		missing := map[string]string{}
		for k, v := range want.Labels {
			if have, ok := node.Labels[k]; !ok || have != v {
				missing[k] = v
			}
		}
		missingTaints := taintsMissing(node.Spec.Taints, want.Spec.Taints)
		if len(missing) > 0 || node.Spec.ProviderID == "" || len(missingTaints) > 0 {
			patch := map[string]any{"metadata": map[string]any{"labels": missing}}
			spec := map[string]any{}
			if node.Spec.ProviderID == "" {
				spec["providerID"] = n.ProviderID
			}
			if len(missingTaints) > 0 {
				spec["taints"] = append(append([]corev1.Taint{}, node.Spec.Taints...), missingTaints...)
			}
			if len(spec) > 0 {
				patch["spec"] = spec
			}
			data, err := json.Marshal(patch)
			if err != nil {
				return err
			}
			if node, err = client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("updating Node %s: %w", n.Name, err)
			}
		}
	}
	if !statusUpToDate(node.Status, want.Status) {
		node.Status = want.Status
		if node, err = client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the status of Node %s: %w", n.Name, err)
		}
	}
	if corev1.ConditionStatus(n.Ready) == corev1.ConditionUnknown {
		return nil // a kubelet that stopped reporting renews no lease
	}
	return renewLease(ctx, client, node)
}

// taintsMissing returns the taints of want that have does not hold (by key and effect): the kubelet
// registers its taints, it never removes the ones added since.
func taintsMissing(have, want []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, w := range want {
		found := false
		for _, h := range have {
			if h.Key == w.Key && h.Effect == w.Effect {
				found = true
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

// patchLease renews the renewTime of a Node's Lease; it fails with NotFound when the Lease is missing.
func patchLease(ctx context.Context, client kubernetes.Interface, name string, now metav1.MicroTime) error {
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"renewTime": now}})
	if err != nil {
		return err
	}
	_, err = client.CoordinationV1().Leases(nodeLeaseNamespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
	return err
}

// patchHeartbeat refreshes the heartbeat time of the Node's Ready condition, as a kubelet's status update.
func patchHeartbeat(ctx context.Context, client kubernetes.Interface, name string, now metav1.Time) error {
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": string(corev1.NodeReady), "lastHeartbeatTime": now},
	}}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
	return err
}

// renewLease renews the Node's heartbeat Lease in kube-node-lease, creating it when missing.
func renewLease(ctx context.Context, client kubernetes.Interface, node *corev1.Node) error {
	now := metav1.NewMicroTime(time.Now())
	err := patchLease(ctx, client, node.Name, now)
	if !apierrors.IsNotFound(err) {
		return err
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: nodeLeaseNamespace, Name: node.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(node.Name),
			LeaseDurationSeconds: ptr.To[int32](nodeLeaseDuration),
			RenewTime:            &now,
		},
	}
	if _, err := client.CoordinationV1().Leases(nodeLeaseNamespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the Lease of Node %s: %w", node.Name, err)
	}
	return nil
}

// deleteNode removes the Node and its Lease (no garbage collector runs in the workload cluster).
func deleteNode(ctx context.Context, client kubernetes.Interface, name string) error {
	if err := client.CoordinationV1().Leases(nodeLeaseNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the Lease of Node %s: %w", name, err)
	}
	if err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Node %s: %w", name, err)
	}
	return nil
}

// heartbeat renews the leases of the cluster's nodes every heartbeat interval and their Ready condition's
// heartbeat time every node status interval, as a kubelet does; a Node deleted by someone else is
// registered again.
func (c *cluster) heartbeat(ctx context.Context) {
	client, ready := c.readyClient()
	if !ready {
		return
	}
	now := time.Now()
	c.statusMu.Lock()
	beat := now.Sub(c.lastBeat) >= c.b.opts.HeartbeatInterval
	status := now.Sub(c.lastNodes) >= c.b.opts.NodeStatusInterval
	nodes := make([]nodeSpec, 0, len(c.nodes))
	for _, n := range c.nodes {
		nodes = append(nodes, n)
	}
	if beat {
		c.lastBeat = now
	}
	if status {
		c.lastNodes = now
	}
	c.statusMu.Unlock()
	if !beat && !status {
		return
	}
	c.nodeOps.Lock()
	defer c.nodeOps.Unlock()
	for _, n := range nodes {
		if !c.hasNode(n.Name) {
			continue // deleted since the snapshot
		}
		if corev1.ConditionStatus(n.Ready) == corev1.ConditionUnknown {
			continue // its kubelet is made to be gone
		}
		var err error
		if beat {
			err = patchLease(ctx, client, n.Name, metav1.NewMicroTime(now))
		}
		if err == nil && status {
			err = patchHeartbeat(ctx, client, n.Name, metav1.NewTime(now))
		}
		if apierrors.IsNotFound(err) {
			// Someone deleted the Node or its Lease: register it again, as a kubelet would.
			err = registerNode(ctx, client, n)
		}
		if err != nil && ctx.Err() == nil {
			c.log.Error(err, "Renewing the heartbeat of Node", "Node", n.Name)
		}
	}
}

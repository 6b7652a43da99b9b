package memory

import (
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// Labels and taints kubeadm gives control plane Nodes.
const (
	controlPlaneRole   = "node-role.kubernetes.io/control-plane"
	excludeFromLBLabel = "node.kubernetes.io/exclude-from-external-load-balancers"
	zoneLabel          = "topology.kubernetes.io/zone"
)

var leasesResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// The control plane components whose mirror Pods a control plane machine has, as kubeadm names them.
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

func toUnstructured(obj k8sruntime.Object) *unstructured.Unstructured {
	m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(fmt.Sprintf("converting a %T: %v", obj, err))
	}
	return &unstructured.Unstructured{Object: m}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	return unstructured.NestedString(obj, path...)
}

func nodeAddresses(name string) []corev1.NodeAddress {
	return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}}
}

// desiredNode is the Node a machine registers, as the process backend's simulated kubelet registers it.
func desiredNode(m backend.Machine, now metav1.Time) *corev1.Node {
	labels := map[string]string{"kubernetes.io/hostname": m.NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": runtime.GOARCH}
	for k, v := range m.Labels {
		labels[k] = v
	}
	if m.FailureDomain != "" {
		labels[zoneLabel] = m.FailureDomain
	}
	node := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: m.NodeName, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: m.ProviderID},
	}
	if m.ControlPlane != nil {
		labels[controlPlaneRole] = ""
		labels[excludeFromLBLabel] = ""
		if m.DefaultTaints {
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: controlPlaneRole, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, m.Taints...)
	res := corev1.ResourceList{
		corev1.ResourceCPU: apiresource.MustParse("2"), corev1.ResourceMemory: apiresource.MustParse("4Gi"),
		corev1.ResourcePods: apiresource.MustParse("110"), corev1.ResourceEphemeralStorage: apiresource.MustParse("20Gi"),
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	node.Status = corev1.NodeStatus{
		Capacity: res, Allocatable: res.DeepCopy(),
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "Simulated node has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "Simulated node has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "Simulated node has sufficient PID available"),
			readyCondition(m.Ready, now),
		},
		Addresses: nodeAddresses(m.NodeName),
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: m.Version, OperatingSystem: "linux", Architecture: runtime.GOARCH,
			OSImage: "capstan simulated node (memory)", ContainerRuntimeVersion: "capstan://simulated", MachineID: m.NodeName, SystemUUID: m.NodeName},
	}
	return node
}

func readyCondition(ready string, now metav1.Time) corev1.NodeCondition {
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "Simulated node by capstan infra-local is ready", LastHeartbeatTime: now, LastTransitionTime: now}
	switch corev1.ConditionStatus(ready) {
	case corev1.ConditionFalse:
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, "KubeletNotReady", "Simulated node is made not ready by the LocalMachine's node-ready annotation"
	case corev1.ConditionUnknown:
		c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return c
}

// registerNode creates the machine's Node and its Lease when missing (a Node deleted by someone else is
// registered again), and keeps the Node's Ready condition and kubelet version as the machine says. The
// memory backend has no heartbeat: the Lease and the conditions change only when the machine does.
func (c *cluster) registerNode(m backend.Machine) error {
	now := metav1.NewTime(time.Now())
	have, err := c.store.get(nodesResource, "", m.NodeName)
	if apierrors.IsNotFound(err) {
		if _, err := c.store.create(nodesResource, toUnstructured(desiredNode(m, now))); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering Node %s: %w", m.NodeName, err)
		}
		lease := &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: m.NodeName},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(m.NodeName), LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime: ptr.To(metav1.NewMicroTime(now.Time))},
		}
		if _, err := c.store.create(leasesResource, toUnstructured(lease)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the Lease of Node %s: %w", m.NodeName, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	node := &corev1.Node{}
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(have.Object, node); err != nil {
		return err
	}
	want := readyCondition(m.Ready, now)
	changed := node.Status.NodeInfo.KubeletVersion != m.Version
	node.Status.NodeInfo.KubeletVersion = m.Version
	found := false
	for i, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			found = true
			if cond.Status != want.Status {
				node.Status.Conditions[i], changed = want, true
			}
		}
	}
	if !found {
		node.Status.Conditions, changed = append(node.Status.Conditions, want), true
	}
	if !changed {
		return nil
	}
	if _, err := c.store.update(nodesResource, toUnstructured(node), "status"); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("updating the status of Node %s: %w", m.NodeName, err)
	}
	return nil
}

func (c *cluster) deleteNode(name string) {
	_, _ = c.store.remove(nodesResource, "", name)
	_, _ = c.store.remove(leasesResource, corev1.NamespaceNodeLease, name)
}

// ensureMirrorPods creates a control plane machine's mirror Pods, Running and Ready, as kubeadm's static
// Pods are named and labelled.
func (c *cluster) ensureMirrorPods(m backend.Machine) error {
	node, err := c.store.get(nodesResource, "", m.NodeName)
	if err != nil {
		return err
	}
	now := metav1.NewTime(time.Now())
	for _, component := range components {
		name := component + "-" + m.NodeName
		if _, err := c.store.get(podsResource, metav1.NamespaceSystem, name); err == nil {
			continue
		}
		pod := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: metav1.NamespaceSystem, Name: name,
				Labels:      map[string]string{"component": component, "tier": "control-plane"},
				Annotations: map[string]string{"kubernetes.io/config.mirror": m.Version, "kubernetes.io/config.source": "file"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: m.NodeName, UID: node.GetUID(),
					Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{NodeName: m.NodeName, HostNetwork: true, PriorityClassName: "system-node-critical",
				Containers: []corev1.Container{{Name: component, Image: "registry.k8s.io/" + component + ":" + m.Version}}},
			Status: corev1.PodStatus{
				Phase: corev1.PodRunning, HostIP: "127.0.0.1", PodIP: "127.0.0.1", StartTime: &now, QOSClass: corev1.PodQOSBestEffort,
				Conditions: []corev1.PodCondition{
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				},
				ContainerStatuses: []corev1.ContainerStatus{{Name: component, Ready: true, Started: ptr.To(true),
					Image: "registry.k8s.io/" + component, ImageID: "capstan://" + component, ContainerID: "capstan://" + component,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
			},
		}
		if component != "etcd" && component != "kube-apiserver" {
			pod.Annotations["local.infrastructure.cluster.x-k8s.io/simulated"] = "true"
		}
		if _, err := c.store.create(podsResource, toUnstructured(pod)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating mirror Pod %s: %w", name, err)
		}
	}
	return nil
}

func (c *cluster) deleteMirrorPods(node string) {
	for _, component := range components {
		_, _ = c.store.remove(podsResource, metav1.NamespaceSystem, component+"-"+node)
	}
}

// uploadClusterConfiguration creates the kubeadm-config ConfigMap, as kubeadm init does; an existing one
// is left alone.
func (c *cluster) uploadClusterConfiguration(config []byte) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: kubeadmConfigMap},
		Data:       map[string]string{clusterConfigurationKey: string(config)},
	}
	_, _ = c.store.create(configMapsResource, toUnstructured(cm))
}

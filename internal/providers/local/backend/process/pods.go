package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/internal/supervisor"
)

// The control plane components of a control plane machine, as kubeadm names their static Pods
// (<component>-<node>) and labels them.
const (
	componentEtcd              = "etcd"
	componentAPIServer         = "kube-apiserver"
	componentControllerManager = "kube-controller-manager"
	componentScheduler         = "kube-scheduler"
)

var components = []string{componentEtcd, componentAPIServer, componentControllerManager, componentScheduler}

const (
	mirrorAnnotation = "kubernetes.io/config.mirror"
	sourceAnnotation = "kubernetes.io/config.source"
	hashAnnotation   = "kubernetes.io/config.hash"
	// simulatedAnnotation marks a mirror Pod whose component does not run (kube-scheduler): see the
	// local provider's documentation.
	simulatedAnnotation = "local.infrastructure.cluster.x-k8s.io/simulated"
)

// podState is what a mirror Pod's status reports of its component.
type podState struct {
	running   bool
	ready     bool
	restarts  int
	reason    string // when not running, e.g. CrashLoopBackOff
	message   string
	startedAt metav1.Time
}

func stateOf(s supervisor.State, ready bool, started metav1.Time) podState {
	ps := podState{running: s.Running, ready: s.Running && ready, restarts: max(s.Starts-1, 0), startedAt: started}
	if !s.Running {
		ps.reason = "ContainerCreating"
		if s.Exits > 0 {
			ps.reason = "CrashLoopBackOff"
		}
		if s.Err != nil {
			ps.message = s.Err.Error()
		}
	}
	return ps
}

// mirrorPod is the mirror Pod of a static Pod of component on node.
func mirrorPod(component, node string, node0 *corev1.Node, version string, command []string, ports map[int32]int, simulated bool) *corev1.Pod {
	hash := sha256.Sum256([]byte(component + "\x00" + node + "\x00" + version + "\x00" + strings.Join(command, "\x00")))
	h := hex.EncodeToString(hash[:16])
	var containerPorts []corev1.ContainerPort
	for p := range ports {
		containerPorts = append(containerPorts, corev1.ContainerPort{ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	image := "registry.k8s.io/" + component + ":" + version
	if component == componentEtcd {
		image = "registry.k8s.io/etcd"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: metav1.NamespaceSystem,
			Name:      component + "-" + node,
			Labels:    map[string]string{"component": component, "tier": "control-plane"},
			Annotations: map[string]string{
				mirrorAnnotation: h, sourceAnnotation: "file", hashAnnotation: h,
			},
		},
		Spec: corev1.PodSpec{
			NodeName:          node,
			HostNetwork:       true,
			PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{{
				Name: component, Image: image, Command: command, Ports: containerPorts,
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
	}
	if simulated {
		pod.Annotations[simulatedAnnotation] = "true"
	}
	if node0 != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node0.Name, UID: node0.UID, Controller: ptr.To(true)}}
	}
	return pod
}

// mirrorPodStatus is a mirror Pod's status for its component's state.
func mirrorPodStatus(component string, s podState) corev1.PodStatus {
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		status := corev1.ConditionFalse
		if ok {
			status = corev1.ConditionTrue
		}
		return corev1.PodCondition{Type: t, Status: status, LastTransitionTime: s.startedAt}
	}
	cs := corev1.ContainerStatus{
		Name: component, Ready: s.ready, RestartCount: int32(s.restarts), //nolint:gosec // a count fits
		Image: "registry.k8s.io/" + component, ImageID: "capstan://" + component, Started: ptr.To(s.running),
	}
	phase := corev1.PodRunning
	if s.running {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: s.startedAt}
		cs.ContainerID = "capstan://" + component
	} else {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: s.reason, Message: s.message}
		if s.restarts == 0 && s.reason == "ContainerCreating" {
			phase = corev1.PodPending
		}
	}
	return corev1.PodStatus{
		Phase: phase,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodInitialized, true), cond(corev1.PodReady, s.ready),
			cond(corev1.ContainersReady, s.ready), cond(corev1.PodScheduled, true),
		},
		HostIP: "127.0.0.1", PodIP: "127.0.0.1",
		HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
		StartTime:         &s.startedAt,
		QOSClass:          corev1.PodQOSBestEffort,
		ContainerStatuses: []corev1.ContainerStatus{cs},
	}
}

// statusKey summarises a status for change detection (ignoring times).
func statusKey(s podState) string {
	return fmt.Sprintf("%t/%t/%d/%s/%s", s.running, s.ready, s.restarts, s.reason, s.message)
}

// ensureMirrorPod creates the mirror Pod when missing (or replaces it when its spec changed, as the
// kubelet does) and writes its status.
func ensureMirrorPod(ctx context.Context, client kubernetes.Interface, want *corev1.Pod, status corev1.PodStatus) error {
	pods := client.CoreV1().Pods(want.Namespace)
	have, err := pods.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if have, err = pods.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating mirror Pod %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading mirror Pod %s: %w", want.Name, err)
	case have.Annotations[mirrorAnnotation] != want.Annotations[mirrorAnnotation]:
		if err := pods.Delete(ctx, want.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing mirror Pod %s: %w", want.Name, err)
		}
		return ensureMirrorPod(ctx, client, want, status)
	}
	have.Status = status
	if _, err := pods.UpdateStatus(ctx, have, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the status of mirror Pod %s: %w", want.Name, err)
	}
	return nil
}

// deleteMirrorPods removes the mirror Pods of a node's control plane components.
func deleteMirrorPods(ctx context.Context, client kubernetes.Interface, node string) error {
	for _, c := range components {
		err := client.CoreV1().Pods(metav1.NamespaceSystem).Delete(ctx, c+"-"+node, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting mirror Pod %s-%s: %w", c, node, err)
		}
	}
	return nil
}

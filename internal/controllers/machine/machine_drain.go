package machine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// mirrorPodAnnotation marks the API server's copies of a kubelet's static Pods, which cannot be evicted.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// drainNode does one pass of draining the Machine's Node: cordon it, then evict every Pod that must go.
// It reports done once no such Pod is left; otherwise message says what the drain waits for.
func (r *Reconciler) drainNode(ctx context.Context, s *scope) (done bool, message string, err error) {
	nodeName := s.machine.Status.NodeRef.Name
	log := ctrl.LoggerFrom(ctx).WithValues("Node", klog.KRef("", nodeName))
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return false, "", err
	}
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("The Node is gone, skipping drain")
			return true, "", nil
		}
		return false, "", fmt.Errorf("getting Node %s: %w", nodeName, err)
	}

	if !node.Spec.Unschedulable {
		log.Info("Cordoning Node")
		cordoned := node.DeepCopy()
		cordoned.Spec.Unschedulable = true
		if err := remote.Patch(ctx, cordoned, client.MergeFrom(node)); err != nil {
			return false, "", fmt.Errorf("cordoning Node %s: %w", nodeName, err)
		}
	}

	pods := &corev1.PodList{}
	if err := remote.List(ctx, pods, client.MatchingFields{"spec.nodeName": nodeName}); err != nil {
		return false, "", fmt.Errorf("listing the Pods of Node %s: %w", nodeName, err)
	}
	// Once the kubelet is gone nobody confirms the deletion of Pods: do not wait for them.
	skipWaitAfter := skipWaitForDeleteTimeout
	if nodeUnreachable(node) {
		skipWaitAfter = time.Second
	}
	toDrain := podsToDrain(pods.Items, time.Now(), skipWaitAfter)
	rules, err := r.machineDrainRules(ctx, s)
	if err != nil {
		return false, "", err
	}
	namespaces, err := namespacesFor(ctx, remote, rules)
	if err != nil {
		return false, "", err
	}
	plan := planDrain(toDrain, rules, namespaces)
	if plan.empty() {
		log.Info("Drain completed")
		return true, "", nil
	}

	result := evictionResult{failed: map[string][]*corev1.Pod{}, waitCompleted: plan.waitCompleted, later: plan.later}
	for _, pod := range plan.evictNow {
		if !pod.DeletionTimestamp.IsZero() {
			result.terminating = append(result.terminating, pod)
			continue
		}
		log.V(4).Info("Evicting Pod", "Pod", klog.KObj(pod))
		eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
		err := remote.SubResource("eviction").Create(ctx, pod, eviction)
		switch {
		case err == nil:
			result.terminating = append(result.terminating, pod)
		case apierrors.IsNotFound(err):
			// Gone already.
		case apierrors.IsTooManyRequests(err):
			// A PodDisruptionBudget does not allow it now; try again on the next pass.
			msg := evictionRefusal(err)
			result.failed[msg] = append(result.failed[msg], pod)
		case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The namespace is being deleted, and the Pod with it.
			result.terminating = append(result.terminating, pod)
		default:
			log.Error(err, "Evicting Pod failed", "Pod", klog.KObj(pod))
			msg := "failed to evict Pod, please check controller logs for errors"
			result.failed[msg] = append(result.failed[msg], pod)
		}
	}
	if result.completed() {
		log.Info("Drain completed")
		return true, "", nil
	}
	message = result.message()
	log.Info("Drain not completed yet, requeuing", "podsTerminating", len(result.terminating), "podsFailedEviction", result.failedCount())
	return false, message, nil
}

// podsToDrain returns the Pods a drain evicts and waits for: not those of DaemonSets, which the DaemonSet
// controller would recreate, not mirror Pods, not those labelled cluster.x-k8s.io/drain=skip, and not those
// whose deletion started longer than skipWaitAfter ago. Sorted by namespace and name.
func podsToDrain(pods []corev1.Pod, now time.Time, skipWaitAfter time.Duration) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
			continue
		}
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.Kind == "DaemonSet" {
			continue
		}
		if pod.Labels[clusterv1.PodDrainLabel] == clusterv1.PodDrainLabelSkip {
			continue
		}
		if !pod.DeletionTimestamp.IsZero() && now.Sub(pod.DeletionTimestamp.Time) > skipWaitAfter {
			continue
		}
		out = append(out, pod)
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// nodeUnreachable reports whether the Node's kubelet stopped reporting (Ready is Unknown).
func nodeUnreachable(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown
		}
	}
	return false
}

// evictionRefusal turns an eviction refused by a PodDisruptionBudget into a message: the API server's
// message and its causes, without the trailing period.
func evictionRefusal(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return lowerFirst(strings.TrimSuffix(err.Error(), "."))
	}
	st := status.Status()
	parts := []string{strings.TrimSuffix(st.Message, ".")}
	if st.Details != nil {
		for _, cause := range st.Details.Causes {
			parts = append(parts, strings.TrimSuffix(cause.Message, "."))
		}
	}
	return lowerFirst(strings.Join(parts, ". "))
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// evictionResult is the outcome of one drain pass.
type evictionResult struct {
	// terminating Pods are being deleted (evicted now or before); the drain waits for them to go.
	terminating []*corev1.Pod
	// failed Pods could not be evicted, by message.
	failed map[string][]*corev1.Pod
	// waitCompleted Pods are not evicted: a MachineDrainRule (or their cluster.x-k8s.io/drain label) says to
	// wait for them to complete.
	waitCompleted []*corev1.Pod
	// later Pods are evicted once the Pods of a lower MachineDrainRule order are gone.
	later []*corev1.Pod
}

func (e evictionResult) completed() bool {
	return len(e.terminating) == 0 && len(e.failed) == 0 && len(e.waitCompleted) == 0 && len(e.later) == 0
}

func (e evictionResult) failedCount() int {
	n := 0
	for _, pods := range e.failed {
		n += len(pods)
	}
	return n
}

// message says what the drain waits for, deterministically: the terminating Pods, then each eviction
// failure, at most three Pods named per line.
func (e evictionResult) message() string {
	lines := []string{"Drain not completed yet:"}
	if len(e.terminating) > 0 {
		lines = append(lines, fmt.Sprintf("* %s: deletionTimestamp set, but still not removed from the Node", podList(e.terminating)))
	}
	for _, msg := range slices.Sorted(maps.Keys(e.failed)) {
		lines = append(lines, fmt.Sprintf("* %s: %s", podList(e.failed[msg]), msg))
	}
	if len(e.waitCompleted) > 0 {
		lines = append(lines, fmt.Sprintf("* %s: waiting for completion", podList(e.waitCompleted)))
	}
	if len(e.later) > 0 {
		lines = append(lines, fmt.Sprintf("* After above Pods have been removed from the Node, the following Pods will be evicted: %s", podList(e.later)))
	}
	return strings.Join(lines, "\n")
}

// podList names up to three Pods: "Pod ns/a" or "Pods ns/a, ns/b, ns/c, ... (2 more)".
func podList(pods []*corev1.Pod) string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	slices.Sort(names)
	noun := "Pod"
	if len(names) > 1 {
		noun = "Pods"
	}
	if len(names) > 3 {
		return fmt.Sprintf("%s %s, ... (%d more)", noun, strings.Join(names[:3], ", "), len(names)-3)
	}
	return noun + " " + strings.Join(names, ", ")
}

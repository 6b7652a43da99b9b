package rollout

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
)

// Fields returns a copy of a Machine template with only the fields whose change needs new Machines.
// The fields propagated in place (labels, annotations, node timeouts, readiness gates, taints) are dropped, and so
// are those that cannot differ for a reason worth a rollout: the cluster name, and the version and namespace
// of the template references (a provider moving to a new API version of the same contract is no reason to
// replace Machines).
func Fields(t *clusterv1.MachineTemplateSpec) *clusterv1.MachineTemplateSpec {
	out := t.DeepCopy()
	out.Labels, out.Annotations = nil, nil
	out.Spec.ClusterName = ""
	out.Spec.ReadinessGates = nil
	out.Spec.Taints = nil
	out.Spec.NodeDrainTimeout, out.Spec.NodeDeletionTimeout, out.Spec.NodeVolumeDetachTimeout = nil, nil, nil
	out.Spec.InfrastructureRef = refWithoutVersion(out.Spec.InfrastructureRef)
	if out.Spec.Bootstrap.ConfigRef != nil {
		ref := refWithoutVersion(*out.Spec.Bootstrap.ConfigRef)
		out.Spec.Bootstrap.ConfigRef = &ref
	}
	return out
}

// CopyInPlaceFields copies the Machine spec fields that change without replacing Machines (the node
// timeouts, the readiness gates and the taints) from from to to.
func CopyInPlaceFields(to, from *clusterv1.MachineSpec) {
	to.NodeDrainTimeout = from.NodeDrainTimeout.DeepCopy()
	to.NodeDeletionTimeout = from.NodeDeletionTimeout.DeepCopy()
	to.NodeVolumeDetachTimeout = from.NodeVolumeDetachTimeout.DeepCopy()
	to.ReadinessGates = nil
	if from.ReadinessGates != nil {
		to.ReadinessGates = append([]clusterv1.MachineReadinessGate{}, from.ReadinessGates...)
	}
	to.Taints = nil
	if from.Taints != nil {
		to.Taints = append([]clusterv1.MachineTaint{}, from.Taints...)
	}
}

func refWithoutVersion(ref corev1.ObjectReference) corev1.ObjectReference {
	ref.APIVersion = schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).Group
	ref.Namespace = ""
	ref.UID = ""
	ref.ResourceVersion = ""
	return ref
}

// TemplateDiff compares the rollout fields of a MachineSet's template (current) with the
// MachineDeployment's (desired) and describes the differences; none means the MachineSet's Machines are up
// to date. MachineSets are matched by comparing templates rather than hash labels, so that MachineSets
// created by another implementation (for example upstream Cluster API before clusterctl move) are
// recognised and do not cause a rollout.
func TemplateDiff(current, desired *clusterv1.MachineTemplateSpec) []string {
	c, d := Fields(current), Fields(desired)
	var diffs []string
	if !apiequality.Semantic.DeepEqual(c.Spec.Version, d.Spec.Version) {
		diffs = append(diffs, fmt.Sprintf("Version %s, %s required", ptr.Deref(c.Spec.Version, "nil"), ptr.Deref(d.Spec.Version, "nil")))
	}
	if !apiequality.Semantic.DeepEqual(c.Spec.Bootstrap, d.Spec.Bootstrap) {
		kind := "Bootstrap"
		if c.Spec.Bootstrap.ConfigRef != nil {
			kind = strings.TrimSuffix(c.Spec.Bootstrap.ConfigRef.Kind, clusterv1.TemplateSuffix)
		}
		diffs = append(diffs, fmt.Sprintf("%s is not up-to-date", kind))
	}
	if !apiequality.Semantic.DeepEqual(c.Spec.InfrastructureRef, d.Spec.InfrastructureRef) {
		diffs = append(diffs, fmt.Sprintf("%s is not up-to-date", strings.TrimSuffix(c.Spec.InfrastructureRef.Kind, clusterv1.TemplateSuffix)))
	}
	if !apiequality.Semantic.DeepEqual(c.Spec.FailureDomain, d.Spec.FailureDomain) {
		diffs = append(diffs, fmt.Sprintf("Failure domain %s, %s required", ptr.Deref(c.Spec.FailureDomain, "nil"), ptr.Deref(d.Spec.FailureDomain, "nil")))
	}
	if len(diffs) == 0 && !apiequality.Semantic.DeepEqual(c, d) {
		// Fields without a dedicated message, for example spec.providerID.
		diffs = append(diffs, "Machine spec is not up-to-date")
	}
	return diffs
}

// AfterExpired reports whether the MachineDeployment's spec.rolloutAfter has passed and ms was created
// before it. Timestamps have a resolution of one second: a MachineSet created in the same second as
// rolloutAfter counts as created after it, or every MachineSet created in that second would ask for another.
func AfterExpired(md *clusterv1.MachineDeployment, ms *clusterv1.MachineSet, now time.Time) bool {
	after := md.Spec.RolloutAfter
	return after != nil && !now.Before(after.Time) && ms.CreationTimestamp.Before(after)
}

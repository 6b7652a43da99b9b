package machineset

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
	"github.com/capstan-dev/capstan/internal/external"
	"github.com/capstan-dev/capstan/internal/feature"
)

// preflightFailedRequeueAfter is when a MachineSet whose preflight checks failed looks again.
const preflightFailedRequeueAfter = 15 * time.Second

// kubeadmBootstrapGroup is the API group of the kubeadm bootstrap provider, whose joins need the control
// plane's minor version.
const kubeadmBootstrapGroup = "bootstrap.cluster.x-k8s.io"

// minVersionSkewThree is the first control plane version whose kubelets may be three minor versions older.
var minVersionSkewThree = semver.MustParse("1.28.0")

// AllPreflightChecks is the default of --machineset-preflight-checks: every check.
func AllPreflightChecks() []clusterv1.MachineSetPreflightCheck {
	return []clusterv1.MachineSetPreflightCheck{clusterv1.MachineSetPreflightCheckAll}
}

// preflightProblems runs the preflight checks before action (creating or remediating Machines), as
// upstream's MachineSet does: the control plane is stable (neither provisioning nor upgrading, nor waiting
// for a topology upgrade), the Machines' version respects the Kubernetes and kubeadm version skew policies
// against the control plane's, and in a managed topology equals it. It returns what holds the action up,
// or an error message when the control plane cannot be read. The checks only run with the
// MachineSetPreflightChecks feature gate, for Clusters with a control plane object, and leave out those
// that --machineset-preflight-checks does not enable or that the machineset.cluster.x-k8s.io/skip-preflight-checks
// annotation lists.
func (r *Reconciler) preflightProblems(ctx context.Context, s *scope, action string) []string {
	enabled := sets.New(r.preflightChecks()...)
	skipped := skippedPreflightChecks(s.ms)
	if !r.FeatureGates.Enabled(feature.MachineSetPreflightChecks) || enabled.Len() == 0 || skipped.Has(clusterv1.MachineSetPreflightCheckAll) {
		return nil
	}
	cluster := s.cluster
	if cluster == nil || cluster.Spec.ControlPlaneRef == nil {
		return nil
	}
	// The manager's client reads it from the cache: a MachineSet held up by its control plane does not read
	// it from the API server at every look.
	cp, err := external.Get(ctx, r.Client, cluster.Spec.ControlPlaneRef, cluster.Namespace)
	if err != nil {
		return []string{fmt.Sprintf("Failed to perform %q: failed to get %s %s (preflight checks cannot run)", action, cluster.Spec.ControlPlaneRef.Kind,
			klog.KRef(cluster.Namespace, cluster.Spec.ControlPlaneRef.Name))}
	}
	cpVersion, err := contract.ControlPlaneVersion(cp)
	if err != nil || cpVersion == "" {
		// A control plane without a version is not checked.
		return nil
	}
	cpSemver, err := semver.ParseTolerant(cpVersion)
	if err != nil {
		return []string{fmt.Sprintf("Failed to perform %q: version %q of %s %s is not a version", action, cpVersion, cp.GetKind(), klog.KObj(cp))}
	}
	run := func(c clusterv1.MachineSetPreflightCheck) bool {
		return (enabled.Has(clusterv1.MachineSetPreflightCheckAll) || enabled.Has(c)) && !skipped.Has(c)
	}

	var problems []string
	if run(clusterv1.MachineSetPreflightCheckControlPlaneIsStable) {
		if p := controlPlaneStable(cp, cluster, cpVersion); p != "" {
			problems = append(problems, p)
		}
	}
	if v := s.ms.Spec.Template.Spec.Version; v != nil {
		msSemver, err := semver.ParseTolerant(*v)
		if err != nil {
			return append(problems, fmt.Sprintf("Failed to perform %q: spec.template.spec.version %q is not a version", action, *v))
		}
		if run(clusterv1.MachineSetPreflightCheckKubernetesVersionSkew) {
			if p := kubernetesVersionSkew(cpSemver, msSemver); p != "" {
				problems = append(problems, p)
			}
		}
		if run(clusterv1.MachineSetPreflightCheckKubeadmVersionSkew) {
			if p := kubeadmVersionSkew(cpSemver, msSemver, s.ms); p != "" {
				problems = append(problems, p)
			}
		}
		if run(clusterv1.MachineSetPreflightCheckControlPlaneVersionSkew) && r.FeatureGates.Enabled(feature.ClusterTopology) &&
			cluster.Spec.Topology != nil && cpVersion != *v {
			problems = append(problems, fmt.Sprintf("MachineSet version (%s) is not yet the same as the ControlPlane version (%s), waiting for version to be propagated to the MachineSet (%q preflight check failed)",
				*v, cpVersion, clusterv1.MachineSetPreflightCheckControlPlaneVersionSkew))
		}
	}
	if len(problems) > 0 {
		ctrl.LoggerFrom(ctx).Info(fmt.Sprintf("%s on hold because %s. The operation will continue after the preflight check(s) pass", action, strings.Join(problems, "; ")))
	}
	return problems
}

func (r *Reconciler) preflightChecks() []clusterv1.MachineSetPreflightCheck {
	if r.PreflightChecks == nil {
		return AllPreflightChecks()
	}
	return r.PreflightChecks
}

// controlPlaneStable says why the control plane is not stable: a pending topology upgrade, provisioning
// (no status.version yet), or upgrading (spec.version newer than status.version).
func controlPlaneStable(cp *unstructured.Unstructured, cluster *clusterv1.Cluster, cpVersion string) string {
	ref := klog.KObj(cp)
	if t := cluster.Spec.Topology; t != nil && t.Version != "" && t.Version != cpVersion {
		// During a chained upgrade the control plane may have the version of the current step.
		pending := t.Version
		if step := cluster.Annotations[clusterv1.ClusterTopologyUpgradeStepAnnotation]; step != "" {
			pending = step
		}
		if pending != cpVersion {
			return fmt.Sprintf("%s %s has a pending version upgrade to %s (%q preflight check failed)", cp.GetKind(), ref, pending,
				clusterv1.MachineSetPreflightCheckControlPlaneIsStable)
		}
	}
	statusVersion, _ := contract.StatusVersion(cp)
	if statusVersion == "" {
		return fmt.Sprintf("%s %s is provisioning (%q preflight check failed)", cp.GetKind(), ref, clusterv1.MachineSetPreflightCheckControlPlaneIsStable)
	}
	spec, errSpec := semver.ParseTolerant(cpVersion)
	status, errStatus := semver.ParseTolerant(statusVersion)
	if errSpec == nil && errStatus == nil && spec.GT(status) {
		return fmt.Sprintf("%s %s is upgrading (%q preflight check failed)", cp.GetKind(), ref, clusterv1.MachineSetPreflightCheckControlPlaneIsStable)
	}
	return ""
}

// kubernetesVersionSkew applies the kubelet version skew policy: not newer than the control plane, and at
// most 3 minor versions older (2 before v1.28).
func kubernetesVersionSkew(cp, ms semver.Version) string {
	if ms.Minor > cp.Minor {
		return fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version (%q preflight check failed)",
			ms, cp, clusterv1.MachineSetPreflightCheckKubernetesVersionSkew)
	}
	skew := uint64(3)
	if cp.LT(minVersionSkewThree) {
		skew = 2
	}
	if cp.Minor >= skew && ms.Minor < cp.Minor-skew {
		return fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to the kubernetes version skew policy as MachineSet version is more than %d minor versions older than the ControlPlane version (%q preflight check failed)",
			ms, cp, skew, clusterv1.MachineSetPreflightCheckKubernetesVersionSkew)
	}
	return ""
}

// kubeadmVersionSkew: kubeadm joins a node only with the control plane's minor version.
func kubeadmVersionSkew(cp, ms semver.Version, set *clusterv1.MachineSet) string {
	ref := set.Spec.Template.Spec.Bootstrap.ConfigRef
	if ref == nil || ref.Kind != "KubeadmConfigTemplate" || schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).Group != kubeadmBootstrapGroup {
		return ""
	}
	if cp.Minor != ms.Minor {
		return fmt.Sprintf("MachineSet version (%s) and ControlPlane version (%s) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane (%q preflight check failed)",
			ms, cp, clusterv1.MachineSetPreflightCheckKubeadmVersionSkew)
	}
	return ""
}

// skippedPreflightChecks reads the machineset.cluster.x-k8s.io/skip-preflight-checks annotation.
func skippedPreflightChecks(ms *clusterv1.MachineSet) sets.Set[clusterv1.MachineSetPreflightCheck] {
	out := sets.New[clusterv1.MachineSetPreflightCheck]()
	for _, c := range strings.Split(ms.Annotations[clusterv1.MachineSetSkipPreflightChecksAnnotation], ",") {
		if c = strings.TrimSpace(c); c != "" {
			out.Insert(clusterv1.MachineSetPreflightCheck(c))
		}
	}
	return out
}

package kubeadmcontrolplane

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/runtime/inplace"
)

// computeUpToDate records in the scope which Machines do not match the spec, and why.
func (s *scope) computeUpToDate() {
	s.notUpToDate = map[string]rolloutReasons{}
	for _, m := range s.machines {
		if r := upToDate(s.kcp, m, s.kubeadmConfigs[m.Name], s.infraMachines[m.Name], s.now); len(r.log) > 0 {
			s.notUpToDate[m.Name] = r
		}
	}
}

// upToDate returns why a Machine does not match the KubeadmControlPlane; nothing when it does. It rolls a
// Machine out when its certificates expire within rolloutBefore.certificatesExpiryDays, when rolloutAfter
// passed after the Machine was created, when its version differs, when the ClusterConfiguration it was
// created with differs (DNS aside), when its KubeadmConfig's init or join configuration (and the rest of the
// KubeadmConfigSpec) differs, or when its InfraMachine was cloned from another template. A missing
// KubeadmConfig or InfraMachine, or one without the cloned-from annotations, is not a reason (as upstream:
// a client problem must not roll the control plane out).
func upToDate(kcp *controlplanev1.KubeadmControlPlane, m *clusterv1.Machine, cfg *bootstrapv1.KubeadmConfig, infra *unstructured.Unstructured, now time.Time) rolloutReasons {
	var r rolloutReasons
	add := func(log, condition string) {
		r.log = append(r.log, log)
		r.condition = append(r.condition, condition)
	}
	if rb := kcp.Spec.RolloutBefore; rb != nil && rb.CertificatesExpiryDays != nil && m.Status.CertificatesExpiryDate != nil {
		if now.Add(time.Duration(*rb.CertificatesExpiryDays) * 24 * time.Hour).After(m.Status.CertificatesExpiryDate.Time) {
			add("certificates will expire soon, rolloutBefore expired", "Certificates will expire soon")
			r.replaceOnly = true
		}
	}
	if ra := kcp.Spec.RolloutAfter; ra != nil && ra.Time.Before(now) && m.CreationTimestamp.Time.Before(ra.Time) {
		add("rolloutAfter expired", "KubeadmControlPlane spec.rolloutAfter expired")
		r.replaceOnly = true
	}
	if !sameVersion(ptr.Deref(m.Spec.Version, ""), kcp.Spec.Version) {
		v := ptr.Deref(m.Spec.Version, "")
		add(fmt.Sprintf("Machine version %q is not equal to KCP version %q", v, kcp.Spec.Version), fmt.Sprintf("Version %s, %s required", v, kcp.Spec.Version))
	}
	if diff, ok := matchesClusterConfiguration(kcp, m); !ok {
		add("Machine KubeadmConfig ClusterConfiguration is outdated: diff: "+diff, "KubeadmConfig is not up-to-date")
	} else if diff, ok := matchesKubeadmConfig(kcp, cfg); !ok {
		add("Machine KubeadmConfig InitConfiguration or JoinConfiguration are outdated: diff: "+diff, "KubeadmConfig is not up-to-date")
	}
	if infra != nil {
		name, ok1 := infra.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation]
		gk, ok2 := infra.GetAnnotations()[clusterv1.TemplateClonedFromGroupKindAnnotation]
		ref := kcp.Spec.MachineTemplate.InfrastructureRef
		wantGK := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind().String()
		if ok1 && ok2 && (name != ref.Name || gk != wantGK) {
			add(fmt.Sprintf("Infrastructure template on KCP rotated from %s %s to %s %s", gk, name, wantGK, ref.Name),
				fmt.Sprintf("%s is not up-to-date", m.Spec.InfrastructureRef.Kind))
		}
	}
	return r
}

// sameVersion compares two Kubernetes versions, with or without the leading v.
func sameVersion(a, b string) bool {
	va, errA := semver.ParseTolerant(a)
	vb, errB := semver.ParseTolerant(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return va.Equals(vb)
}

// matchesClusterConfiguration compares the ClusterConfiguration a Machine was created with (its
// kubeadm-cluster-configuration annotation) with the spec's, DNS aside (it is updated in place). A Machine
// without the annotation (adopted or older) matches.
func matchesClusterConfiguration(kcp *controlplanev1.KubeadmControlPlane, m *clusterv1.Machine) (string, bool) {
	raw, ok := m.Annotations[controlplanev1.KubeadmClusterConfigurationAnnotation]
	if !ok {
		return "", true
	}
	var machineCC *bootstrapv1.ClusterConfiguration
	if err := json.Unmarshal([]byte(raw), &machineCC); err != nil {
		return "the annotation " + controlplanev1.KubeadmClusterConfigurationAnnotation + " cannot be read", false
	}
	if machineCC == nil {
		machineCC = &bootstrapv1.ClusterConfiguration{}
	}
	want := kcp.Spec.KubeadmConfigSpec.ClusterConfiguration
	if want == nil {
		want = &bootstrapv1.ClusterConfiguration{}
	}
	machineCC.DNS = want.DNS
	if equality.Semantic.DeepEqual(machineCC, want) {
		return "", true
	}
	return inplace.Diff(machineCC, want), false
}

// matchesKubeadmConfig compares a Machine's KubeadmConfig with the spec's KubeadmConfigSpec, leaving out
// what differs by construction: the ClusterConfiguration (compared through the annotation), the init or
// join configuration the Machine did not get, the join discovery, and what the bootstrap provider fills in
// when the spec leaves it empty.
func matchesKubeadmConfig(kcp *controlplanev1.KubeadmControlPlane, cfg *bootstrapv1.KubeadmConfig) (string, bool) {
	if cfg == nil {
		return "", true
	}
	want := kcp.Spec.KubeadmConfigSpec.DeepCopy()
	got := cfg.Spec.DeepCopy()
	if got.JoinConfiguration == nil {
		want.JoinConfiguration = nil
	}
	if got.InitConfiguration == nil {
		want.InitConfiguration = nil
	}
	want.ClusterConfiguration, got.ClusterConfiguration = nil, nil
	if want.JoinConfiguration == nil {
		got.JoinConfiguration = nil
	}
	if want.JoinConfiguration != nil {
		want.JoinConfiguration.Discovery = bootstrapv1.Discovery{}
	}
	if got.JoinConfiguration != nil {
		got.JoinConfiguration.Discovery = bootstrapv1.Discovery{}
		if want.JoinConfiguration != nil && want.JoinConfiguration.ControlPlane == nil {
			got.JoinConfiguration.ControlPlane = nil
		}
		if want.JoinConfiguration != nil && reflect.DeepEqual(want.JoinConfiguration.NodeRegistration, bootstrapv1.NodeRegistrationOptions{}) {
			got.JoinConfiguration.NodeRegistration = bootstrapv1.NodeRegistrationOptions{}
		}
	}
	if got.InitConfiguration != nil && want.InitConfiguration != nil {
		got.InitConfiguration.TypeMeta = want.InitConfiguration.TypeMeta
	}
	if got.JoinConfiguration != nil && want.JoinConfiguration != nil {
		got.JoinConfiguration.TypeMeta = want.JoinConfiguration.TypeMeta
	}
	if equality.Semantic.DeepEqual(got, want) {
		return "", true
	}
	return inplace.Diff(got, want), false
}

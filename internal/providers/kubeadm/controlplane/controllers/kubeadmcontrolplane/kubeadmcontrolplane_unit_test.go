package kubeadmcontrolplane

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capstan-dev/capstan/api/bootstrap/kubeadm/v1beta1"
	controlplanev1 "github.com/capstan-dev/capstan/api/controlplane/kubeadm/v1beta1"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/conditions"
	"github.com/capstan-dev/capstan/internal/providers/kubeadm/controlplane/etcd"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func machine(name string, age time.Duration, fd string, mutate ...func(*clusterv1.Machine)) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(epoch.Add(-age)), Annotations: map[string]string{}}}
	if fd != "" {
		m.Spec.FailureDomain = ptr.To(fd)
	}
	m.Spec.Version = ptr.To("v1.36.0")
	m.Status.NodeRef = &corev1.ObjectReference{Name: "node-" + name}
	for _, f := range mutate {
		f(m)
	}
	return m
}

func testScope(fds []string, machines ...*clusterv1.Machine) *scope {
	s := &scope{
		kcp:      &controlplanev1.KubeadmControlPlane{Spec: controlplanev1.KubeadmControlPlaneSpec{Version: "v1.36.0"}},
		cluster:  &clusterv1.Cluster{},
		now:      epoch,
		machines: map[string]*clusterv1.Machine{},
	}
	if len(fds) > 0 {
		s.cluster.Status.FailureDomains = clusterv1.FailureDomains{}
		for _, fd := range fds {
			s.cluster.Status.FailureDomains[fd] = clusterv1.FailureDomainSpec{ControlPlane: true}
		}
	}
	for _, m := range machines {
		s.machines[m.Name] = m
	}
	s.notUpToDate = map[string]rolloutReasons{}
	return s
}

func deleteAnnotated(m *clusterv1.Machine) { m.Annotations[clusterv1.DeleteMachineAnnotation] = "" }

func TestSelectMachineForScaleDown(t *testing.T) {
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		outdated []string
		fds      []string
		want     string
	}{
		{name: "oldest without failure domains", machines: []*clusterv1.Machine{machine("a", time.Hour, ""), machine("b", 2*time.Hour, ""), machine("c", 3*time.Minute, "")}, want: "b"},
		{name: "oldest of the failure domain with the most Machines", fds: []string{"fd1", "fd2"},
			machines: []*clusterv1.Machine{machine("a", 3*time.Hour, "fd1"), machine("b", time.Hour, "fd2"), machine("c", 2*time.Hour, "fd2")}, want: "c"},
		{name: "outdated first", fds: []string{"fd1", "fd2"}, outdated: []string{"a"},
			machines: []*clusterv1.Machine{machine("a", time.Minute, "fd1"), machine("b", time.Hour, "fd2"), machine("c", 2*time.Hour, "fd2")}, want: "a"},
		{name: "delete annotation first", machines: []*clusterv1.Machine{machine("a", time.Hour, ""), machine("b", time.Minute, "", deleteAnnotated)}, want: "b"},
		{name: "outdated with the delete annotation before other annotated", outdated: []string{"b"},
			machines: []*clusterv1.Machine{machine("a", time.Hour, "", deleteAnnotated), machine("b", time.Minute, "", deleteAnnotated)}, want: "b"},
		{name: "Machines outside the known failure domains first", fds: []string{"fd1"},
			machines: []*clusterv1.Machine{machine("a", time.Hour, "fd1"), machine("b", time.Minute, "gone")}, want: "b"},
		{name: "outdated with unhealthy components before other outdated", outdated: []string{"a", "b"},
			machines: []*clusterv1.Machine{machine("a", time.Hour, "", healthyMachine), machine("b", time.Minute, "")}, want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := testScope(tt.fds, tt.machines...)
			var outdated []*clusterv1.Machine
			for _, n := range tt.outdated {
				outdated = append(outdated, s.machines[n])
			}
			g.Expect(selectMachineForScaleDown(s, outdated).Name).To(Equal(tt.want))
		})
	}
}

func healthyMachine(m *clusterv1.Machine) {
	for _, c := range []clusterv1.ConditionType{controlplanev1.MachineAPIServerPodHealthyCondition, controlplanev1.MachineControllerManagerPodHealthyCondition,
		controlplanev1.MachineSchedulerPodHealthyCondition, controlplanev1.MachineEtcdPodHealthyCondition, controlplanev1.MachineEtcdMemberHealthyCondition} {
		conditions.MarkTrue(m, c)
	}
}

func TestNextFailureDomain(t *testing.T) {
	g := NewWithT(t)
	s := testScope([]string{"fd1", "fd2", "fd3"}, machine("a", time.Hour, "fd1"), machine("b", time.Hour, "fd3"))
	g.Expect(s.nextFailureDomain()).To(Equal(ptr.To("fd2")))
	// An outdated Machine does not count as placed: its failure domain still needs an up-to-date one.
	s = testScope([]string{"fd1", "fd2"}, machine("a", time.Hour, "fd1"), machine("b", time.Hour, "fd2"), machine("c", time.Hour, "fd2"))
	s.notUpToDate["a"] = rolloutReasons{log: []string{"old"}}
	g.Expect(s.nextFailureDomain()).To(Equal(ptr.To("fd1")))
	g.Expect(testScope(nil).nextFailureDomain()).To(BeNil())
}

func TestUpToDate(t *testing.T) {
	cc := &bootstrapv1.ClusterConfiguration{APIServer: bootstrapv1.APIServer{ControlPlaneComponent: bootstrapv1.ControlPlaneComponent{ExtraArgs: map[string]string{"v": "2"}}}}
	ccJSON, _ := json.Marshal(cc)
	base := func() *controlplanev1.KubeadmControlPlane {
		return &controlplanev1.KubeadmControlPlane{Spec: controlplanev1.KubeadmControlPlaneSpec{
			Version: "v1.36.0",
			MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{InfrastructureRef: corev1.ObjectReference{
				APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "LocalMachineTemplate", Name: "tpl"}},
			KubeadmConfigSpec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: cc.DeepCopy(), JoinConfiguration: &bootstrapv1.JoinConfiguration{}},
		}}
	}
	m := func() *clusterv1.Machine {
		return machine("m", time.Hour, "", func(m *clusterv1.Machine) {
			m.Annotations[controlplanev1.KubeadmClusterConfigurationAnnotation] = string(ccJSON)
			m.Spec.InfrastructureRef.Kind = "LocalMachine"
		})
	}
	cfg := &bootstrapv1.KubeadmConfig{Spec: bootstrapv1.KubeadmConfigSpec{JoinConfiguration: &bootstrapv1.JoinConfiguration{
		Discovery: bootstrapv1.Discovery{BootstrapToken: &bootstrapv1.BootstrapTokenDiscovery{Token: "abc"}}}}}
	infra := &unstructured.Unstructured{}
	infra.SetAnnotations(map[string]string{clusterv1.TemplateClonedFromNameAnnotation: "tpl", clusterv1.TemplateClonedFromGroupKindAnnotation: "LocalMachineTemplate.infrastructure.cluster.x-k8s.io"})

	tests := []struct {
		name   string
		change func(*controlplanev1.KubeadmControlPlane, *clusterv1.Machine)
		want   string
	}{
		{name: "up to date", change: func(*controlplanev1.KubeadmControlPlane, *clusterv1.Machine) {}},
		{name: "version", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) { k.Spec.Version = "v1.37.0" }, want: "Version v1.36.0, v1.37.0 required"},
		{name: "same version without the v", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) { k.Spec.Version = "1.36.0" }},
		{name: "rolloutAfter passed", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.RolloutAfter = &metav1.Time{Time: epoch.Add(-time.Minute)}
		}, want: "KubeadmControlPlane spec.rolloutAfter expired"},
		{name: "rolloutAfter in the future", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.RolloutAfter = &metav1.Time{Time: epoch.Add(time.Minute)}
		}},
		{name: "certificates expire within certificatesExpiryDays", change: func(k *controlplanev1.KubeadmControlPlane, m *clusterv1.Machine) {
			k.Spec.RolloutBefore = &controlplanev1.RolloutBefore{CertificatesExpiryDays: ptr.To[int32](30)}
			m.Status.CertificatesExpiryDate = &metav1.Time{Time: epoch.Add(10 * 24 * time.Hour)}
		}, want: "Certificates will expire soon"},
		{name: "certificates expire later", change: func(k *controlplanev1.KubeadmControlPlane, m *clusterv1.Machine) {
			k.Spec.RolloutBefore = &controlplanev1.RolloutBefore{CertificatesExpiryDays: ptr.To[int32](7)}
			m.Status.CertificatesExpiryDate = &metav1.Time{Time: epoch.Add(10 * 24 * time.Hour)}
		}},
		{name: "cluster configuration", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.KubeadmConfigSpec.ClusterConfiguration.APIServer.ExtraArgs["v"] = "4"
		}, want: "KubeadmConfig is not up-to-date"},
		{name: "DNS is updated in place", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.KubeadmConfigSpec.ClusterConfiguration.DNS.ImageTag = "v1.12"
		}},
		{name: "files of the KubeadmConfig", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.KubeadmConfigSpec.Files = []bootstrapv1.File{{Path: "/etc/x", Content: "x"}}
		}, want: "KubeadmConfig is not up-to-date"},
		{name: "infrastructure template rotated", change: func(k *controlplanev1.KubeadmControlPlane, _ *clusterv1.Machine) {
			k.Spec.MachineTemplate.InfrastructureRef.Name = "tpl-2"
		}, want: "LocalMachine is not up-to-date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			k, mm := base(), m()
			tt.change(k, mm)
			r := upToDate(k, mm, cfg.DeepCopy(), infra, epoch)
			if tt.want == "" {
				g.Expect(r.condition).To(BeEmpty(), strings.Join(r.log, "; "))
				return
			}
			g.Expect(r.condition).To(ContainElement(tt.want))
		})
	}
}

func TestPodState(t *testing.T) {
	running := func(ready corev1.ConditionStatus, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: statuses,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		status corev1.ConditionStatus
		reason string
		msg    string
	}{
		{name: "running and ready", pod: running(corev1.ConditionTrue), status: corev1.ConditionTrue, reason: "Running"},
		{name: "crash looping", pod: running(corev1.ConditionFalse, corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}), status: corev1.ConditionFalse, reason: "Failed", msg: "CrashLoopBackOff"},
		{name: "starting", pod: running(corev1.ConditionFalse, corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}),
			status: corev1.ConditionFalse, reason: "Provisioning", msg: "ContainerCreating"},
		{name: "not ready yet", pod: running(corev1.ConditionFalse), status: corev1.ConditionFalse, reason: "Provisioning", msg: "Waiting for startup or readiness probes"},
		{name: "pending", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, status: corev1.ConditionFalse, reason: "Provisioning", msg: "Waiting to be scheduled"},
		{name: "failed", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, status: corev1.ConditionFalse, reason: "Failed", msg: "All the containers have been terminated"},
		{name: "unknown", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodUnknown}}, status: corev1.ConditionUnknown, reason: "InspectionFailed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			h := podState(tt.pod)
			g.Expect(h.status).To(Equal(tt.status))
			g.Expect(h.reason2).To(Equal(tt.reason))
			if tt.msg != "" {
				g.Expect(h.message).To(Equal(tt.msg))
			}
		})
	}
}

func TestCheckRetryLimits(t *testing.T) {
	last := func(ago time.Duration, retries int) func(*clusterv1.Machine) {
		return func(m *clusterv1.Machine) {
			d := &remediationData{Machine: "old", Timestamp: metav1.NewTime(epoch.Add(-ago)), RetryCount: retries}
			m.Annotations[controlplanev1.RemediationForAnnotation] = d.String()
		}
	}
	strategy := &controlplanev1.RemediationStrategy{MaxRetry: ptr.To[int32](2), RetryPeriod: metav1.Duration{Duration: 10 * time.Minute}}
	tests := []struct {
		name      string
		m         *clusterv1.Machine
		ok        bool
		retries   int
		reasonSub string
	}{
		{name: "first remediation", m: machine("m", time.Hour, ""), ok: true},
		{name: "previous remediation older than minHealthyPeriod", m: machine("m", time.Hour, "", last(2*time.Hour, 2)), ok: true},
		{name: "retry within retryPeriod waits", m: machine("m", time.Hour, "", last(5*time.Minute, 0)), reasonSub: "RetryPeriod"},
		{name: "retry after retryPeriod", m: machine("m", time.Hour, "", last(20*time.Minute, 1)), ok: true, retries: 2},
		{name: "maxRetry reached", m: machine("m", time.Hour, "", last(20*time.Minute, 2)), reasonSub: "MaxRetry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := testScope(nil, tt.m)
			s.kcp.Spec.RemediationStrategy = strategy
			data, ok, _, msg := checkRetryLimits(s, tt.m)
			g.Expect(ok).To(Equal(tt.ok), msg)
			if tt.ok {
				g.Expect(data.RetryCount).To(Equal(tt.retries))
				g.Expect(data.Machine).To(Equal("m"))
			} else {
				g.Expect(msg).To(ContainSubstring(tt.reasonSub))
			}
		})
	}
}

func TestCanSafelyRemoveEtcdMember(t *testing.T) {
	members := []*etcd.Member{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}}
	tests := []struct {
		name    string
		healthy []string
		victim  string
		want    bool
	}{
		{name: "the other two are healthy", healthy: []string{"b", "c"}, victim: "a", want: true},
		{name: "one of the other two is unhealthy", healthy: []string{"a", "b"}, victim: "a", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var ms []*clusterv1.Machine
			for _, n := range []string{"a", "b", "c"} {
				m := machine(n, time.Hour, "")
				for _, h := range tt.healthy {
					if h == n {
						conditions.MarkTrue(m, controlplanev1.MachineEtcdMemberHealthyCondition)
					}
				}
				ms = append(ms, m)
			}
			s := testScope(nil, ms...)
			s.etcdMembers = members
			g.Expect(canSafelyRemoveEtcdMember(s, s.machines[tt.victim])).To(Equal(tt.want))
		})
	}
}

func TestRemediateFirst(t *testing.T) {
	g := NewWithT(t)
	noNode := machine("no-node", time.Minute, "", func(m *clusterv1.Machine) { m.Status.NodeRef = nil })
	annotated := machine("annotated", time.Minute, "", healthyMachine, func(m *clusterv1.Machine) { m.Annotations[clusterv1.RemediateMachineAnnotation] = "" })
	etcdDown := machine("etcd-down", time.Minute, "", healthyMachine, func(m *clusterv1.Machine) {
		conditions.MarkFalse(m, controlplanev1.MachineEtcdMemberHealthyCondition, "x", clusterv1.ConditionSeverityError, "down")
	})
	old := machine("old", time.Hour, "", healthyMachine)
	g.Expect(remediateFirst(annotated, noNode, true)).To(BeTrue())
	g.Expect(remediateFirst(noNode, etcdDown, true)).To(BeTrue())
	g.Expect(remediateFirst(etcdDown, old, true)).To(BeTrue())
	g.Expect(remediateFirst(old, etcdDown, false)).To(BeTrue(), "without stacked etcd the oldest goes first")
}

func TestMachineName(t *testing.T) {
	g := NewWithT(t)
	kcp := &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	name, err := machineName(kcp, "c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(name).To(MatchRegexp(`^cp-[a-z0-9]{5}$`))
	kcp.Spec.MachineNamingStrategy = &controlplanev1.MachineNamingStrategy{Template: "{{ .cluster.name }}-ctrl-{{ .random }}"}
	name, err = machineName(kcp, "c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(name).To(MatchRegexp(`^c1-ctrl-[a-z0-9]{5}$`))
	kcp.Spec.MachineNamingStrategy.Template = strings.Repeat("x", 70) + "{{ .random }}"
	name, err = machineName(kcp, "c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(name).To(HaveLen(63))
	kcp.Spec.MachineNamingStrategy.Template = "{{ .kubeadmControlPlane.name }}"
	_, err = machineName(kcp, "c1")
	g.Expect(err).To(MatchError(ContainSubstring("{{ .random }} is missing")))
}

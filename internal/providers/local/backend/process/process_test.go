package process

import (
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
	"github.com/capstan-dev/capstan/internal/supervisor"
)

func TestComputeStatus(t *testing.T) {
	running := supervisor.State{Running: true, Pid: 1, Starts: 1}
	tests := []struct {
		name      string
		etcd, api supervisor.State
		apiReady  bool
		want      backend.ClusterStatus
	}{
		{name: "ready", etcd: running, api: running, apiReady: true, want: backend.ClusterStatus{Ready: true}},
		{name: "not started yet", want: backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Starting etcd and kube-apiserver"}},
		{name: "API server not ready", etcd: running, api: running,
			want: backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Waiting for kube-apiserver to be ready"}},
		{name: "API server port taken", etcd: running, api: supervisor.State{Err: &portInUseError{port: 6443}},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "Port 6443 of kube-apiserver is in use by another process"}},
		{name: "etcd port taken", etcd: supervisor.State{Err: fmt.Errorf("checking: %w", &portInUseError{port: 2379})},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "Port 2379 of etcd is in use by another process"}},
		{name: "API server crashed", etcd: running, api: supervisor.State{Starts: 1, Exits: 1, Err: errors.New("signal: killed")},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "kube-apiserver exited (signal: killed); restarting it"}},
		{name: "etcd crashed", etcd: supervisor.State{Starts: 2, Exits: 2, Err: errors.New("exit status 1")}, api: running, apiReady: true,
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "etcd exited (exit status 1); restarting it"}},
		{name: "etcd cannot start", etcd: supervisor.State{Err: errors.New("starting etcd: no such file")},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "etcd cannot start: starting etcd: no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(computeStatus(tt.etcd, tt.api, tt.apiReady)).To(Equal(tt.want))
		})
	}
}

func TestDesiredNode(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now()
	cp := desiredNode(backend.Node{Name: "cp-0", ProviderID: "local://ns/c/cp-0", KubeletVersion: "v1.37.1", ControlPlane: true, FailureDomain: "fd1"}, now)
	g.Expect(cp.Labels).To(HaveKeyWithValue("kubernetes.io/hostname", "cp-0"))
	g.Expect(cp.Labels).To(HaveKeyWithValue("node-role.kubernetes.io/control-plane", ""))
	g.Expect(cp.Labels).To(HaveKeyWithValue("topology.kubernetes.io/zone", "fd1"))
	g.Expect(cp.Spec.Taints).To(ConsistOf(corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}))
	g.Expect(cp.Spec.ProviderID).To(Equal("local://ns/c/cp-0"))
	g.Expect(cp.Status.NodeInfo.KubeletVersion).To(Equal("v1.37.1"))
	g.Expect(cp.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}))
	g.Expect(cp.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))

	worker := desiredNode(backend.Node{Name: "w-0"}, now)
	g.Expect(worker.Labels).NotTo(HaveKey("node-role.kubernetes.io/control-plane"))
	g.Expect(worker.Labels).NotTo(HaveKey("topology.kubernetes.io/zone"))
	g.Expect(worker.Spec.Taints).To(BeEmpty())

	// A status differing only in heartbeat times is up to date; another kubelet version is not.
	later := desiredNodeStatus(backend.Node{Name: "cp-0", KubeletVersion: "v1.37.1"}, metav1.NewTime(now.Add(time.Hour)))
	g.Expect(statusUpToDate(cp.Status, later)).To(BeTrue())
	upgraded := desiredNodeStatus(backend.Node{Name: "cp-0", KubeletVersion: "v1.38.0"}, now)
	g.Expect(statusUpToDate(cp.Status, upgraded)).To(BeFalse())
	notReady := cp.Status.DeepCopy()
	notReady.Conditions[3].Status = corev1.ConditionUnknown
	g.Expect(statusUpToDate(*notReady, cp.Status)).To(BeFalse())
}

func TestState(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	st, err := readState(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st).To(Equal(state{}))
	g.Expect(writeState(dir, state{APIServerPort: 40001, EtcdPort: 40002})).To(Succeed())
	st, err = readState(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st).To(Equal(state{APIServerPort: 40001, EtcdPort: 40002}))
}

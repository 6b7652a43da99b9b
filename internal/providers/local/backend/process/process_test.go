package process

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

func TestComputeStatus(t *testing.T) {
	running := procState{Running: true, Pid: 1}
	tests := []struct {
		name      string
		etcd, api procState
		apiReady  bool
		want      backend.ClusterStatus
	}{
		{name: "ready", etcd: running, api: running, apiReady: true, want: backend.ClusterStatus{Ready: true}},
		{name: "not started yet", want: backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Starting etcd and kube-apiserver"}},
		{name: "API server not ready", etcd: running, api: running,
			want: backend.ClusterStatus{Reason: infrav1.ProcessesStartingReason, Message: "Waiting for kube-apiserver to be ready"}},
		{name: "API server port taken", etcd: running, api: procState{PortInUse: 6443, LastError: "port 6443 is in use by another process"},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "Port 6443 of kube-apiserver is in use by another process"}},
		{name: "etcd port taken", etcd: procState{PortInUse: 2379}, want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "Port 2379 of etcd is in use by another process"}},
		{name: "API server crashed", etcd: running, api: procState{Restarts: 1, LastError: "signal: killed"},
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "kube-apiserver exited (signal: killed); restarting it"}},
		{name: "etcd crashed", etcd: procState{Restarts: 2, LastError: "exit status 1"}, api: running, apiReady: true,
			want: backend.ClusterStatus{Reason: infrav1.ProcessesFailedReason, Message: "etcd exited (exit status 1); restarting it"}},
		{name: "etcd cannot start", etcd: procState{LastError: "starting etcd: no such file"},
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

func TestKillStale(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	// A process holding the directory on its command line, as etcd does with --data-dir=<dir>/etcd.
	stale := exec.Command("sh", "-c", "sleep 60; true", filepath.Join(dir, "etcd"))
	g.Expect(stale.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() { _ = stale.Wait(); close(exited) }()
	t.Cleanup(func() { _ = stale.Process.Kill() })
	// An unrelated process whose pid a stale pid file might name.
	other := exec.Command("sleep", "60")
	g.Expect(other.Start()).To(Succeed())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	g.Expect(os.WriteFile(filepath.Join(dir, "kube-apiserver.pid"), []byte(strconv.Itoa(other.Process.Pid)), 0o600)).To(Succeed())
	killed, err := killStale(dir, "kube-apiserver", 5*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeFalse(), "a process that does not hold the directory is left alone")
	g.Expect(other.ProcessState).To(BeNil())
	g.Expect(filepath.Join(dir, "kube-apiserver.pid")).NotTo(BeAnExistingFile())

	g.Expect(os.WriteFile(filepath.Join(dir, "etcd.pid"), []byte(strconv.Itoa(stale.Process.Pid)), 0o600)).To(Succeed())
	killed, err = killStale(dir, "etcd", 5*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeTrue())
	g.Eventually(exited, 5*time.Second).Should(BeClosed())

	killed, err = killStale(dir, "etcd", time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeFalse(), "no pid file, nothing to kill")
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
